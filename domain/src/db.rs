use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{Connection as _, PgPool, migrate::Migrator};

/// The workspace's migrations. Only the API applies them at start (see `api::state`), so that
/// several workers starting at once never race on the schema.
pub static MIGRATOR: Migrator = sqlx::migrate!("../migrations");

/// A pooled connection idle longer than this is pinged before use.
const PING_IF_IDLE_FOR: Duration = Duration::from_secs(10);

/// Opens a pool. `max_connections` is per process; the default settings keep the sum of all
/// processes of a small deployment well under Postgres's default limit of 100.
///
/// sqlx pings every connection before handing it out by default: one more round trip to
/// Postgres per request, which halved the read path's throughput. Here only a connection that
/// sat idle (and may have been cut, e.g. by a database restart) is checked.
pub async fn connect(database_url: &str, max_connections: u32) -> Result<PgPool, sqlx::Error> {
    let options: PgConnectOptions = database_url.parse()?;
    PgPoolOptions::new()
        .max_connections(max_connections)
        .min_connections(1)
        .acquire_timeout(Duration::from_secs(10))
        .test_before_acquire(false)
        .before_acquire(|conn, meta| {
            Box::pin(async move {
                if meta.idle_for > PING_IF_IDLE_FOR {
                    conn.ping().await?;
                }
                Ok(true)
            })
        })
        .connect_with(options.application_name("villa-platform"))
        .await
}
