//! Process start-up shared by every binary: structured logs and shutdown signals.

use tokio_util::sync::CancellationToken;
use tracing_subscriber::{EnvFilter, fmt, prelude::*};

/// Structured logs: JSON in production (one object per line for the log shipper), readable
/// lines in development. `RUST_LOG` filters; the default is `info`.
pub fn init_logging(json: bool) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let registry = tracing_subscriber::registry().with(filter);
    // A second init (tests running several processes' code in one binary) keeps the first.
    let _ = if json {
        registry
            .with(
                fmt::layer()
                    .json()
                    .flatten_event(true)
                    .with_current_span(true),
            )
            .try_init()
    } else {
        registry.with(fmt::layer().compact()).try_init()
    };
}

/// Completes on SIGTERM or SIGINT.
pub async fn shutdown_signal() {
    {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            match signal(SignalKind::terminate()) {
                Ok(mut term) => {
                    tokio::select! {
                        _ = tokio::signal::ctrl_c() => {},
                        _ = term.recv() => {},
                    }
                }
                Err(_) => {
                    let _ = tokio::signal::ctrl_c().await;
                }
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
        tracing::info!("shutdown signal received");
    }
}

/// A token cancelled on SIGTERM or SIGINT.
pub fn shutdown_token() -> CancellationToken {
    let token = CancellationToken::new();
    let t = token.clone();
    tokio::spawn(async move {
        shutdown_signal().await;
        t.cancel();
    });
    token
}
