//! Queue `mail`: e-mail to people outside the platform (owners), sent through `SMTP_URL` from a
//! job, never inside a request: a slow or refusing relay delays nothing else, and a failed send
//! is tried again with backoff.

use std::time::Duration;

use lettre::{
    AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor, message::header::ContentType,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::{Job, JobContext, JobError, Queue};

/// The relay and the sender, built once per worker from `SMTP_URL` and `SMTP_FROM`.
#[derive(Clone)]
pub struct Mailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: lettre::message::Mailbox,
}

impl std::fmt::Debug for Mailer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mailer")
            .field("from", &self.from.to_string())
            .finish_non_exhaustive()
    }
}

impl Mailer {
    /// `Ok(None)` when `SMTP_URL` is not set: no e-mail is sent. A URL or a sender lettre
    /// refuses is an error naming the variable, which the `mail` jobs fail with (an operator
    /// fixes the setting and retries them); the other workers run on.
    pub fn from_settings(
        settings: &domain::settings::MailSettings,
    ) -> Result<Option<Self>, String> {
        let Some(url) = settings.smtp_url.as_deref() else {
            return Ok(None);
        };
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(url)
            // lettre's message may quote the URL, password included: say only what is wrong.
            .map_err(|_| "SMTP_URL is not an SMTP address lettre accepts (smtp:// or smtps://, host, port, ?tls=)".to_owned())?
            .timeout(Some(Duration::from_secs(30)))
            .build();
        let from = settings
            .from
            .parse()
            .map_err(|e| format!("SMTP_FROM is not an e-mail address: {e}"))?;
        Ok(Some(Self { transport, from }))
    }

    async fn send(&self, to: &str, subject: &str, text: String) -> Result<(), JobError> {
        let to: lettre::message::Mailbox = to
            .parse()
            .map_err(|e| JobError::fatal(format!("the owner's e-mail address {to:?}: {e}")))?;
        let message = Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(subject)
            .header(ContentType::TEXT_PLAIN)
            .body(text)
            .map_err(|e| JobError::fatal(format!("building the message: {e}")))?;
        self.transport.send(message).await.map_err(|e| {
            if e.is_permanent() {
                JobError::fatal(format!("the relay refused the message: {e}"))
            } else {
                JobError::retry(format!("sending through SMTP_URL: {e}"))
            }
        })?;
        Ok(())
    }
}

/// E-mails the owner the link of an approval request
/// (`POST /maintenance/work-orders/{id}/approval-requests`), once: a request answered, replaced,
/// expired or already sent is skipped. The send and its record are not one transaction: a worker
/// that dies between them sends the e-mail again on the rerun.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct SendApprovalRequest {
    pub approval_id: Uuid,
}

impl Job for SendApprovalRequest {
    const KIND: &'static str = "mail.approval_request";
    const QUEUE: Queue = Queue::Mail;
    const MAX_ATTEMPTS: i32 = 8;
    const BACKOFF_BASE: Duration = Duration::from_secs(10);

    fn dedupe_key(&self) -> Option<String> {
        Some(format!("{}:{}", Self::KIND, self.approval_id))
    }

    async fn run(self, ctx: JobContext) -> Result<Value, JobError> {
        let mailer = match &ctx.services.mailer {
            Ok(Some(mailer)) => mailer,
            Ok(None) => return Ok(json!({"skipped": "SMTP_URL is not set on this worker"})),
            Err(problem) => return Err(JobError::fatal(problem.clone())),
        };
        let mut conn = ctx.pool.acquire().await?;
        let Some(mail) =
            domain::maintenance::approvals::mail_to_send(&mut conn, self.approval_id).await?
        else {
            return Ok(json!({"skipped": "nothing to send: answered, replaced, expired or sent"}));
        };
        let url = ctx
            .services
            .approval_links
            .url(&mail.base_url, self.approval_id);
        let subject = format!("Approval needed: {} at {}", mail.title, mail.villa_name);
        let text = format!(
            "Hello,\n\n\
             A repair at {villa} needs your approval before the work starts:\n\n\
             {title}\n\
             Estimate billed to you: {estimate}\n\n\
             See the details and approve or decline here:\n{url}\n\n\
             The link works once and until {expires}.\n\n\
             If you have questions, call your villa manager.\n",
            villa = mail.villa_name,
            title = mail.title,
            estimate = domain::maintenance::approvals::describe(&mail.estimate),
            expires = mail.expires_at.format("%Y-%m-%d %H:%M UTC"),
        );
        mailer.send(&mail.email_to, &subject, text).await?;
        domain::maintenance::approvals::mark_mail_sent(&mut conn, self.approval_id).await?;
        Ok(json!({"sentTo": mail.email_to}))
    }
}
