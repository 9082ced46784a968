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
///
/// JIT compilation is off for the platform's sessions: Postgres compiles a statement whose
/// estimated cost passes `jit_above_cost`, and the reporting figures' estimates (set-returning
/// calls estimated at 1,000 rows each) passed it: 1.1 s of compiling to run a 170 ms statement
/// (measured). Every statement here is short; none gains from it.
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
        .connect_with(
            options
                .application_name("villa-platform")
                .options([("jit", "off")]),
        )
        .await
}

/// The readiness probe's question to Postgres: does it answer a statement?
pub async fn ping(pool: &PgPool) -> Result<(), sqlx::Error> {
    sqlx::query("SELECT 1").execute(pool).await.map(drop)
}

/// [`ping`] on a connection already held (the reporting health reads more on it after).
pub async fn ping_conn(conn: &mut sqlx::PgConnection) -> Result<(), sqlx::Error> {
    sqlx::query("SELECT 1").execute(conn).await.map(drop)
}

/// Whether Postgres refused a transaction only because of what ran beside it: a deadlock it
/// broke (`40P01`) or a serialization failure (`40001`). Such a transaction can be run again as
/// it was, and succeeds once the other has finished.
pub fn is_transient_conflict(err: &sqlx::Error) -> bool {
    matches!(err, sqlx::Error::Database(db) if matches!(db.code().as_deref(), Some("40P01" | "40001")))
}

/// How many times a transaction refused for a [transient conflict](is_transient_conflict) is
/// run before the refusal is reported.
pub const TRANSACTION_ATTEMPTS: u32 = 5;

/// The pause before attempt `attempt` (from 2) of a refused transaction: a few milliseconds,
/// growing, with jitter so that the transactions that collided do not collide again.
pub fn retry_pause(attempt: u32) -> Duration {
    let base = 5u64 << attempt.min(6);
    let jitter = u64::from(uuid::Uuid::new_v4().as_bytes()[0]) % base.max(1);
    Duration::from_millis(base + jitter)
}
