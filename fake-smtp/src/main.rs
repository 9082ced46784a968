//! `fake-smtp --port 2525 --dir .dev/mail`: the development stand-in for an SMTP relay. Each
//! message it receives is written to the folder as a `.eml` file and named on stdout.

use clap::Parser;

#[derive(Parser)]
#[command(about = "Loopback SMTP stand-in: keeps every message as a .eml file")]
struct Args {
    /// Port on 127.0.0.1.
    #[arg(long, default_value_t = 2525)]
    port: u16,
    /// Where the messages are written.
    #[arg(long, default_value = ".dev/mail")]
    dir: std::path::PathBuf,
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let args = Args::parse();
    let mailbox = fake_smtp::Mailbox::with_folder(args.dir.clone())?;
    let addr = fake_smtp::start(args.port, mailbox).await?;
    println!(
        "fake-smtp: listening on {addr}, messages in {}",
        args.dir.display()
    );
    std::future::pending::<()>().await;
    Ok(())
}
