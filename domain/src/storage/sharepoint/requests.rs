//! One Graph request: signed with the token (a refused one renewed once), throttling waited out
//! and failures tried again.

use std::time::Duration;

use chrono::Utc;
use reqwest::header::RETRY_AFTER;
use reqwest::{RequestBuilder, Response, StatusCode};

use super::answers::failure_text;
use super::{
    BACKEND, MAX_BACKOFF, MAX_RETRIES, MAX_THROTTLE_WAIT, MAX_THROTTLED, OP_GET,
    READ_THROTTLE_WAIT, RETRY_BASE, SharePointStore, THROTTLE_BASE, backend,
};
use crate::remote::{describe, jitter, parse_retry_after};
use crate::storage::{StorageError, StoragePath};

/// How an answer is taken before the caller reads it.
#[derive(Debug, PartialEq, Eq)]
enum Class {
    /// For the caller to read (success or a refusal it interprets).
    Answer,
    /// Throttled: wait (as long as `Retry-After` says, when it does) and try again.
    Throttled(Option<Duration>),
    /// A server failure: try again after a backoff, a limited number of times.
    Failed,
}

fn classify(status: StatusCode, retry_after: Option<Duration>) -> Class {
    if status == StatusCode::TOO_MANY_REQUESTS {
        Class::Throttled(retry_after)
    } else if status == StatusCode::SERVICE_UNAVAILABLE && retry_after.is_some() {
        // SharePoint answers its throttling this way too.
        Class::Throttled(retry_after)
    } else if status.is_server_error() {
        Class::Failed
    } else {
        Class::Answer
    }
}

impl SharePointStore {
    /// One Graph request with the token; a 401 drops the token and tries once more with a new
    /// one (a token can be revoked before its time).
    pub(super) async fn call<F>(
        &self,
        op: &'static str,
        path: &StoragePath,
        build: F,
    ) -> Result<Response, StorageError>
    where
        F: Fn() -> RequestBuilder,
    {
        let bearer = self.token(op, path).await?;
        let response = self
            .execute(op, path, Some(bearer.as_str()), &build)
            .await?;
        if response.status() != StatusCode::UNAUTHORIZED {
            return Ok(response);
        }
        self.forget_token(&bearer).await;
        let bearer = self.token(op, path).await?;
        self.execute(op, path, Some(bearer.as_str()), &build).await
    }

    /// Sends the request `build` makes until it has an answer for the caller: throttling is
    /// waited out (within [`MAX_THROTTLED`] and [`MAX_THROTTLE_WAIT`]), failures tried again
    /// [`MAX_RETRIES`] times.
    pub(super) async fn execute<F>(
        &self,
        op: &'static str,
        path: &StoragePath,
        bearer: Option<&str>,
        build: F,
    ) -> Result<Response, StorageError>
    where
        F: Fn() -> RequestBuilder,
    {
        let mut throttled = 0u32;
        let mut throttled_for = Duration::ZERO;
        let mut failures = 0u32;
        loop {
            let mut request = build();
            if let Some(bearer) = bearer {
                request = request.bearer_auth(bearer);
            }
            let (class, reason) = match request.send().await {
                Ok(response) => {
                    let status = response.status();
                    let retry_after = response
                        .headers()
                        .get(RETRY_AFTER)
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| parse_retry_after(v, Utc::now()));
                    match classify(status, retry_after) {
                        Class::Answer => return Ok(response),
                        Class::Failed => {
                            let body = response.bytes().await.unwrap_or_default();
                            (Class::Failed, format!("{status}: {}", failure_text(&body)))
                        }
                        throttle => (throttle, status.to_string()),
                    }
                }
                Err(error) => (Class::Failed, describe(error)),
            };
            let wait = match class {
                Class::Throttled(asked) => {
                    let wait = asked.unwrap_or_else(|| backoff(THROTTLE_BASE, throttled, jitter()));
                    throttled += 1;
                    let waited = throttled_for.saturating_add(wait);
                    let budget = if op == OP_GET {
                        READ_THROTTLE_WAIT
                    } else {
                        MAX_THROTTLE_WAIT
                    };
                    if throttled > MAX_THROTTLED || waited > budget {
                        // Past what one call waits: the job comes back when Graph asks, without
                        // using up an attempt ([`StorageError::Throttled`]).
                        tracing::info!(
                            op,
                            %path,
                            %reason,
                            throttled,
                            ?wait,
                            "Microsoft Graph is still throttling; handing the wait to the job"
                        );
                        return Err(StorageError::Throttled {
                            backend: BACKEND,
                            op,
                            path: path.to_string(),
                            retry_after: wait,
                        });
                    }
                    throttled_for = waited;
                    tracing::info!(
                        op,
                        %path,
                        %reason,
                        ?wait,
                        "Microsoft Graph throttled a request; waiting as asked"
                    );
                    wait
                }
                _ if failures >= MAX_RETRIES => {
                    return Err(backend(
                        op,
                        path,
                        format!("{reason} (after {} tries)", failures + 1),
                    ));
                }
                _ => {
                    let wait = backoff(RETRY_BASE, failures, jitter());
                    failures += 1;
                    tracing::warn!(
                        op,
                        %path,
                        %reason,
                        retry = failures,
                        ?wait,
                        "Microsoft Graph request failed; retrying"
                    );
                    wait
                }
            };
            tokio::time::sleep(wait).await;
        }
    }
}

/// [`crate::remote::backoff`] capped at [`MAX_BACKOFF`].
fn backoff(base: Duration, retry: u32, unit: f64) -> Duration {
    crate::remote::backoff(base, retry, unit, MAX_BACKOFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throttling_is_waited_out_and_failures_retried() {
        let secs = Some(Duration::from_secs(3));
        assert_eq!(
            classify(StatusCode::TOO_MANY_REQUESTS, secs),
            Class::Throttled(secs)
        );
        assert_eq!(
            classify(StatusCode::TOO_MANY_REQUESTS, None),
            Class::Throttled(None)
        );
        assert_eq!(
            classify(StatusCode::SERVICE_UNAVAILABLE, secs),
            Class::Throttled(secs)
        );
        assert_eq!(
            classify(StatusCode::SERVICE_UNAVAILABLE, None),
            Class::Failed
        );
        assert_eq!(classify(StatusCode::BAD_GATEWAY, None), Class::Failed);
        for answer in [
            StatusCode::OK,
            StatusCode::NOT_FOUND,
            StatusCode::CONFLICT,
            StatusCode::UNAUTHORIZED,
            StatusCode::RANGE_NOT_SATISFIABLE,
        ] {
            assert_eq!(classify(answer, None), Class::Answer, "{answer}");
        }
    }

    #[test]
    fn backoff_doubles_within_its_jitter_and_is_capped() {
        assert_eq!(backoff(RETRY_BASE, 0, 1.0), RETRY_BASE);
        assert_eq!(backoff(RETRY_BASE, 2, 1.0), RETRY_BASE * 4);
        assert_eq!(backoff(RETRY_BASE, 2, 0.0), RETRY_BASE * 2);
        assert_eq!(backoff(RETRY_BASE, 30, 1.0), MAX_BACKOFF);
    }
}
