//! Hostaway's unified webhooks, as the fake sends them: when a reservation is stored through
//! [`Control::add_reservation`] or [`Control::update_reservation`] (so also through
//! `/_fake/reservations`) and a [`WebhookTarget`] is set, `{event, accountId, data}` is posted to
//! it, `data` the stored record exactly as `GET /v1/reservations/{id}` answers it.
//!
//! Each delivery runs in a task of its own, so a change never waits for the receiver and no lock
//! is held while it is posted. Two quick changes may then arrive in either order: their
//! `updatedOn` differ (the store stamps every change later than the newest record), which is
//! what a receiver orders them by, as it must with Hostaway, which also repeats deliveries.
//!
//! Retries follow Hostaway's rule (its documentation, "Unified webhooks"): a network error, a
//! 5xx or a 429 is retried, any other non-2xx answer (3xx and 4xx alike) is a permanent failure.
//! Hostaway retries 3 times within about an hour, the first after about a minute; the fake
//! retries 3 times within a few seconds ([`RETRY_DELAYS`]), so that a developer sees the outcome
//! at once. A delivery waits at most [`DELIVERY_TIMEOUT`] for its answer, what Hostaway waits.
//! Basic credentials are sent when the target has a user or a password, as Hostaway sends them
//! when a login and password are configured.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::body::Bytes;
use serde::Serialize;
use serde_json::Value;

use crate::{Control, Shared, WebhookTarget, read};

/// How long a delivery waits for the receiver's answer (Hostaway: 20 s).
pub const DELIVERY_TIMEOUT: Duration = Duration::from_secs(20);

/// The waits before the retries of a delivery that failed for a transient reason.
pub const RETRY_DELAYS: [Duration; 3] = [
    Duration::from_millis(250),
    Duration::from_secs(1),
    Duration::from_secs(3),
];

/// What happened to a reservation, as the unified webhook names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Event {
    Created,
    Updated,
}

impl Event {
    fn name(self) -> &'static str {
        match self {
            Event::Created => "reservation.created",
            Event::Updated => "reservation.updated",
        }
    }
}

/// A delivery's body: Hostaway's unified webhook.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Payload<'a> {
    event: &'static str,
    account_id: Value,
    data: &'a Value,
}

/// Counts a delivery in `webhooksPending` while it lives, even if its task is dropped (a runtime
/// that ends).
struct Pending(Arc<Shared>);

impl Pending {
    fn new(shared: &Arc<Shared>) -> Pending {
        shared.webhooks_pending.fetch_add(1, Ordering::SeqCst);
        Pending(shared.clone())
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        self.0.webhooks_pending.fetch_sub(1, Ordering::SeqCst);
    }
}

/// What one attempt came to.
enum Attempt {
    Delivered(u16),
    /// Worth another attempt: a network error or timeout, a 5xx, a 429.
    Transient(String),
    /// Not worth another: any other answer that is not a 2xx, or a URL that cannot be posted to.
    Permanent(String),
}

impl Control {
    /// Posts `event` with `record` (as stored) to the webhook target, if one is set, in a task
    /// of its own. Counted in `webhooksPending` until it ends, then in `webhooksDelivered` or
    /// `webhooksFailed`.
    pub(crate) fn deliver(&self, event: Event, record: &Value) {
        let Some(target) = read(&self.shared.webhook).clone() else {
            return;
        };
        let client_id = &self.shared.config.client_id;
        // The account id is a number in Hostaway's deliveries; a configured id that is not one
        // is sent as it is.
        let account: Value = client_id
            .trim()
            .parse::<i64>()
            .map_or_else(|_| Value::String(client_id.clone()), Value::from);
        let id = record.get("id").and_then(Value::as_i64);
        let payload = Payload {
            event: event.name(),
            account_id: account,
            data: record,
        };
        let body = match serde_json::to_vec(&payload) {
            Ok(bytes) => Bytes::from(bytes),
            Err(e) => {
                tracing::error!(error = %e, "webhook not sent: the delivery does not serialise");
                self.shared.webhooks_failed.fetch_add(1, Ordering::SeqCst);
                return;
            }
        };
        let handle = self
            .shared
            .runtime
            .clone()
            .or_else(|| tokio::runtime::Handle::try_current().ok());
        let Some(handle) = handle else {
            tracing::error!(
                event = event.name(),
                "webhook not sent: no tokio runtime to deliver it on"
            );
            self.shared.webhooks_failed.fetch_add(1, Ordering::SeqCst);
            return;
        };
        let pending = Pending::new(&self.shared);
        handle.spawn(async move {
            let shared = &pending.0;
            let delivered = send(shared, &target, event, id, body).await;
            let counter = if delivered {
                &shared.webhooks_delivered
            } else {
                &shared.webhooks_failed
            };
            counter.fetch_add(1, Ordering::SeqCst);
        });
    }
}

/// Posts `body` until it is delivered, fails for good, or the retries are spent; logs every
/// attempt's outcome. True when it was delivered.
async fn send(
    shared: &Arc<Shared>,
    target: &WebhookTarget,
    event: Event,
    id: Option<i64>,
    body: Bytes,
) -> bool {
    let client = match shared.http_client() {
        Ok(client) => client,
        Err(e) => {
            tracing::error!(error = %e, event = event.name(), "webhook not sent: no HTTP client");
            return false;
        }
    };
    let event = event.name();
    let url = target.url.as_str();
    for attempt in 1..=RETRY_DELAYS.len() + 1 {
        let mut request = client
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.clone());
        if !target.user.is_empty() || !target.password.is_empty() {
            request = request.basic_auth(&target.user, Some(&target.password));
        }
        let outcome = match request.send().await {
            Ok(response) => {
                let status = response.status();
                if status.is_success() {
                    Attempt::Delivered(status.as_u16())
                } else if status.is_server_error()
                    || status == reqwest::StatusCode::TOO_MANY_REQUESTS
                {
                    Attempt::Transient(format!("answered {}", status.as_u16()))
                } else {
                    Attempt::Permanent(format!("answered {}", status.as_u16()))
                }
            }
            Err(e) if e.is_builder() => Attempt::Permanent(e.to_string()),
            Err(e) => Attempt::Transient(e.to_string()),
        };
        match outcome {
            Attempt::Delivered(status) => {
                tracing::info!(
                    event,
                    reservation = id,
                    url,
                    attempt,
                    status,
                    "webhook delivered"
                );
                return true;
            }
            Attempt::Permanent(why) => {
                tracing::warn!(
                    event,
                    reservation = id,
                    url,
                    attempt,
                    reason = %why,
                    "webhook refused, not retried (Hostaway retries only network errors, 5xx and 429)"
                );
                return false;
            }
            Attempt::Transient(why) => match RETRY_DELAYS.get(attempt - 1) {
                Some(&delay) => {
                    tracing::warn!(
                        event,
                        reservation = id,
                        url,
                        attempt,
                        reason = %why,
                        retry_in_ms = delay.as_millis() as u64,
                        "webhook not delivered, retrying"
                    );
                    tokio::time::sleep(delay).await;
                }
                None => {
                    tracing::warn!(
                        event,
                        reservation = id,
                        url,
                        attempt,
                        reason = %why,
                        "webhook not delivered, retries spent"
                    );
                    return false;
                }
            },
        }
    }
    false
}
