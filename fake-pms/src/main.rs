//! `fake-pms`: the loopback fake of Hostaway's API v1 as a process, for development
//! (`scripts/run` starts it and points `PMS_*` at it), the fuzzing pass and the benchmark. Never
//! in the Procfile: production talks to the real PMS. Its switches are the `/_fake/*` routes.

use std::io::IsTerminal;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use chrono::NaiveDate;
use clap::Parser;
use fake_pms::{FakePms, FakePmsConfig, WebhookTarget};
use tracing_subscriber::EnvFilter;

#[derive(Parser, Debug)]
#[command(
    name = "fake-pms",
    about = "A loopback fake of Hostaway's public API v1 with seed data"
)]
struct Args {
    /// Port to listen on.
    #[arg(long, default_value_t = 8099)]
    port: u16,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    host: IpAddr,
    /// Listings to seed.
    #[arg(long, default_value_t = 36)]
    listings: usize,
    /// Reservations to seed (arrivals from a year ago to a year ahead).
    #[arg(long, default_value_t = 1200)]
    reservations: usize,
    /// Seed of the generated data.
    #[arg(long, default_value_t = 17)]
    seed: u64,
    /// Lift Hostaway's rate limits (15 requests per 10 s per IP, 20 per account).
    #[arg(long)]
    no_rate_limit: bool,
    /// The account id a token is issued for.
    #[arg(long, default_value = "10450")]
    client_id: String,
    /// The API key a token is issued for.
    #[arg(long, default_value = "fake-pms-secret")]
    client_secret: String,
    /// How long a new token waits before it is valid, in milliseconds (Hostaway: 1000).
    #[arg(long, default_value_t = 1000)]
    token_delay_ms: u64,
    /// The day the seed data is centred on (YYYY-MM-DD); default today (UTC).
    #[arg(long)]
    today: Option<NaiveDate>,
    /// Where a reservation changed through `/_fake/reservations` is posted as Hostaway's unified
    /// webhook (`scripts/run`: the API's `/reporting/webhooks/hostaway`); none when unset.
    #[arg(long, env = "FAKE_PMS_WEBHOOK_URL")]
    webhook_url: Option<String>,
    /// The HTTP Basic user sent with each webhook (the platform's `PMS_WEBHOOK_USER`); with an
    /// empty user and password none is sent. Ignored without a webhook URL.
    #[arg(long, env = "FAKE_PMS_WEBHOOK_USER", default_value = "")]
    webhook_user: String,
    /// The HTTP Basic password sent with each webhook (the platform's `PMS_WEBHOOK_PASSWORD`);
    /// the environment variable keeps it out of the process list.
    #[arg(
        long,
        env = "FAKE_PMS_WEBHOOK_PASSWORD",
        default_value = "",
        hide_env_values = true
    )]
    webhook_password: String,
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    // Colour only on a terminal: scripts/run pipes the output through sed.
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .compact()
        .with_ansi(std::io::stdout().is_terminal())
        .init();

    let args = Args::parse();
    if let Some(url) = &args.webhook_url
        && let Err(e) = reqwest::Url::parse(url)
    {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("--webhook-url {url} is not a URL: {e}"),
        ));
    }
    let mut config = FakePmsConfig {
        listings: args.listings,
        reservations: args.reservations,
        seed: args.seed,
        client_id: args.client_id,
        client_secret: args.client_secret,
        token_delay: Duration::from_millis(args.token_delay_ms),
        today: args.today,
        webhook: args.webhook_url.map(|url| WebhookTarget {
            url,
            user: args.webhook_user,
            password: args.webhook_password,
        }),
        ..FakePmsConfig::default()
    };
    if args.no_rate_limit {
        config = config.without_limits();
    }
    let limits = if args.no_rate_limit {
        "lifted"
    } else {
        "15 per 10 s per IP, 20 per 10 s per account"
    };
    let (client_id, client_secret) = (config.client_id.clone(), config.client_secret.clone());
    let webhook = config
        .webhook
        .as_ref()
        .map_or_else(|| "none".to_owned(), |t| t.url.clone());
    let fake = FakePms::bind(SocketAddr::new(args.host, args.port), config).await?;
    tracing::info!(
        "fake PMS (Hostaway API v1) at {} with PMS_CLIENT_ID={client_id} PMS_CLIENT_SECRET={client_secret}: \
         {} listings, {} reservations, rate limits {limits}; switches under http://{}/_fake/; \
         webhooks to {webhook}",
        fake.base_url,
        args.listings,
        args.reservations,
        fake.addr,
    );
    shutdown_signal().await;
    Ok(())
}

/// Completes on SIGINT or SIGTERM (what `scripts/run` sends on exit).
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
