use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{PgPool, migrate::Migrator};

/// The workspace's migrations. Only the API applies them at start (see `api::serve`), so that
/// several workers starting at once never race on the schema.
pub static MIGRATOR: Migrator = sqlx::migrate!("../migrations");

/// Opens a pool. `max_connections` is per process; the default settings keep the sum of all
/// processes of a small deployment well under Postgres's default limit of 100.
pub async fn connect(database_url: &str, max_connections: u32) -> Result<PgPool, sqlx::Error> {
    let options: PgConnectOptions = database_url.parse()?;
    PgPoolOptions::new()
        .max_connections(max_connections)
        .min_connections(1)
        .acquire_timeout(Duration::from_secs(10))
        .connect_with(options.application_name("villa-platform"))
        .await
}
