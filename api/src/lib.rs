//! The HTTP API (binary `villa-api`): one module per surface (`management`, ... ; the onboarding
//! surface's `/api/health` is in `platform::health`), each with one file per resource.

pub mod approvals;
pub mod auth;
pub mod console;
pub mod error;
pub mod extract;
pub mod files;
pub mod http;
pub mod inventory;
pub mod maintenance;
pub mod management;
pub mod monitoring;
pub mod onboarding;
pub mod openapi;
pub mod paging;
pub mod platform;
pub mod query;
pub mod reporting;
pub mod state;
pub mod surface;
pub mod uploads;

use anyhow::Context as _;
use axum::{Router, extract::DefaultBodyLimit, middleware};
use domain::settings::{ApiSettings, CoreSettings};
use tokio::net::TcpListener;
use tower::ServiceBuilder;
use tower_http::{
    catch_panic::CatchPanicLayer, limit::RequestBodyLimitLayer, timeout::TimeoutLayer,
};
use utoipa::OpenApi as _;
use utoipa_axum::router::OpenApiRouter;
use utoipa_swagger_ui::SwaggerUi;

use crate::{error::AppError, state::AppState};

/// Every route, with auth, error rendering and the cross-cutting layers. `dev_key` mounts the
/// development sign-in (development only). The web console is read from `CONSOLE_DIR`.
pub fn app(state: AppState, dev_key: Option<ed25519_dalek::SigningKey>) -> Router {
    let (router, openapi) = routes(state.core.app_env.is_development()).split_for_parts();
    let openapi = openapi::finish(openapi);
    let route_catalog = onboarding::docs::catalog(&openapi);
    let mut router = router.merge(SwaggerUi::new("/swagger-ui").url("/openapi.json", openapi));
    if let Some(key) = dev_key {
        router = router.merge(platform::dev::router(key, state.clone()));
    }
    match console::ConsoleFiles::load(&state) {
        Ok(files) => router = router.merge(console::router(files)),
        Err(e) => tracing::error!(error = %e, "cannot read the web console's files (CONSOLE_DIR)"),
    }
    let api = &state.api;
    let body_limit = api.body_limit_bytes;
    router
        .fallback(|| async { AppError::NotFound("route") })
        // The state for the reporting surface's rate limits, a route layer that
        // `reporting::router()` adds before the state exists.
        .layer(axum::Extension(state.clone()))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            auth::authorize,
        ))
        // Outside authorize, so that refused requests are monitored too.
        .layer(middleware::from_fn_with_state(
            state.clone(),
            monitoring::record,
        ))
        .layer(axum::Extension(route_catalog))
        .layer(DefaultBodyLimit::max(body_limit))
        .layer(
            ServiceBuilder::new()
                // Outermost: whatever is left unread of a request body is read (or the
                // connection closed, saying so) before the answer goes out.
                .layer(middleware::from_fn(
                    http::unread_body::keep_connection_usable,
                ))
                // Request id (the client's if fit, else a UUID), request log and HTTP metrics.
                .layer(middleware::from_fn(http::log_requests))
                .layer(middleware::from_fn(http::preflight_no_content))
                .layer(http::cors(api))
                .layer(middleware::from_fn(error::render_errors))
                // A bug that panics answers a 500 in the surface's shape instead of a reset.
                .layer(CatchPanicLayer::custom(error::panic_response))
                .layer(TimeoutLayer::with_status_code(
                    axum::http::StatusCode::REQUEST_TIMEOUT,
                    api.request_timeout,
                ))
                .layer(RequestBodyLimitLayer::new(body_limit)),
        )
        .with_state(state)
}

/// Every documented route (the debug routes only in `development`), with its OpenAPI document.
fn routes(development: bool) -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .merge(platform::health::router())
        .merge(platform::metrics::router())
        .merge(platform::jobs::router())
        .merge(platform::me::router())
        .merge(management::router())
        .merge(maintenance::router())
        .merge(inventory::router())
        .merge(reporting::router())
        .merge(onboarding::router(development))
        .merge(approvals::router())
}

/// The OpenAPI document served at `/openapi.json` in production (`villa-api openapi` prints it,
/// for client generators).
pub fn openapi_document() -> utoipa::openapi::OpenApi {
    openapi::finish(routes(false).split_for_parts().1)
}

/// Builds the state: pool, queues, verifier. Applies migrations when `migrate` is set (only the
/// API process does, at start).
pub async fn state(
    core: CoreSettings,
    api: ApiSettings,
    migrate: bool,
) -> anyhow::Result<AppState> {
    let pool = domain::db::connect(&core.database_url, core.db_max_connections)
        .await
        .context("DATABASE_URL: cannot connect to Postgres")?;
    if migrate {
        domain::MIGRATOR
            .run(&pool)
            .await
            .context("applying migrations")?;
    }
    let queues = jobs::JobQueues::new(&core.redis_url, &core.redis_prefix)
        .context("REDIS_URL is not a Redis address")?;
    Ok(AppState::new(state::Shared::new(pool, queues, core, api)))
}

/// Serves until `shutdown` completes, then lets in-flight requests finish.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(
        listener,
        app.into_make_service_with_connect_info::<std::net::SocketAddr>(),
    )
    .with_graceful_shutdown(shutdown)
    .await
}
