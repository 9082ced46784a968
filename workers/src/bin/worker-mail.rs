//! Worker for queue family `mail`: e-mail to owners (approval requests), through `SMTP_URL`.

use jobs::{JobRegistry, mail};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let registry = JobRegistry::new().register::<mail::SendApprovalRequest>();
    workers::runtime::main("mail", registry).await
}
