//! Prometheus metrics of every process (docs/operations.md): the `metrics` facade, recorded by
//! `metrics-exporter-prometheus` and rendered in the text exposition format by the processes'
//! own `/metrics` routes (the API's, and a worker's or the scheduler's on `METRICS_PORT`).
//!
//! Names live in [`names`], so the code that records and the documentation agree. Label values
//! are bounded sets (route templates, queue and kind names, outcomes), never ids or raw paths,
//! which would make a series per request.

use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use metrics::{Unit, describe_counter, describe_gauge, describe_histogram, gauge};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use sqlx::PgPool;

use crate::settings::MetricsSettings;

/// The metric names, one place for the code and docs/operations.md.
pub mod names {
    pub const HTTP_REQUESTS: &str = "villa_http_requests_total";
    pub const HTTP_DURATION: &str = "villa_http_request_duration_seconds";
    pub const HTTP_IN_FLIGHT: &str = "villa_http_requests_in_flight";
    pub const JOBS_FINISHED: &str = "villa_jobs_finished_total";
    pub const JOB_ENDS_UNRECORDED: &str = "villa_job_ends_unrecorded_total";
    pub const JOB_RUN_DURATION: &str = "villa_job_run_duration_seconds";
    pub const JOB_QUEUE_WAIT: &str = "villa_job_queue_wait_seconds";
    pub const QUEUE_JOBS: &str = "villa_queue_jobs";
    pub const QUEUE_OLDEST_AGE: &str = "villa_queue_oldest_job_age_seconds";
    pub const PMS_REQUESTS: &str = "villa_pms_requests_total";
    pub const PMS_LIMITER_WAIT: &str = "villa_pms_rate_limiter_wait_seconds";
    pub const PMS_THROTTLED: &str = "villa_pms_throttled_total";
    pub const STORAGE_OPS: &str = "villa_storage_operations_total";
    pub const STORAGE_DURATION: &str = "villa_storage_operation_duration_seconds";
    pub const DB_POOL_CONNECTIONS: &str = "villa_db_pool_connections";
    pub const DB_POOL_MAX: &str = "villa_db_pool_max_connections";
}

/// The content type of the text exposition format.
pub const TEXT_FORMAT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Bucket bounds of every histogram (all are durations in seconds): from a millisecond (a cached
/// read) to half an hour (a large export).
const BUCKETS: [f64; 17] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
    300.0, 1800.0,
];

/// The longest the queue gauges' read may take within a scrape.
const QUEUE_READ_TIMEOUT: Duration = Duration::from_secs(2);

/// How often histogram samples are folded into their buckets, whether or not anyone scrapes;
/// also the longest samples batched per thread ([`on_collect`]) wait to be handed over, which
/// bounds those batches.
const UPKEEP_EVERY: Duration = Duration::from_secs(5);

/// Renders the process's metrics.
#[derive(Clone)]
pub struct Exporter {
    handle: PrometheusHandle,
}

/// The process's recorder, installed by the first [`install`].
static EXPORTER: OnceLock<Option<Exporter>> = OnceLock::new();

/// Setting gauges and rendering happen under this lock: several apps of one test process share
/// the recorder, and each sets the queue gauges from its own database just before rendering.
/// The upkeep thread hands over and folds samples under it too, so that a render sees them all
/// or none.
static RENDER: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Installs the process-wide recorder (once; later calls answer the same exporter). `None` when
/// `METRICS_ENABLED` is false: nothing is installed, every `counter!`/`histogram!` is a no-op,
/// and no `/metrics` answers.
pub fn install(settings: &MetricsSettings) -> Option<Exporter> {
    if !settings.enabled {
        return None;
    }
    EXPORTER
        .get_or_init(|| {
            let handle = match PrometheusBuilder::new()
                .set_buckets(&BUCKETS)
                .and_then(PrometheusBuilder::install_recorder)
            {
                Ok(handle) => handle,
                Err(error) => {
                    // Another recorder already holds the process (a library's): say so and
                    // run without metrics rather than not at all.
                    tracing::error!(%error, "metrics recorder not installed; /metrics is off");
                    return None;
                }
            };
            describe();
            let upkeep = handle.clone();
            // Batches recorded on other threads are handed over first, so that each upkeep
            // folds the samples of the last interval into the buckets (and keeps those batches
            // at most an interval long).
            // A thread, not a task: it must outlive whichever runtime installed the recorder.
            let spawned = std::thread::Builder::new()
                .name("metrics-upkeep".into())
                .spawn(move || {
                    loop {
                        std::thread::sleep(UPKEEP_EVERY);
                        // Under the render lock: a scrape rendering meanwhile would otherwise
                        // show a series' counter and histogram count apart by what this hands
                        // over between the two.
                        let _one_at_a_time = RENDER.blocking_lock();
                        collect();
                        upkeep.run_upkeep();
                    }
                });
            if let Err(error) = spawned {
                // Scrapes still fold and hand over samples; between them, batches grow.
                tracing::error!(%error, "metrics upkeep thread not started");
            }
            Some(Exporter { handle })
        })
        .clone()
}

/// Whether this process records metrics (a recorder is installed): callers skip building labels
/// on hot paths when it does not.
pub fn recording() -> bool {
    EXPORTER.get().is_some_and(Option::is_some)
}

impl Exporter {
    /// Hands over the samples batched per thread ([`on_collect`]), runs `set_gauges` (gauges
    /// read at scrape time: the pool, the queues) and renders every metric, as one step no other
    /// render interleaves with.
    pub async fn render_with<F: FnOnce()>(&self, set_gauges: F) -> String {
        let _one_at_a_time = RENDER.lock().await;
        collect();
        set_gauges();
        self.handle.render()
    }
}

/// What recorders that batch on their own ([`on_collect`]) run to hand their batches over.
static COLLECTORS: Mutex<Vec<fn()>> = Mutex::new(Vec::new());

/// Registers `collect` (once: the caller sees to it), run before every render and every
/// upkeep: a recorder that keeps its samples per thread, off the metrics' shared atomics (the
/// API's HTTP metrics, recorded on every request), records them into the metrics there.
pub fn on_collect(collect: fn()) {
    COLLECTORS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push(collect);
}

fn collect() {
    let collectors = COLLECTORS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone();
    for collect in collectors {
        collect();
    }
}

fn describe() {
    use names::*;
    describe_counter!(
        HTTP_REQUESTS,
        Unit::Count,
        "HTTP requests answered, by method, route template and status class"
    );
    describe_histogram!(
        HTTP_DURATION,
        Unit::Seconds,
        "Time to answer an HTTP request, by method, route template and status class"
    );
    describe_gauge!(HTTP_IN_FLIGHT, "HTTP requests being answered");
    describe_counter!(
        JOBS_FINISHED,
        Unit::Count,
        "Job runs ended, by queue, kind and outcome (succeeded, retried, failed, postponed)"
    );
    describe_counter!(
        JOB_ENDS_UNRECORDED,
        Unit::Count,
        "Ends of runs a worker could not record, by reason (lease_lost, write_failed, stopping): each such job runs again"
    );
    describe_histogram!(
        JOB_RUN_DURATION,
        Unit::Seconds,
        "Time one run of a job took, by queue and kind"
    );
    describe_histogram!(
        JOB_QUEUE_WAIT,
        Unit::Seconds,
        "Time from a job being due (enqueued, or its retry due) to a worker starting it"
    );
    describe_gauge!(
        QUEUE_JOBS,
        "Jobs in the job table by queue and status (queued, running, failed), from Postgres"
    );
    describe_gauge!(
        QUEUE_OLDEST_AGE,
        Unit::Seconds,
        "How long the oldest due queued job of each queue has waited, from Postgres"
    );
    describe_counter!(
        PMS_REQUESTS,
        Unit::Count,
        "Requests to the PMS by outcome (ok, throttled, unauthorized, failed)"
    );
    describe_histogram!(
        PMS_LIMITER_WAIT,
        Unit::Seconds,
        "Time a PMS request waited for the shared rate limiter"
    );
    describe_counter!(PMS_THROTTLED, Unit::Count, "429 answers from the PMS");
    describe_counter!(
        STORAGE_OPS,
        Unit::Count,
        "Document store operations by backend, operation and outcome (ok, throttled, error)"
    );
    describe_histogram!(
        STORAGE_DURATION,
        Unit::Seconds,
        "Time of a document store operation by backend and operation"
    );
    describe_gauge!(
        DB_POOL_CONNECTIONS,
        "Postgres connections of this process's pool by state (in_use, idle)"
    );
    describe_gauge!(
        DB_POOL_MAX,
        "The most connections this process's pool opens"
    );
}

/// Why a scrape was refused; every refusal is a 401.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenRefusal {
    /// A token is needed and the request sent none.
    Missing,
    /// The request sent another token.
    Wrong,
    /// Production without `METRICS_TOKEN`: closed, since anyone could read it otherwise.
    NotConfigured,
}

impl TokenRefusal {
    pub fn message(&self) -> &'static str {
        match self {
            TokenRefusal::Missing => "send Authorization: Bearer <METRICS_TOKEN>",
            TokenRefusal::Wrong => "the metrics token is not the one configured",
            TokenRefusal::NotConfigured => {
                "metrics are closed: set METRICS_TOKEN to scrape them in production"
            }
        }
    }
}

/// Whether a scrape with this `Authorization` header may read the metrics: always with the
/// configured token (`Bearer <METRICS_TOKEN>`, never a user's JWT); without a configured token,
/// only in development.
pub fn check_token(
    settings: &MetricsSettings,
    production: bool,
    authorization: Option<&str>,
) -> Result<(), TokenRefusal> {
    let Some(expected) = settings.token.as_deref() else {
        return if production {
            Err(TokenRefusal::NotConfigured)
        } else {
            Ok(())
        };
    };
    let sent = authorization
        .and_then(crate::crypto::bearer_token)
        .ok_or(TokenRefusal::Missing)?;
    if crate::crypto::same_secret(sent.as_bytes(), expected.as_bytes()) {
        Ok(())
    } else {
        Err(TokenRefusal::Wrong)
    }
}

/// `2xx`, `4xx`…: the status label (a class, so a series per status code is not needed).
pub fn status_class(status: u16) -> &'static str {
    match status {
        100..=199 => "1xx",
        200..=299 => "2xx",
        300..=399 => "3xx",
        400..=499 => "4xx",
        _ => "5xx",
    }
}

/// Sets the pool gauges from `pool` as it is now.
pub fn record_pool(pool: &PgPool) {
    let idle = pool.num_idle();
    let open = usize::try_from(pool.size()).unwrap_or(usize::MAX);
    gauge!(names::DB_POOL_CONNECTIONS, "state" => "in_use").set(open.saturating_sub(idle) as f64);
    gauge!(names::DB_POOL_CONNECTIONS, "state" => "idle").set(idle as f64);
    gauge!(names::DB_POOL_MAX).set(f64::from(pool.options().get_max_connections()));
}

/// The queue gauges as last read from Postgres.
#[derive(Debug, Clone)]
struct QueueSnapshot {
    read_at: Instant,
    /// The last read failed: these are older figures, and the ages are not moved on (a database
    /// away must not look like work waiting longer and longer to an autoscaler).
    stale: bool,
    queues: Vec<QueueFigures>,
}

/// One queue's gauges as read.
#[derive(Debug, Clone)]
struct QueueFigures {
    queue: String,
    queued: i64,
    running: i64,
    failed: i64,
    /// Age of the oldest due queued job when read; none due: none.
    oldest_due_secs: Option<f64>,
}

impl QueueFigures {
    fn empty(queue: &str) -> Self {
        Self {
            queue: queue.to_owned(),
            queued: 0,
            running: 0,
            failed: 0,
            oldest_due_secs: None,
        }
    }
}

/// The per-queue gauges (jobs queued, running and failed; age of the oldest due queued job),
/// read from the job table, the source of truth, at most once per `refresh` whatever the
/// number of scrapers: concurrent scrapes of a stale snapshot wait for one read.
pub struct QueueGauges {
    refresh: Duration,
    /// Held while reading, so that one scrape reads and the others wait for its answer.
    reading: tokio::sync::Mutex<()>,
    snapshot: Mutex<Option<QueueSnapshot>>,
}

impl QueueGauges {
    pub fn new(refresh: Duration) -> Self {
        Self {
            refresh,
            reading: tokio::sync::Mutex::new(()),
            snapshot: Mutex::new(None),
        }
    }

    fn fresh(&self) -> bool {
        self.snapshot
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .as_ref()
            .is_some_and(|s| s.read_at.elapsed() < self.refresh)
    }

    /// Reads the gauges again when the last reading is older than `refresh`. `queues` are the
    /// queues shown even when they hold no job (at zero). A failed read keeps the last one (and
    /// is logged); it is tried again at the next scrape.
    pub async fn refresh(&self, pool: &PgPool, queues: &[&'static str]) {
        if self.fresh() {
            return;
        }
        let _reading = self.reading.lock().await;
        if self.fresh() {
            return;
        }
        // Under the scrape's own timeout (Prometheus' default is 10 s, the pool's acquire too):
        // a slow database costs the queue gauges, never the whole answer.
        let read = tokio::time::timeout(QUEUE_READ_TIMEOUT, crate::job_store::queue_gauges(pool))
            .await
            .map_err(|_| format!("no answer within {QUEUE_READ_TIMEOUT:?}"))
            .and_then(|r| r.map_err(|e| e.to_string()));
        match read {
            Ok(rows) => {
                let mut all: Vec<QueueFigures> =
                    queues.iter().map(|q| QueueFigures::empty(q)).collect();
                for row in rows {
                    let at = match all.iter().position(|f| f.queue == row.queue) {
                        Some(at) => at,
                        None => {
                            all.push(QueueFigures::empty(&row.queue));
                            all.len() - 1
                        }
                    };
                    let figures = &mut all[at];
                    match row.status.as_str() {
                        "QUEUED" => {
                            figures.queued = row.jobs;
                            figures.oldest_due_secs = row.oldest_due_secs;
                        }
                        "RUNNING" => figures.running = row.jobs,
                        _ => figures.failed = row.jobs,
                    }
                }
                *self
                    .snapshot
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(QueueSnapshot {
                    read_at: Instant::now(),
                    stale: false,
                    queues: all,
                });
            }
            Err(error) => {
                tracing::warn!(%error, "queue gauges not read from Postgres; keeping the last ones");
                // Counted as a reading, so that the next try waits its interval like any other
                // (waiting scrapers do not each try again).
                let mut snapshot = self
                    .snapshot
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                let queues = snapshot.take().map(|s| s.queues).unwrap_or_default();
                *snapshot = Some(QueueSnapshot {
                    read_at: Instant::now(),
                    stale: true,
                    queues,
                });
            }
        }
    }

    /// Sets the gauges from the last reading. The oldest job's age moves on with the clock
    /// between readings (it only resets when a reading finds that job taken).
    pub fn apply(&self) {
        let snapshot = self
            .snapshot
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        let Some(snapshot) = snapshot else {
            return;
        };
        let since = if snapshot.stale {
            0.0
        } else {
            snapshot.read_at.elapsed().as_secs_f64()
        };
        for figures in snapshot.queues {
            for (status, count) in [
                ("queued", figures.queued),
                ("running", figures.running),
                ("failed", figures.failed),
            ] {
                gauge!(names::QUEUE_JOBS, "queue" => figures.queue.clone(), "status" => status)
                    .set(count as f64);
            }
            gauge!(names::QUEUE_OLDEST_AGE, "queue" => figures.queue).set(
                figures
                    .oldest_due_secs
                    .map_or(0.0, |age| age.max(0.0) + since),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_token(token: Option<&str>) -> MetricsSettings {
        MetricsSettings {
            token: token.map(str::to_owned),
            ..MetricsSettings::default()
        }
    }

    #[test]
    fn the_token_is_required_where_it_must_be() {
        let open = with_token(None);
        assert_eq!(check_token(&open, false, None), Ok(()));
        assert_eq!(
            check_token(&open, true, Some("Bearer anything")),
            Err(TokenRefusal::NotConfigured)
        );
        let closed = with_token(Some("a-long-enough-token"));
        for production in [false, true] {
            assert_eq!(
                check_token(&closed, production, None),
                Err(TokenRefusal::Missing)
            );
            assert_eq!(
                check_token(&closed, production, Some("Basic a-long-enough-token")),
                Err(TokenRefusal::Missing)
            );
            assert_eq!(
                check_token(&closed, production, Some("Bearer a-long-enough-tokeX")),
                Err(TokenRefusal::Wrong)
            );
            assert_eq!(
                check_token(&closed, production, Some("Bearer a-long-enough-token")),
                Ok(())
            );
        }
    }

    #[test]
    fn statuses_are_labelled_by_class() {
        assert_eq!(status_class(200), "2xx");
        assert_eq!(status_class(304), "3xx");
        assert_eq!(status_class(404), "4xx");
        assert_eq!(status_class(503), "5xx");
        assert_eq!(status_class(999), "5xx");
    }
}
