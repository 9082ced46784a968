//! Process start-up shared by every binary: structured logs and shutdown signals.

use std::io::IsTerminal;

use tokio_util::sync::CancellationToken;
use tracing_subscriber::{EnvFilter, fmt, prelude::*};

/// The log filter when `RUST_LOG` is not set.
pub const DEFAULT_LOG_FILTER: &str = "info";

/// Structured logs: JSON in production (one object per line for the log shipper), readable
/// lines in development, coloured only when stdout is a terminal (a pipe, a file or a log
/// collector gets no escape codes). `RUST_LOG` filters; the default is [`DEFAULT_LOG_FILTER`].
pub fn init_logging(json: bool) {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_LOG_FILTER));
    let colour = std::io::stdout().is_terminal();
    // A second init (tests running several processes' code in one binary) keeps the first.
    let _ = subscriber(filter, json, colour, std::io::stdout).try_init();
}

/// The subscriber every process logs through, writing to `writer` without colour; tests use it
/// to read what a process would log. Each JSON line carries the fields of the spans it was
/// written in (the request span's `request_id`).
pub fn log_subscriber<W>(
    filter: EnvFilter,
    json: bool,
    writer: W,
) -> Box<dyn tracing::Subscriber + Send + Sync>
where
    W: for<'w> fmt::MakeWriter<'w> + Send + Sync + 'static,
{
    subscriber(filter, json, false, writer)
}

fn subscriber<W>(
    filter: EnvFilter,
    json: bool,
    colour: bool,
    writer: W,
) -> Box<dyn tracing::Subscriber + Send + Sync>
where
    W: for<'w> fmt::MakeWriter<'w> + Send + Sync + 'static,
{
    let registry = tracing_subscriber::registry().with(filter);
    if json {
        Box::new(
            registry.with(
                fmt::layer()
                    .json()
                    .flatten_event(true)
                    .with_current_span(true)
                    .with_span_list(true)
                    .with_writer(writer),
            ),
        )
    } else {
        Box::new(registry.with(fmt::layer().compact().with_ansi(colour).with_writer(writer)))
    }
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
