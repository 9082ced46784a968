//! The API's HTTP metrics (`villa_http_*`), labelled by route template (never by raw path),
//! method and status class, recorded on every request by [`super::log_requests`].
//!
//! Each thread keeps its own tallies (the durations per series, and its share of the requests
//! in flight), which [`collect`] hands to the metrics before every render and every upkeep
//! (`domain::metrics::on_collect`). Why not record each request straight into the exporter's
//! counter and histogram: those are atomics shared by every thread, about ten read-modify-writes
//! per request on cache lines both cores then pass back and forth. Measured on the read path (2
//! cores, `bench/metrics.sh`): building the registry keys per request cost 5.8 % of its
//! throughput, handles cached behind a shared lock 4 %, handles cached per thread still 1–2 %
//! beside runs of the same binary that recorded nothing. A thread's tallies are behind a lock of
//! their own that only [`collect`] takes besides it, so a request's metrics are one uncontended
//! lock, a hash of its route and a push.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, Once, PoisonError};
use std::time::Duration;

use axum::{
    extract::{MatchedPath, Request},
    http::Method,
};
use domain::metrics::names;
use foldhash::fast::RandomState;

/// The route label of requests that match no route: never their raw path, which would make one
/// series per path probed.
const UNMATCHED: &str = "unmatched";

/// The method as a metric label: the standard methods by their names, any other as `OTHER`, so
/// that a client inventing methods cannot multiply the series.
fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::OPTIONS => "OPTIONS",
        _ => "OTHER",
    }
}

/// Makes [`collect`] run before every render and upkeep of this process's metrics. Called by
/// every app this process builds, whatever its own settings: requests are tallied whenever
/// the process records metrics, which another app of the process may have turned on.
pub fn register() {
    static REGISTERED: Once = Once::new();
    REGISTERED.call_once(|| domain::metrics::on_collect(collect));
}

/// One series: (route template, method, status class).
type SeriesKey = (&'static str, &'static str, &'static str);

/// One thread's share of the HTTP metrics.
#[derive(Default)]
struct Shard {
    /// Requests this thread started minus those it ended (a request may end on another thread
    /// than it started on, so one shard can go below zero).
    in_flight: AtomicI64,
    /// The durations of the requests this thread ended since the last [`collect`], by series.
    tallies: Mutex<HashMap<SeriesKey, Vec<f64>, RandomState>>,
    /// Its thread has ended: [`collect`] empties it one last time and forgets it.
    ended: AtomicBool,
}

/// A thread's hold on its shard. When the thread ends, its share of the requests in flight
/// moves to [`IN_FLIGHT_UNSHARDED`], under the list's lock like every sum of the shares.
struct ThreadShard(Arc<Shard>);

impl Drop for ThreadShard {
    fn drop(&mut self) {
        let _shards = lock(&SHARDS);
        let share = self.0.in_flight.swap(0, Ordering::Relaxed);
        IN_FLIGHT_UNSHARDED.fetch_add(share, Ordering::Relaxed);
        self.0.ended.store(true, Ordering::Relaxed);
    }
}

/// Every live thread's shard (and those ended since the last [`collect`]).
static SHARDS: Mutex<Vec<Arc<Shard>>> = Mutex::new(Vec::new());

/// Requests in flight counted on no shard: the shares of threads that ended, and changes made
/// on a thread whose shard is already gone (a request dropped while its thread ends).
static IN_FLIGHT_UNSHARDED: AtomicI64 = AtomicI64::new(0);

/// The counter and histogram of each series, used by [`collect`] only (whose callers, a render
/// and the upkeep, already take turns under `domain::metrics`' render lock).
static SERIES: LazyLock<Mutex<HashMap<SeriesKey, Series>>> = LazyLock::new(Mutex::default);

/// Route templates as `&'static str`, each leaked once (a router has a fixed set of them).
static ROUTES: LazyLock<Mutex<HashSet<&'static str>>> = LazyLock::new(Mutex::default);

thread_local! {
    static SHARD: ThreadShard = {
        let shard = Arc::<Shard>::default();
        lock(&SHARDS).push(shard.clone());
        ThreadShard(shard)
    };
    /// This thread's copy of [`ROUTES`]' entries, so that naming a request's route takes no
    /// shared lock.
    static KNOWN_ROUTES: std::cell::RefCell<HashSet<&'static str, RandomState>> =
        std::cell::RefCell::default();
}

/// Metrics must not panic a request: a lock poisoned by a panic elsewhere is used as it is
/// (what it guards is counts and samples, each left whole by every writer).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `route` as a string living as long as the process.
fn interned(route: &str) -> &'static str {
    let from_process = || {
        let mut routes = lock(&ROUTES);
        match routes.get(route) {
            Some(known) => *known,
            None => {
                let leaked: &'static str = Box::leak(route.to_owned().into_boxed_str());
                routes.insert(leaked);
                leaked
            }
        }
    };
    KNOWN_ROUTES
        .try_with(|known| {
            if let Some(route) = known.borrow().get(route) {
                return *route;
            }
            let route = from_process();
            known.borrow_mut().insert(route);
            route
        })
        .unwrap_or_else(|_| from_process())
}

/// The counter and histogram of one series.
struct Series {
    requests: metrics::Counter,
    duration: metrics::Histogram,
}

impl Series {
    fn new((route, method, status): SeriesKey) -> Self {
        Self {
            requests: metrics::counter!(names::HTTP_REQUESTS,
                "method" => method, "route" => route, "status" => status),
            duration: metrics::histogram!(names::HTTP_DURATION,
                "method" => method, "route" => route, "status" => status),
        }
    }

    fn record(&self, seconds: &[f64]) {
        self.requests.increment(seconds.len() as u64);
        for &seconds in seconds {
            self.duration.record(seconds);
        }
    }
}

/// One request's HTTP metrics. It counts as in flight for as long as it lives: dropped when
/// the request ends, also when its future is cancelled (the client went away), so the count
/// never drifts upwards.
pub(super) struct HttpObservation {
    method: &'static str,
    route: &'static str,
}

impl HttpObservation {
    pub(super) fn start(req: &Request) -> Self {
        add_in_flight(1);
        Self {
            method: method_label(req.method()),
            route: req
                .extensions()
                .get::<MatchedPath>()
                .map_or(UNMATCHED, |path| interned(path.as_str())),
        }
    }

    pub(super) fn finish(self, status: u16, elapsed: Duration) {
        let key = (
            self.route,
            self.method,
            domain::metrics::status_class(status),
        );
        let seconds = elapsed.as_secs_f64();
        let tallied = SHARD.try_with(|shard| {
            lock(&shard.0.tallies).entry(key).or_default().push(seconds);
        });
        if tallied.is_err() {
            // No shard on a thread being torn down: straight into the metrics.
            Series::new(key).record(&[seconds]);
        }
    }
}

impl Drop for HttpObservation {
    fn drop(&mut self) {
        add_in_flight(-1);
    }
}

fn add_in_flight(delta: i64) {
    if SHARD
        .try_with(|shard| shard.0.in_flight.fetch_add(delta, Ordering::Relaxed))
        .is_err()
    {
        IN_FLIGHT_UNSHARDED.fetch_add(delta, Ordering::Relaxed);
    }
}

/// Records every thread's tallies into the metrics (registered by [`register`]: run before
/// each render and each upkeep), and forgets the shards of threads that ended (tests start and
/// end runtimes by the hundred).
pub fn collect() {
    let mut series = lock(&SERIES);
    let shards = {
        let mut all = lock(&SHARDS);
        let shards = all.clone();
        all.retain(|shard| !shard.ended.load(Ordering::Relaxed));
        shards
    };
    for shard in shards {
        let taken: Vec<(SeriesKey, Vec<f64>)> = lock(&shard.tallies)
            .iter_mut()
            .filter(|(_, seconds)| !seconds.is_empty())
            .map(|(key, seconds)| {
                // The thread goes on with a buffer as large as the last one: no regrowth on
                // its requests' path.
                let fresh = Vec::with_capacity(seconds.len());
                (*key, std::mem::replace(seconds, fresh))
            })
            .collect();
        for (key, seconds) in taken {
            series
                .entry(key)
                .or_insert_with(|| Series::new(key))
                .record(&seconds);
        }
    }
}

/// Sets `villa_http_requests_in_flight` from the requests being answered now.
pub fn set_in_flight_gauge() {
    metrics::gauge!(names::HTTP_IN_FLIGHT).set(in_flight().max(0) as f64);
}

/// Requests being answered now, over every thread. The shares are read one after another, not
/// at one instant: a request that starts on a shard already read and ends on one not yet read
/// makes that reading one too low, one started on a shard not yet read and ended on one already
/// read one too high (the gauge is a sample, not an account; never set below zero).
fn in_flight() -> i64 {
    // Under the list's lock: a thread's share moves off its shard under it too.
    let shards = lock(&SHARDS);
    let on_shards: i64 = shards
        .iter()
        .map(|shard| shard.in_flight.load(Ordering::Relaxed))
        .sum();
    on_shards + IN_FLIGHT_UNSHARDED.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use std::sync::Barrier;

    use axum::body::Body;
    use metrics_exporter_prometheus::PrometheusBuilder;

    use super::*;

    /// The two tests share this module's process-wide counts: one at a time, so that each
    /// sees only its own requests.
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

    fn request(path: &str) -> Request {
        Request::get(path).body(Body::empty()).unwrap()
    }

    /// A request may start on one thread and end on another, and either thread may end before
    /// the request does (tokio moves tasks; tests end runtimes): the count still comes back.
    #[test]
    fn requests_in_flight_add_up_across_threads_and_ended_threads() {
        let _alone = lock(&ONE_AT_A_TIME);
        let before = in_flight();
        let unsharded = IN_FLIGHT_UNSHARDED.load(Ordering::Relaxed);
        let (observation, shard) = std::thread::spawn(|| {
            let observation = HttpObservation::start(&request("/management/villas/1"));
            (observation, SHARD.with(|shard| Arc::clone(&shard.0)))
        })
        .join()
        .unwrap();
        // The thread that started it has ended: its share left its shard.
        assert!(shard.ended.load(Ordering::Relaxed));
        assert_eq!(shard.in_flight.load(Ordering::Relaxed), 0);
        assert_eq!(IN_FLIGHT_UNSHARDED.load(Ordering::Relaxed), unsharded + 1);
        assert_eq!(in_flight(), before + 1);
        collect();
        assert!(!lock(&SHARDS).iter().any(|s| Arc::ptr_eq(s, &shard)));
        assert_eq!(in_flight(), before + 1);
        // Cancelled on another thread (dropped, not finished: no series is tallied here).
        std::thread::spawn(move || drop(observation))
            .join()
            .unwrap();
        assert_eq!(in_flight(), before);
    }

    /// Every request ended is counted once, and its duration sampled once, however the
    /// collects (a scrape's, the upkeep's) fall among requests ending on other threads, and
    /// after those threads ended.
    #[test]
    fn every_request_reaches_the_counter_and_the_histogram_once() {
        let _alone = lock(&ONE_AT_A_TIME);
        const THREADS: usize = 4;
        const EACH: usize = 20_000;
        let recorder = PrometheusBuilder::new()
            .set_buckets(&[0.001, 0.01, 0.1])
            .unwrap()
            .build_recorder();
        let handle = recorder.handle();
        let route = interned("/test/every-request-once/{id}");
        let key = (route, "GET", "2xx");
        let in_flight_before = in_flight();
        metrics::with_local_recorder(&recorder, || {
            // This series' handles, made here where this recorder is in use: a collect on any
            // thread records into them.
            lock(&SERIES).insert(key, Series::new(key));
            // Twice: at the start, and halfway, when every requester has tallied half its
            // requests and this thread takes them before they go on.
            let step = Barrier::new(THREADS + 1);
            std::thread::scope(|scope| {
                let requesters: Vec<_> = (0..THREADS)
                    .map(|_| {
                        scope.spawn(|| {
                            step.wait();
                            for done in 0..EACH {
                                if done == EACH / 2 {
                                    step.wait();
                                    step.wait();
                                }
                                // As `start` does, without a request to read.
                                add_in_flight(1);
                                HttpObservation {
                                    method: "GET",
                                    route,
                                }
                                .finish(200, Duration::from_micros(500));
                            }
                        })
                    })
                    .collect();
                step.wait();
                step.wait();
                collect();
                step.wait();
                // And while they go on.
                while requesters.iter().any(|r| !r.is_finished()) {
                    collect();
                }
                // Joined: their threads have ended, thread-local destructors included.
                for requester in requesters {
                    requester.join().unwrap();
                }
            });
            // What the ended threads tallied last is handed over still.
            collect();
        });
        let text = handle.render();
        let value = |name: &str| -> f64 {
            text.lines()
                .find(|l| l.starts_with(name) && l.contains(route))
                .unwrap_or_else(|| panic!("no {name} for {route} in\n{text}"))
                .rsplit(' ')
                .next()
                .unwrap()
                .parse()
                .unwrap()
        };
        // Every request ended, on threads that ended too.
        assert_eq!(in_flight(), in_flight_before);
        let requests = (THREADS * EACH) as f64;
        assert_eq!(value("villa_http_requests_total{"), requests);
        assert_eq!(
            value("villa_http_request_duration_seconds_count{"),
            requests
        );
        let sum = value("villa_http_request_duration_seconds_sum{");
        assert!((sum - requests * 0.0005).abs() < 1e-6, "{sum}");
    }
}
