//! The metrics listener of a worker or the scheduler: `GET /metrics` on `METRICS_PORT`, in
//! Prometheus' text format, behind the API's token rule (`METRICS_TOKEN`; open without one in
//! development only). Unset `METRICS_PORT` (or `METRICS_ENABLED=false`): no listener, and no
//! recorder either, so recording costs nothing.
//!
//! What it shows is this process's own: its job counters and histograms, its PMS and document
//! store figures, its database pool. The queue gauges come from the API alone (read from
//! Postgres, they are the same whichever process computes them).

use anyhow::Context as _;
use axum::{
    Router,
    extract::State,
    http::{HeaderMap, StatusCode, header},
    response::{IntoResponse, Response},
    routing::get,
};
use domain::{
    metrics::Exporter,
    settings::{CoreSettings, MetricsSettings},
};
use sqlx::PgPool;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// Serves `/metrics` on `METRICS_PORT` in a task of its own, until `shutdown` (nothing when
/// there is nothing to serve). The port is bound before this returns, so a port that cannot
/// be bound stops the process at start; a failure later is logged (the process's work goes on).
pub async fn spawn(
    settings: &CoreSettings,
    pool: PgPool,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let Some((listener, exporter)) = listen(settings).await? else {
        return Ok(());
    };
    let (metrics, production) = (settings.metrics.clone(), is_production(settings));
    tokio::spawn(async move {
        if let Err(error) = serve_on(listener, metrics, production, exporter, pool, shutdown).await
        {
            tracing::error!("the metrics listener stopped: {error:#}");
        }
    });
    Ok(())
}

/// The bound `METRICS_PORT` and the installed recorder; `None` when the port is unset or metrics
/// are off.
async fn listen(settings: &CoreSettings) -> anyhow::Result<Option<(TcpListener, Exporter)>> {
    let Some(port) = settings.metrics.port else {
        return Ok(None);
    };
    let Some(exporter) = domain::metrics::install(&settings.metrics) else {
        return Ok(None);
    };
    let listener = TcpListener::bind(("0.0.0.0", port))
        .await
        .with_context(|| format!("METRICS_PORT: cannot listen on {port}"))?;
    tracing::info!(port, "metrics listening");
    Ok(Some((listener, exporter)))
}

fn is_production(settings: &CoreSettings) -> bool {
    !settings.app_env.is_development()
}

/// Serves `/metrics` on `listener` until `shutdown` (tests bind port 0 and read its address).
pub async fn serve_on(
    listener: TcpListener,
    metrics: MetricsSettings,
    production: bool,
    exporter: Exporter,
    pool: PgPool,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let app = Router::new()
        .route("/metrics", get(render))
        .with_state(Served {
            metrics,
            production,
            exporter,
            pool,
        });
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown.cancelled_owned())
        .await
        .context("serving /metrics")
}

#[derive(Clone)]
struct Served {
    metrics: MetricsSettings,
    production: bool,
    exporter: Exporter,
    pool: PgPool,
}

async fn render(State(served): State<Served>, headers: HeaderMap) -> Response {
    let authorization = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    if let Err(refusal) =
        domain::metrics::check_token(&served.metrics, served.production, authorization)
    {
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            refusal.message(),
        )
            .into_response();
    }
    let body = served
        .exporter
        .render_with(|| domain::metrics::record_pool(&served.pool))
        .await;
    // As the API's `/metrics`: every scrape is a fresh reading, never one a proxy kept.
    (
        [
            (header::CONTENT_TYPE, domain::metrics::TEXT_FORMAT),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;

    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    use super::*;

    /// Serves on a free port of the loopback interface; the pool is never connected (the pool
    /// gauges read its counts only).
    async fn serving(token: Option<&str>, production: bool) -> (SocketAddr, CancellationToken) {
        let settings = MetricsSettings {
            token: token.map(str::to_owned),
            ..MetricsSettings::default()
        };
        let exporter = domain::metrics::install(&settings).expect("metrics are on by default");
        let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let pool = PgPool::connect_lazy("postgres://metrics@127.0.0.1:1/none").unwrap();
        let shutdown = CancellationToken::new();
        tokio::spawn(serve_on(
            listener,
            settings,
            production,
            exporter,
            pool,
            shutdown.clone(),
        ));
        (addr, shutdown)
    }

    /// One HTTP/1.1 exchange: the status and the whole answer, head included.
    async fn get(addr: SocketAddr, path: &str, authorization: Option<&str>) -> (u16, String) {
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        let authorization = authorization
            .map(|a| format!("Authorization: {a}\r\n"))
            .unwrap_or_default();
        let request = format!(
            "GET {path} HTTP/1.1\r\nHost: metrics\r\nConnection: close\r\n{authorization}\r\n"
        );
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.unwrap();
        let status = answer
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("no status line in {answer:?}"));
        (status, answer)
    }

    #[tokio::test]
    async fn production_answers_the_configured_token_only() {
        let (addr, shutdown) = serving(Some("scrape-secret"), true).await;
        let (status, answer) = get(addr, "/metrics", Some("Bearer scrape-secret")).await;
        assert_eq!(status, 200, "{answer}");
        let lower = answer.to_ascii_lowercase();
        assert!(
            lower.contains("content-type: text/plain; version=0.0.4"),
            "{answer}"
        );
        assert!(lower.contains("cache-control: no-store"), "{answer}");
        assert!(answer.contains("villa_db_pool_max_connections"), "{answer}");
        for refused in [None, Some("Bearer wrong"), Some("Basic scrape-secret")] {
            let (status, answer) = get(addr, "/metrics", refused).await;
            assert_eq!(status, 401, "{refused:?}: {answer}");
        }
        assert_eq!(
            get(addr, "/other", Some("Bearer scrape-secret")).await.0,
            404
        );
        shutdown.cancel();
    }

    #[tokio::test]
    async fn without_a_token_metrics_are_open_in_development_and_closed_in_production() {
        let (addr, shutdown) = serving(None, false).await;
        assert_eq!(get(addr, "/metrics", None).await.0, 200);
        shutdown.cancel();
        let (addr, shutdown) = serving(None, true).await;
        let (status, answer) = get(addr, "/metrics", Some("Bearer anything")).await;
        assert_eq!(status, 401, "{answer}");
        shutdown.cancel();
    }
}
