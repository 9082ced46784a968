//! The PMS access token, one per account (PMS base URL and client id), shared by every worker so
//! that it is fetched once and renewed once, not per process or per request. Only ciphertext is
//! stored: the caller encrypts and decrypts with the platform's field cipher
//! ([`crate::crypto::FieldCipher`]) and decides when to renew; the token fetch itself is
//! serialised by the caller (an advisory lock on the account), not here.

use chrono::{DateTime, Utc};
use sqlx::PgConnection;

use crate::Result;

/// A stored token.
#[derive(Clone, PartialEq, Eq)]
pub struct StoredToken {
    /// The token encrypted with `FieldCipher`.
    pub token: Vec<u8>,
    /// Not before: Hostaway's tokens are valid about a second after they are issued.
    pub usable_from: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

// Never the token's bytes in logs, even encrypted.
impl std::fmt::Debug for StoredToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredToken")
            .field("token", &"..")
            .field("usable_from", &self.usable_from)
            .field("expires_at", &self.expires_at)
            .finish()
    }
}

/// The account's token, if one is stored (expired or not: the caller decides).
pub async fn get(conn: &mut PgConnection, account: &str) -> Result<Option<StoredToken>> {
    let row: Option<(Vec<u8>, DateTime<Utc>, DateTime<Utc>)> =
        sqlx::query_as("SELECT token, usable_from, expires_at FROM pms_tokens WHERE account = $1")
            .bind(account)
            .fetch_optional(&mut *conn)
            .await?;
    Ok(row.map(|(token, usable_from, expires_at)| StoredToken {
        token,
        usable_from,
        expires_at,
    }))
}

/// Stores the account's token, replacing the one stored.
pub async fn put(conn: &mut PgConnection, account: &str, t: &StoredToken) -> Result<()> {
    sqlx::query(
        "INSERT INTO pms_tokens (account, token, usable_from, expires_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (account) DO UPDATE SET token = EXCLUDED.token, usable_from = EXCLUDED.usable_from,
             expires_at = EXCLUDED.expires_at, created_at = now()",
    )
    .bind(account)
    .bind(&t.token)
    .bind(t.usable_from)
    .bind(t.expires_at)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Forgets the account's token if it is still `token` (the ciphertext read): a token the PMS
/// refused. A token another worker stored meanwhile is kept.
pub async fn discard(conn: &mut PgConnection, account: &str, token: &[u8]) -> Result<()> {
    sqlx::query("DELETE FROM pms_tokens WHERE account = $1 AND token = $2")
        .bind(account)
        .bind(token)
        .execute(&mut *conn)
        .await?;
    Ok(())
}
