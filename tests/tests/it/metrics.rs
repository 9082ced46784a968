//! Prometheus metrics (docs/operations.md): `/metrics` reads as Prometheus' text format,
//! counters move after requests and jobs, routes are labelled by template, the queue gauges
//! match the job table, the oldest-job age grows, the token is enforced in production; and the
//! id of the request that enqueued a job is on every log line of its run.
//!
//! The recorder is process-wide and the tests of this binary run side by side: a figure other
//! tests can move too is asserted to have grown by at least what this test did. The queue gauges
//! are each app's own (set from its database under the exporter's lock), so they are exact.

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use base64::Engine as _;
use jobs::{
    Job, JobContext, JobError, JobRegistry, Queue,
    documents::{CreateVillaTree, StoreDocument},
};
use reqwest::{Method, header};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sqlx::PgPool;
use tests::{
    TEST_METRICS_TOKEN, TestApp, TestAppOptions, eventually, job_status,
    prometheus_text::{self, Sample, value},
};
use tokio_util::sync::CancellationToken;
use tracing_subscriber::EnvFilter;
use uuid::Uuid;

use crate::onboarding::start;

const HTTP_REQUESTS: &str = "villa_http_requests_total";
const HTTP_DURATION_COUNT: &str = "villa_http_request_duration_seconds_count";
const HTTP_IN_FLIGHT: &str = "villa_http_requests_in_flight";
const JOBS_FINISHED: &str = "villa_jobs_finished_total";
const JOB_RUN_COUNT: &str = "villa_job_run_duration_seconds_count";
const JOB_WAIT_COUNT: &str = "villa_job_queue_wait_seconds_count";
const QUEUE_JOBS: &str = "villa_queue_jobs";
const QUEUE_OLDEST_AGE: &str = "villa_queue_oldest_job_age_seconds";

/// How much `name{labels}` grew between two scrapes (a series not shown yet counts as 0).
fn grew(before: &[Sample], after: &[Sample], name: &str, labels: &[(&str, &str)]) -> f64 {
    value(after, name, labels).unwrap_or(0.0) - value(before, name, labels).unwrap_or(0.0)
}

async fn insert_villa(pool: &PgPool, code: &str) -> Uuid {
    let id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO villas (id, villa_code, villa_name, city, country, bedrooms, property_type, status, is_active)
         VALUES ($1, $2, 'Villa Metrics', 'Ubud', 'Indonesia', 3, 'VILLA', 'APPROVED', true)",
    )
    .bind(id)
    .bind(code)
    .execute(pool)
    .await
    .unwrap();
    id
}

/// A QUEUED row on `queue`, written as an enqueue writes it, and pushed nowhere (no worker runs).
async fn insert_job(pool: &PgPool, queue: &'static str) -> Uuid {
    let id = Uuid::now_v7();
    let mut conn = pool.acquire().await.unwrap();
    let job = domain::job_store::NewJob {
        id,
        kind: "test.gauge_probe",
        queue,
        payload: json!({}),
        max_attempts: 1,
        dedupe_key: None,
    };
    domain::job_store::insert(&mut conn, &job)
        .await
        .unwrap()
        .expect("no dedupe key, so always inserted");
    id
}

async fn wait_status(pool: &PgPool, id: Uuid, status: &str, timeout: Duration) -> bool {
    eventually(timeout, || async {
        (job_status(pool, id).await.as_deref() == Some(status)).then_some(())
    })
    .await
    .is_some()
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn metrics_parse_and_http_counters_move_by_route_template(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let villa = insert_villa(&pool, "MET-001").await;
    let template = [("route", "/management/villas/{id}"), ("method", "GET")];

    let before = app.scrape().await;
    for _ in 0..3 {
        let res = app
            .get(&format!("/management/villas/{villa}"), "viewer")
            .await;
        assert_eq!(res.status(), 200);
    }
    // A path no route matches, with an id in it: counted, under no path of its own.
    let stray = Uuid::new_v4();
    let res = app.get(&format!("/no-such-route/{stray}"), "viewer").await;
    assert!(res.status().is_client_error(), "{}", res.status());
    let after = app.scrape().await;

    let ok = [
        ("route", "/management/villas/{id}"),
        ("method", "GET"),
        ("status", "2xx"),
    ];
    assert!(grew(&before, &after, HTTP_REQUESTS, &template) >= 3.0);
    assert!(grew(&before, &after, HTTP_REQUESTS, &ok) >= 3.0);
    assert!(grew(&before, &after, HTTP_DURATION_COUNT, &template) >= 3.0);
    assert!(grew(&before, &after, HTTP_REQUESTS, &[("route", "unmatched")]) >= 1.0);
    // The first scrape is counted under its own template, and requests in flight are shown.
    assert!(
        value(
            &after,
            HTTP_REQUESTS,
            &[("route", "/metrics"), ("method", "GET")]
        )
        .is_some()
    );
    // Present. Its value is checked by the API's unit tests, one request at a time: here every
    // test of the process shares it, and a request of another moving between threads while the
    // scrape reads them can make that reading one off.
    assert!(value(&after, HTTP_IN_FLIGHT, &[]).is_some());

    // Labels are templates and bounded sets, never a raw path or an id.
    let ids = [villa.to_string(), stray.to_string()];
    for sample in &after {
        for (label, v) in &sample.labels {
            assert!(
                !ids.iter().any(|id| v.contains(id.as_str())),
                "{} has an id in label {label}={v:?}",
                sample.name
            );
            if label == "route" {
                assert!(
                    v.starts_with('/') || v == "unmatched",
                    "{} has route {v:?}",
                    sample.name
                );
            }
        }
    }
}

/// Every queue's gauges against a count of the job table.
async fn assert_gauges_match_the_table(pool: &PgPool, samples: &[Sample]) {
    for queue in Queue::ALL {
        for (status, row_status) in [
            ("queued", "QUEUED"),
            ("running", "RUNNING"),
            ("failed", "FAILED"),
        ] {
            let expected: i64 =
                sqlx::query_scalar("SELECT count(*) FROM jobs WHERE queue = $1 AND status = $2")
                    .bind(queue.name())
                    .bind(row_status)
                    .fetch_one(pool)
                    .await
                    .unwrap();
            assert_eq!(
                value(
                    samples,
                    QUEUE_JOBS,
                    &[("queue", queue.name()), ("status", status)]
                ),
                Some(expected as f64),
                "queue {} {status}",
                queue.name()
            );
        }
    }
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn queue_gauges_match_the_job_table_with_workers_stopped(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let mut documents = Vec::new();
    for _ in 0..3 {
        documents.push(insert_job(&pool, Queue::Documents.name()).await);
    }
    let media = [
        insert_job(&pool, Queue::Media.name()).await,
        insert_job(&pool, Queue::Media.name()).await,
    ];
    insert_job(&pool, Queue::Exports.name()).await;

    let first = app.scrape().await;
    assert_gauges_match_the_table(&pool, &first).await;
    let queued = |samples: &[Sample], queue: &str| {
        value(
            samples,
            QUEUE_JOBS,
            &[("queue", queue), ("status", "queued")],
        )
    };
    assert_eq!(queued(&first, "documents"), Some(3.0));
    assert_eq!(queued(&first, "media"), Some(2.0));
    assert_eq!(queued(&first, "system"), Some(0.0));

    sqlx::query(
        "UPDATE jobs SET status = 'FAILED', attempts = 1, error = 'failed for the test',
                finished_at = now(), updated_at = now()
         WHERE id = $1",
    )
    .bind(documents[0])
    .execute(&pool)
    .await
    .unwrap();
    sqlx::query(
        "UPDATE jobs SET status = 'RUNNING', attempts = 1, locked_by = 'nobody',
                locked_until = now() + interval '1 hour', started_at = now(), updated_at = now()
         WHERE id = $1",
    )
    .bind(media[0])
    .execute(&pool)
    .await
    .unwrap();
    // Past METRICS_QUEUE_REFRESH_SECS (1 s in tests), the next scrape reads the table again.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let second = app.scrape().await;
    assert_gauges_match_the_table(&pool, &second).await;
    let shown = |queue: &str, status: &str| {
        value(&second, QUEUE_JOBS, &[("queue", queue), ("status", status)])
    };
    assert_eq!(shown("documents", "queued"), Some(2.0));
    assert_eq!(shown("documents", "failed"), Some(1.0));
    assert_eq!(shown("media", "queued"), Some(1.0));
    assert_eq!(shown("media", "running"), Some(1.0));
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn the_oldest_queued_age_grows(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    insert_job(&pool, Queue::Maintenance.name()).await;
    let age = |samples: &[Sample], queue: &str| {
        value(samples, QUEUE_OLDEST_AGE, &[("queue", queue)])
            .unwrap_or_else(|| panic!("no {QUEUE_OLDEST_AGE} for queue {queue}"))
    };

    let first = app.scrape().await;
    let young = age(&first, "maintenance");
    assert!((0.0..30.0).contains(&young), "{young}");
    tokio::time::sleep(Duration::from_millis(2200)).await;
    let second = app.scrape().await;
    let older = age(&second, "maintenance");
    assert!(older - young >= 1.5, "{young} then {older}");
    // A queue with no job waiting reads 0.
    assert_eq!(age(&second, "exports"), 0.0);
    assert_eq!(age(&first, "exports"), 0.0);
}

/// A job kind of this test's own (no other test moves its series): its first run fails when
/// asked, then it succeeds.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct MetricsProbe {
    fail_first: bool,
}

impl Job for MetricsProbe {
    const KIND: &'static str = "test.metrics_probe";
    const QUEUE: Queue = Queue::System;
    const MAX_ATTEMPTS: i32 = 3;
    const BACKOFF_BASE: Duration = Duration::from_millis(100);

    async fn run(self, ctx: JobContext) -> Result<Value, JobError> {
        if self.fail_first && ctx.attempt == 1 {
            return Err(JobError::retry("the first run fails, as the test asked"));
        }
        Ok(json!({ "attempt": ctx.attempt }))
    }
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn job_counters_move_after_a_job_runs(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let worker = app.worker(JobRegistry::new().register::<MetricsProbe>());
    let mut tx = pool.begin().await.unwrap();
    let enqueued = MetricsProbe { fail_first: true }
        .enqueue(&mut tx)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    app.queues.push(&[enqueued]).await;
    assert!(wait_status(&pool, enqueued.id, "SUCCEEDED", Duration::from_secs(30)).await);

    // The worker runs in this process, so its figures are in the API's scrape too. The counter
    // moves just after the row says SUCCEEDED: wait for it.
    let kind = [("queue", "system"), ("kind", MetricsProbe::KIND)];
    let succeeded = [
        ("queue", "system"),
        ("kind", MetricsProbe::KIND),
        ("outcome", "succeeded"),
    ];
    let samples = eventually(Duration::from_secs(10), || async {
        let samples = app.scrape().await;
        (value(&samples, JOBS_FINISHED, &succeeded) == Some(1.0)).then_some(samples)
    })
    .await
    .expect("the succeeded run was never counted");
    let retried = [("kind", MetricsProbe::KIND), ("outcome", "retried")];
    assert_eq!(value(&samples, JOBS_FINISHED, &retried), Some(1.0));
    assert_eq!(
        value(
            &samples,
            JOBS_FINISHED,
            &[("kind", MetricsProbe::KIND), ("outcome", "failed")]
        ),
        None
    );
    assert_eq!(value(&samples, JOB_RUN_COUNT, &kind), Some(2.0));
    assert_eq!(value(&samples, JOB_WAIT_COUNT, &kind), Some(2.0));

    // A worker's own listener (METRICS_PORT) shows the same recorder, behind the same token.
    let exporter = domain::metrics::install(&app.core.metrics).expect("metrics are on");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/metrics", listener.local_addr().unwrap());
    let shutdown = CancellationToken::new();
    let served = tokio::spawn(workers::metrics::serve_on(
        listener,
        app.core.metrics.clone(),
        true,
        exporter,
        pool.clone(),
        shutdown.clone(),
    ));
    let res = app
        .http
        .get(&url)
        .bearer_auth(TEST_METRICS_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let content_type = res.headers()[header::CONTENT_TYPE]
        .to_str()
        .unwrap()
        .to_owned();
    assert_eq!(content_type, domain::metrics::TEXT_FORMAT);
    let text = res.text().await.unwrap();
    let from_worker = prometheus_text::parse(&text)
        .unwrap_or_else(|e| panic!("the worker's /metrics is not Prometheus text: {e}\n{text}"));
    assert_eq!(value(&from_worker, JOBS_FINISHED, &succeeded), Some(1.0));
    assert!(value(&from_worker, "villa_db_pool_max_connections", &[]).is_some());
    let refused = app.http.get(&url).send().await.unwrap();
    assert_eq!(refused.status(), 401);
    let wrong = app
        .http
        .get(&url)
        .bearer_auth("wrong")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);
    shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(10), served)
        .await
        .expect("the metrics listener stops on its token")
        .unwrap()
        .unwrap();
    worker.shutdown().await;
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn the_token_is_enforced_in_production(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let metrics = || app.http.get(app.url("/metrics"));
    let status = |res: reqwest::Response| res.status().as_u16();

    assert_eq!(status(metrics().send().await.unwrap()), 401);
    assert_eq!(
        status(metrics().bearer_auth("wrong").send().await.unwrap()),
        401
    );
    assert_eq!(
        status(
            metrics()
                .basic_auth("prometheus", Some(TEST_METRICS_TOKEN))
                .send()
                .await
                .unwrap()
        ),
        401
    );
    // A user's JWT, even an admin's, is not the metrics token.
    for role in ["admin", "viewer"] {
        let res = app
            .request(Method::GET, "/metrics", Some(role))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 401, "{role}");
    }
    let res = metrics()
        .bearer_auth(TEST_METRICS_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(
        res.headers()[header::CONTENT_TYPE].to_str().unwrap(),
        domain::metrics::TEXT_FORMAT
    );
    let text = res.text().await.unwrap();
    prometheus_text::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));

    // Production without METRICS_TOKEN: closed to everyone.
    let closed = TestApp::spawn_with(
        pool.clone(),
        TestAppOptions {
            metrics_token: None,
            ..TestAppOptions::default()
        },
    )
    .await;
    for token in [None, Some("anything"), Some(TEST_METRICS_TOKEN)] {
        let mut req = closed.http.get(closed.url("/metrics"));
        if let Some(token) = token {
            req = req.bearer_auth(token);
        }
        assert_eq!(status(req.send().await.unwrap()), 401, "{token:?}");
    }

    // Development without METRICS_TOKEN: open.
    let development = TestApp::spawn_with(
        pool.clone(),
        TestAppOptions {
            development: true,
            metrics_token: None,
            ..TestAppOptions::default()
        },
    )
    .await;
    let res = development.get_anonymous("/metrics").await;
    assert_eq!(res.status(), 200);
    let open = development.scrape().await;
    assert!(value(&open, HTTP_REQUESTS, &[("route", "/metrics")]).is_some());

    // METRICS_ENABLED=false: no metrics at all, even for the right token (the recorder other
    // apps of this process installed does not count).
    let disabled = TestApp::spawn_with(
        pool.clone(),
        TestAppOptions {
            metrics_enabled: false,
            ..TestAppOptions::default()
        },
    )
    .await;
    let res = disabled
        .http
        .get(disabled.url("/metrics"))
        .bearer_auth(TEST_METRICS_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);
}

/// What a subscriber wrote, for the test to read.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn lines(&self) -> Vec<Value> {
        let bytes = self.0.lock().unwrap().clone();
        String::from_utf8(bytes)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect()
    }
}

/// The spans a JSON log line was written in: the current one (`span`) and the whole list
/// (`spans`).
fn spans(line: &Value) -> impl Iterator<Item = &serde_json::Map<String, Value>> {
    std::iter::once(&line["span"])
        .chain(line["spans"].as_array().into_iter().flatten())
        .filter_map(Value::as_object)
}

/// Whether a span of `line` has a field equal to `text`, whatever the field's name.
fn in_a_span(line: &Value, text: &str) -> bool {
    spans(line).any(|span| span.values().any(|v| v.as_str() == Some(text)))
}

/// Whether `line` names `text` anywhere: its own fields or a span's.
fn names(line: &Value, text: &str) -> bool {
    in_a_span(line, text)
        || line
            .as_object()
            .is_some_and(|fields| fields.values().any(|v| v.as_str() == Some(text)))
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_jobs_log_lines_carry_the_enqueuing_requests_id(pool: PgPool) {
    // sqlx::test runs the test on a current-thread runtime: the API's tasks and the worker's
    // (run below on this runtime, not on a thread of its own like `TestWorker`) all log on this
    // thread, through this subscriber.
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber =
        domain::process::log_subscriber(EnvFilter::new("info"), true, move || writer.clone());
    let _logs = tracing::subscriber::set_default(subscriber);

    let app = TestApp::spawn(pool.clone()).await;
    let (villa, _) = start(&app, "TRACE-1").await;
    let request_id = format!("trace-{}", Uuid::new_v4());
    let content = b"%PDF-1.4 traced".to_vec();
    let res = app
        .request(Method::POST, "/api/documents/upload", Some("manager"))
        .header("x-request-id", &request_id)
        .json(
            &json!({"villaId": villa, "documentType": "PROPERTY_CONTRACT",
                      "fileName": "Traced.pdf", "mimeType": "application/pdf",
                      "fileContent": base64::engine::general_purpose::STANDARD.encode(&content)}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(res.headers()["x-request-id"], request_id.as_str());
    let (status, body) = tests::json(res).await;
    assert_eq!(status, 201, "{body}");

    // The upload's jobs store the id of the request that enqueued them.
    let store: (Uuid, Option<String>) =
        sqlx::query_as("SELECT id, request_id FROM jobs WHERE kind = $1")
            .bind(StoreDocument::KIND)
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(store.1.as_deref(), Some(request_id.as_str()));
    let traced: Vec<Uuid> = sqlx::query_scalar("SELECT id FROM jobs WHERE request_id = $1")
        .bind(&request_id)
        .fetch_all(&pool)
        .await
        .unwrap();
    assert!(traced.contains(&store.0), "{traced:?}");

    let rt = Arc::new(workers::runtime::Runtime {
        pool: pool.clone(),
        services: Arc::new(jobs::JobServices::from_settings(&app.core)),
        queues: app.queues.clone(),
        registry: JobRegistry::new()
            .register::<CreateVillaTree>()
            .register::<StoreDocument>(),
        settings: app.core.jobs.clone(),
        name: workers::runtime::process_name("trace-test").into(),
    });
    let stop = CancellationToken::new();
    let until_stored = async {
        let stored = wait_status(&pool, store.0, "SUCCEEDED", Duration::from_secs(30)).await;
        stop.cancel();
        stored
    };
    let (ran, stored) = tokio::join!(workers::runtime::run(rt, stop.clone()), until_stored);
    ran.unwrap();
    assert!(stored, "the document was never stored");

    let lines = captured.lines();
    // The request's own lines carry it (the request span)...
    assert!(
        lines
            .iter()
            .any(|l| l["message"] == "request" && in_a_span(l, &request_id)),
        "no request line with {request_id}"
    );
    // ...and so does every line of the runs of the jobs it enqueued.
    for job in &traced {
        let job = job.to_string();
        let of_job: Vec<&Value> = lines.iter().filter(|l| names(l, &job)).collect();
        for line in &of_job {
            assert!(
                in_a_span(line, &request_id),
                "a line of job {job} without {request_id}: {line}"
            );
        }
        if job == store.0.to_string() {
            assert!(
                of_job.iter().any(|l| l["message"] == "job succeeded"),
                "no success line for job {job} in {of_job:?}"
            );
        }
    }
}
