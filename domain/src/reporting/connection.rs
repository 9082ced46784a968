//! What the last PMS call said of the connection, for `/reporting/health`: one row every process
//! shares. Every PMS call's outcome is recorded ([`record`]), but written only when the state
//! changes or the row is older than 30 seconds, so a sync's thousands of calls cost a few writes.
//! Health reads it ([`read`]) and, when it is stale, one API replica at a time probes the PMS
//! ([`claim_probe`]): never one PMS call per health request.

use std::time::Duration;

use chrono::{DateTime, Utc};
use sqlx::PgConnection;

use crate::Result;

/// The PMS connection as last seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionState {
    /// `connected` or `disconnected`.
    pub state: String,
    /// Why it is disconnected.
    pub error: Option<String>,
    pub checked_at: DateTime<Utc>,
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// Records a PMS call's outcome: written when the state or its error changes, or when the row is
/// older than 30 seconds (so that `checked_at` stays fresh while the PMS is in use).
pub async fn record(conn: &mut PgConnection, connected: bool, error: Option<&str>) -> Result<()> {
    let state = if connected {
        "connected"
    } else {
        "disconnected"
    };
    let error = if connected { None } else { error };
    // A conditional update takes no lock on a row it leaves, unlike an upsert's DO UPDATE: the
    // calls of a busy sync do not queue on the row. The insert happens once, for the first call.
    sqlx::query(
        "WITH updated AS (
            UPDATE pms_connection SET state = $1, error = $2, checked_at = now()
            WHERE id AND (state <> $1 OR error IS DISTINCT FROM $2 OR checked_at < now() - interval '30 seconds')
            RETURNING 1)
         INSERT INTO pms_connection (id, state, error, checked_at)
         SELECT true, $1, $2, now() WHERE NOT EXISTS (SELECT 1 FROM pms_connection)
         ON CONFLICT (id) DO NOTHING",
    )
    .bind(state)
    .bind(error)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// The connection as last recorded; `None` before any PMS call.
pub async fn read(conn: &mut PgConnection) -> Result<Option<ConnectionState>> {
    let row: Option<(String, Option<String>, DateTime<Utc>)> =
        sqlx::query_as("SELECT state, error, checked_at FROM pms_connection")
            .fetch_optional(&mut *conn)
            .await?;
    Ok(row.map(|(state, error, checked_at)| ConnectionState {
        state,
        error,
        checked_at,
    }))
}

/// Whether the caller may probe the PMS now: true for at most one caller per `every`, across
/// every process. Before any PMS call the row is created (`disconnected`, "not checked yet"),
/// to be overwritten by the probe's [`record`].
pub async fn claim_probe(conn: &mut PgConnection, every: Duration) -> Result<bool> {
    // Concurrent claims meet on the row's lock; the update re-checks the claim time on the
    // winner's version, so only one of them takes the turn.
    Ok(sqlx::query_scalar(
        "WITH claimed AS (
            UPDATE pms_connection SET probe_claimed_at = now()
            WHERE id AND probe_claimed_at <= now() - $1::bigint * interval '1 millisecond'
            RETURNING 1),
         created AS (
            INSERT INTO pms_connection (id, state, error, checked_at, probe_claimed_at)
            SELECT true, 'disconnected', 'not checked yet', now(), now()
            WHERE NOT EXISTS (SELECT 1 FROM pms_connection)
            ON CONFLICT (id) DO NOTHING
            RETURNING 1)
         SELECT EXISTS (SELECT 1 FROM claimed) OR EXISTS (SELECT 1 FROM created)",
    )
    .bind(millis(every))
    .fetch_one(&mut *conn)
    .await?)
}
