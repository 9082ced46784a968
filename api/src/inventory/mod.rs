//! The inventory surface, mounted at `/inventory` (spec/operations-apis.md): one file per
//! resource. Lists answer `{data, pagination}`; single records, creates and actions answer the
//! record; errors are `{error: {code, message, details}}`, a missing record `NOT_FOUND` naming
//! it, a validation failure `VALIDATION_ERROR` with every bad field in `details.fields`.

pub mod alerts;
pub mod categories;
pub mod items;
pub mod locations;
pub mod movements;
pub mod properties;
pub mod reports;
pub mod transfers;

use domain::Problems;
use jobs::{Enqueued, alerts::EvaluateStockAlerts};
use sqlx::PgConnection;
use utoipa_axum::router::OpenApiRouter;
use uuid::Uuid;

use crate::{error::AppError, state::AppState};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .merge(items::router())
        .merge(movements::router())
        .merge(transfers::router())
        .merge(properties::router())
        .merge(locations::router())
        .merge(categories::router())
        .merge(alerts::router())
        .merge(reports::router())
}

/// A `category` filter: a category code in any letter case, which must name a category (a
/// problem on `category` otherwise). Its descendants are included where it is used.
pub async fn category_filter(
    conn: &mut PgConnection,
    problems: &mut Problems,
    raw: Option<&str>,
) -> Result<Option<String>, AppError> {
    let Some(code) = raw.map(str::trim).filter(|s| !s.is_empty()) else {
        return Ok(None);
    };
    let code = code.to_uppercase();
    if !domain::inventory::items::category_exists(conn, &code).await? {
        problems.push(
            "category",
            "invalid_value",
            format!("no category has the code {code}; GET /inventory/categories lists them"),
        );
        return Ok(None);
    }
    Ok(Some(code))
}

pub fn condition_param() -> utoipa::openapi::schema::Object {
    crate::query::one_of(domain::inventory::CONDITIONS)
}

/// Enqueues, in the transaction that changed them, the alert evaluation of each item (one waits
/// per item at most), in one statement; push the answer once the transaction has committed.
pub async fn evaluate_alerts_of(
    conn: &mut PgConnection,
    items: impl IntoIterator<Item = Uuid>,
) -> Result<Vec<Enqueued>, AppError> {
    let mut batch = jobs::JobBatch::default();
    for item in items {
        batch.add(&EvaluateStockAlerts::item(item))?;
    }
    Ok(batch.enqueue(conn).await?)
}
