//! The sign-in: the app-only token, fetched from Entra ID, kept and renewed.

use std::time::{Duration, Instant};

use reqwest::header::CONTENT_TYPE;
use serde_json::Value;

use super::answers::failure_text;
use super::paths::form_encode;
use super::{CALL_TIMEOUT, GRAPH_SCOPE, SharePointStore, TOKEN_MARGIN, Token, backend};
use crate::remote::describe;
use crate::storage::{StorageError, StoragePath};

impl SharePointStore {
    /// The token in use, fetched when there is none or it is about to expire.
    pub(super) async fn token(
        &self,
        op: &'static str,
        path: &StoragePath,
    ) -> Result<String, StorageError> {
        let mut cached = self.inner.token.lock().await;
        if let Some(token) = cached.as_ref().filter(|t| Instant::now() < t.renew_at) {
            return Ok(token.bearer.clone());
        }
        let url = self.token_url();
        let form = form_encode(&[
            ("client_id", self.inner.client_id.as_str()),
            ("client_secret", self.inner.client_secret.as_str()),
            ("scope", GRAPH_SCOPE),
            ("grant_type", "client_credentials"),
        ]);
        let response = self
            .execute(op, path, None, || {
                self.inner
                    .http
                    .post(&url)
                    .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
                    .body(form.clone())
                    .timeout(CALL_TIMEOUT)
            })
            .await?;
        let status = response.status();
        let body = response
            .bytes()
            .await
            .map_err(|e| backend(op, path, format!("sign-in: {}", describe(e))))?;
        if !status.is_success() {
            return Err(backend(
                op,
                path,
                format!(
                    "sign-in to Microsoft Entra ID refused ({status}): {}",
                    failure_text(&body)
                ),
            ));
        }
        let (bearer, expires_in) = parse_token(&body).ok_or_else(|| {
            backend(
                op,
                path,
                "sign-in: the answer has no access_token and expires_in".to_owned(),
            )
        })?;
        *cached = Some(Token {
            bearer: bearer.clone(),
            renew_at: Instant::now() + keep_token_for(expires_in),
        });
        Ok(bearer)
    }

    /// Drops `bearer` if it is still the token in use (another task may have replaced it).
    pub(super) async fn forget_token(&self, bearer: &str) {
        let mut cached = self.inner.token.lock().await;
        if cached.as_ref().is_some_and(|t| t.bearer == bearer) {
            *cached = None;
        }
    }
}

/// The token and its lifetime in seconds (`expires_in` is a number, or a numeric string on
/// older endpoints).
fn parse_token(body: &[u8]) -> Option<(String, u64)> {
    let answer: Value = serde_json::from_slice(body).ok()?;
    let bearer = answer
        .get("access_token")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())?
        .to_owned();
    let expires_in = match answer.get("expires_in")? {
        Value::Number(n) => n.as_u64()?,
        Value::String(s) => s.trim().parse().ok()?,
        _ => return None,
    };
    Some((bearer, expires_in))
}

/// How long a token that lives `expires_in` seconds is used: until [`TOKEN_MARGIN`] before it
/// expires, or half its life when it is shorter than that.
fn keep_token_for(expires_in: u64) -> Duration {
    // Entra ID's tokens live about an hour; a day bounds what a broken answer could ask for.
    let life = Duration::from_secs(expires_in.min(24 * 3600));
    life.checked_sub(TOKEN_MARGIN)
        .filter(|keep| !keep.is_zero())
        .unwrap_or(life / 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_kept_until_shortly_before_they_expire() {
        let answer = br#"{"token_type":"Bearer","expires_in":3599,"ext_expires_in":3599,"access_token":"eyJ0"}"#;
        let (bearer, expires_in) = parse_token(answer).unwrap();
        assert_eq!((bearer.as_str(), expires_in), ("eyJ0", 3599));
        assert_eq!(keep_token_for(3599), Duration::from_secs(3599 - 300));
        // Shorter than the margin: half its life, never zero.
        assert_eq!(keep_token_for(120), Duration::from_secs(60));
        assert_eq!(keep_token_for(300), Duration::from_secs(150));
        // A lifetime no clock can add (a broken answer) is bounded, never an overflow.
        assert_eq!(
            keep_token_for(u64::MAX),
            Duration::from_secs(24 * 3600 - 300)
        );
        assert_eq!(
            parse_token(br#"{"expires_in":"3600","access_token":"t"}"#),
            Some(("t".to_owned(), 3600))
        );
        assert_eq!(
            parse_token(br#"{"expires_in":3600,"access_token":""}"#),
            None
        );
        assert_eq!(parse_token(br#"{"access_token":"t"}"#), None);
        assert_eq!(parse_token(b"<html>"), None);
    }
}
