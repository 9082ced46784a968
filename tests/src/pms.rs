//! Test support for the PMS synchronisation (`/reporting/sync/...`, `worker-pms`): the loopback
//! fake of Hostaway's API, settings that point the platform at it, the registry of the `pms`
//! queue, and triggering a sync then waiting for its end.
//!
//! Requests go out with a token of a subject of their own ([`request`]): the reporting rate
//! limits count per subject (`/sync/*` allows 5 a minute), and a test polling a run's status
//! must measure the sync, not the limiter. The limits themselves are tested with one subject.

use std::time::Duration;

use domain::settings::{PmsCredentials, PmsSettings};
use fake_pms::{FakePms, FakePmsConfig};
use jobs::{
    JobRegistry,
    pms::{ScheduleSync, SyncPms},
};
use reqwest::{Method, RequestBuilder, header::HeaderMap};
use serde_json::Value;
use uuid::Uuid;

use crate::{TestApp, json};

/// How long [`wait_finished`] waits for a run to end.
pub const SYNC_TIMEOUT: Duration = Duration::from_secs(60);

/// The fake PMS with its seed data (a few dozen listings, two years of reservations) and
/// Hostaway's rate limits on.
pub async fn start_fake() -> FakePms {
    FakePms::start(FakePmsConfig::default()).await
}

/// The fake PMS with `config` (its credentials must stay the default ones for [`settings_for`]).
pub async fn start_fake_with(config: FakePmsConfig) -> FakePms {
    FakePms::start(config).await
}

/// Settings of a platform whose PMS is `fake`: its address and credentials, short retry delays
/// (20 ms base, 5 retries), no rate limiter (`rate_limit` 0) and pages of 50; tests change what
/// they are about.
pub fn settings_for(fake: &FakePms) -> PmsSettings {
    let config = FakePmsConfig::default();
    PmsSettings {
        base_url: fake.base_url.clone(),
        credentials: Some(PmsCredentials {
            client_id: config.client_id,
            client_secret: config.client_secret,
        }),
        rate_limit: 0,
        page_size: 50,
        max_retries: 5,
        retry_base: Duration::from_millis(20),
        request_timeout: Duration::from_secs(10),
        ..PmsSettings::default()
    }
}

/// The jobs `worker-pms` runs.
pub fn pms_registry() -> JobRegistry {
    JobRegistry::new()
        .register::<SyncPms>()
        .register::<ScheduleSync>()
}

/// A request with a valid token for `role`, of a subject no other request used.
pub fn request(app: &TestApp, method: Method, path: &str, role: &str) -> RequestBuilder {
    let mut claims = app.idp.claims(&[role]);
    claims["sub"] = Value::String(format!("pms-test-{}", Uuid::new_v4().simple()));
    app.http
        .request(method, app.url(path))
        .bearer_auth(app.idp.sign("k1", &claims))
}

/// GET `path` as `role`: (status, JSON body).
pub async fn get(app: &TestApp, path: &str, role: &str) -> (u16, Value) {
    json(request(app, Method::GET, path, role).send().await.unwrap()).await
}

/// `POST /reporting/sync/trigger` with `body` as an admin: (status, JSON body, headers).
pub async fn trigger(app: &TestApp, body: &Value) -> (u16, Value, HeaderMap) {
    let res = request(app, Method::POST, "/reporting/sync/trigger", "admin")
        .json(body)
        .send()
        .await
        .unwrap();
    let headers = res.headers().clone();
    let (status, body) = json(res).await;
    (status, body, headers)
}

/// Polls `GET /reporting/sync/status/<sync_id>` until the run is COMPLETED or FAILED (at most
/// [`SYNC_TIMEOUT`]); answers its last status.
pub async fn wait_finished(app: &TestApp, sync_id: &str) -> Value {
    let path = format!("/reporting/sync/status/{sync_id}");
    let deadline = tokio::time::Instant::now() + SYNC_TIMEOUT;
    loop {
        let (status, run) = get(app, &path, "viewer").await;
        assert_eq!(status, 200, "{path}: {run}");
        if run["status"] == "COMPLETED" || run["status"] == "FAILED" {
            return run;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "sync {sync_id} not finished within {SYNC_TIMEOUT:?}: {run}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Triggers a sync (`{type, entities}`), expects 202, and waits for the run to end; answers its
/// status (COMPLETED or FAILED).
pub async fn trigger_and_wait(app: &TestApp, body: Value) -> Value {
    let (status, started, _) = trigger(app, &body).await;
    assert_eq!(status, 202, "trigger {body}: {started}");
    let id = started["syncId"]
        .as_str()
        .unwrap_or_else(|| panic!("no syncId in {started}"))
        .to_owned();
    wait_finished(app, &id).await
}
