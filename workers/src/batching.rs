//! Claims, ends and leases of runs in batches: what lets one worker process move thousands of
//! jobs a second on a database that costs about the same per statement whether it touches one
//! row or a hundred.
//!
//! - **Claims** ([`Claims`]): each delivery asks for its job; one task per process claims every
//!   id asked for since its last statement, up to `WORKER_CLAIM_BATCH`, in one statement
//!   (`job_store::claim_many`). Nothing waits to fill a batch: on a quiet platform a lone
//!   delivery is claimed at once, and under load the deliveries that arrive while a claim runs
//!   make the next batch.
//! - **Ends** ([`Ends`]): a run's end is handed over and the delivery's slot is free at once;
//!   one task per process writes the waiting ends in one statement (`job_store::record_ends`)
//!   once `WORKER_COMPLETE_BATCH` wait or the first has waited `WORKER_COMPLETE_INTERVAL_MS`. An
//!   end not yet written when the process dies is lost with it: the job's lease expires and it
//!   runs again, which is why every handler is idempotent. An end is recorded only on the run it
//!   ends (this process's lease, that attempt), so a late one never overwrites a later run.
//! - **Leases**: one task renews, every `lease / 3`, the leases of the runs this process claimed
//!   and has not ended ([`Held`]), and only those: a run claimed for nobody, or whose end could
//!   not be written, is left to expire and run again, never kept alive by a process that will
//!   not finish it.
//!
//! The three tasks use a small pool of their own, so that they never queue behind handlers
//! holding the process's connections. If one of them stops while the process runs, the process
//! cannot take work any more: [`Batching::failed`] says so and the runtime ends the process for
//! its supervisor to start again. [`Batching::close`] stops them in order on shutdown: the
//! claimer answers nothing more, the writer writes every end handed over before the close, so
//! that the hand-back that follows requeues only runs that did not end.

use std::{
    collections::{HashMap, HashSet},
    sync::{Arc, Mutex, PoisonError},
    time::Duration,
};

use domain::{
    job_store::{self, ClaimedJob, EndOfRun, RunEnd},
    metrics::names,
};
use sqlx::PgPool;
use tokio::{
    sync::{mpsc, oneshot},
    task::JoinHandle,
};
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;
use uuid::Uuid;

/// A delivery waiting for its claim: `None` when the job was not claimable.
type ClaimRequest = (Uuid, oneshot::Sender<Option<ClaimedJob>>);

/// The end of one run, waiting to be written. `span` is the run's, so that what is logged about
/// writing it carries the job, its queue and the request that enqueued it.
pub struct Ended {
    pub end: EndOfRun,
    pub span: tracing::Span,
}

/// How many times writing a batch of ends is tried before it is given up (its runs' leases are
/// then left to expire, and the jobs run again).
const WRITE_ATTEMPTS: u32 = 4;
/// Connections of the batchers' own pool: the claimer, the end writer and the lease keeper.
/// One claim and one end statement in flight at a time: while each runs, its next batch
/// gathers. Two of each were measured slower (7,100 to 7,500 jobs/s against 8,300 then):
/// smaller batches, more statements, and the database's CPU is what a burst spends.
const PIPELINE_CONNECTIONS: u32 = 3;

/// The runs (job id, attempt) this process claimed and has not ended: whose leases it renews.
/// By attempt: a job whose lease this process lost and then claimed again has two runs here, and
/// the end of the first must not stop the renewal of the second.
#[derive(Clone, Default)]
struct Held(Arc<Mutex<HashSet<(Uuid, i32)>>>);

impl Held {
    fn with<T>(&self, f: impl FnOnce(&mut HashSet<(Uuid, i32)>) -> T) -> T {
        f(&mut self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// Marks the batchers as failed when one of their tasks ends, or panics, before the close.
struct FailsLoudly {
    task: &'static str,
    closing: CancellationToken,
    failed: CancellationToken,
}

impl Drop for FailsLoudly {
    fn drop(&mut self) {
        if !self.closing.is_cancelled() {
            tracing::error!(task = self.task, "a batcher of the job pipeline stopped");
            self.failed.cancel();
        }
    }
}

/// The claim and end batchers and the lease keeper of one worker process.
pub struct Batching {
    pub claims: Claims,
    pub ends: Ends,
    closing: CancellationToken,
    failed: CancellationToken,
    tasks: Vec<JoinHandle<()>>,
}

impl Batching {
    /// Starts the three tasks on a pool of their own, opened lazily with the options of `pool`.
    pub fn start(
        pool: &PgPool,
        worker: Arc<str>,
        settings: &domain::settings::JobSettings,
    ) -> Self {
        let pool = sqlx::postgres::PgPoolOptions::new()
            .max_connections(PIPELINE_CONNECTIONS)
            .acquire_timeout(Duration::from_secs(10))
            // No ping before each statement: a round trip per claim and per write (a broken
            // connection fails the statement, which is tried again).
            .test_before_acquire(false)
            .connect_lazy_with(pool.connect_options().as_ref().clone());
        let claim_batch = settings.claim_batch.clamp(1, settings.concurrency.max(1));
        // Room for every slot of a few queues' consumers to be waiting at once.
        let (claim_tx, claim_rx) = mpsc::channel(settings.concurrency.max(claim_batch) * 4);
        // Bounded: a writer that cannot keep up holds up the runs handing over ends, which holds
        // up the consumers, instead of memory growing.
        let (end_tx, end_rx) = mpsc::channel(settings.complete_batch * 4);
        let (closing, failed) = (CancellationToken::new(), CancellationToken::new());
        let held = Held::default();
        let guard = |task| FailsLoudly {
            task,
            closing: closing.clone(),
            failed: failed.clone(),
        };
        let claimer = Claimer {
            pool: pool.clone(),
            worker: worker.clone(),
            lease: settings.lease,
            batch: claim_batch,
            held: held.clone(),
            ends: end_tx.clone(),
        };
        let writer = Writer {
            pool: pool.clone(),
            worker: worker.clone(),
            batch: settings.complete_batch,
            interval: settings.complete_interval,
            held: held.clone(),
        };
        let tasks = vec![
            tokio::spawn(keep_leases(
                pool,
                worker,
                settings.lease,
                held,
                closing.clone(),
                guard("lease keeper"),
            )),
            tokio::spawn(claimer.run(claim_rx, closing.clone(), guard("claimer"))),
            tokio::spawn(writer.run(end_rx, closing.clone(), guard("end writer"))),
        ];
        Self {
            claims: Claims { tx: claim_tx },
            ends: Ends { tx: end_tx },
            closing,
            failed,
            tasks,
        }
    }

    /// Cancelled when a task stopped before [`close`](Self::close): the process cannot take
    /// work any more.
    pub fn failed(&self) -> CancellationToken {
        self.failed.clone()
    }

    /// Stops claiming (deliveries still waiting get nothing) and taking ends, and waits until
    /// every end handed over before is written (or given up after [`WRITE_ATTEMPTS`]). Runs
    /// still going then find the writer gone: they are handed back with the rest.
    pub async fn close(self) {
        self.closing.cancel();
        futures::future::join_all(self.tasks).await;
    }
}

/// The claiming side, cloned into every delivery.
#[derive(Clone)]
pub struct Claims {
    tx: mpsc::Sender<ClaimRequest>,
}

impl Claims {
    /// Claims `id` for this process, in the next batch. `None`: not claimable (a duplicate
    /// delivery, held or finished elsewhere, not due), or the claim failed (the row stays
    /// QUEUED and is pushed again at the dispatcher's next round).
    pub async fn claim(&self, id: Uuid) -> Option<ClaimedJob> {
        let (reply, answer) = oneshot::channel();
        self.tx.send((id, reply)).await.ok()?;
        answer.await.ok().flatten()
    }
}

/// The ending side, cloned into every delivery.
#[derive(Clone)]
pub struct Ends {
    tx: mpsc::Sender<Ended>,
}

impl Ends {
    /// Hands the end of a run over to the writer. Answers false when the writer has stopped
    /// (the process is stopping): the job is then handed back with the rest, or its lease
    /// expires.
    pub async fn hand_over(&self, ended: Ended) -> bool {
        self.tx.send(ended).await.is_ok()
    }
}

struct Claimer {
    pool: PgPool,
    worker: Arc<str>,
    lease: Duration,
    batch: usize,
    held: Held,
    ends: mpsc::Sender<Ended>,
}

impl Claimer {
    async fn run(
        self,
        mut requests: mpsc::Receiver<ClaimRequest>,
        closing: CancellationToken,
        _guard: FailsLoudly,
    ) {
        let mut waiting: Vec<ClaimRequest> = Vec::with_capacity(self.batch);
        loop {
            let got = tokio::select! {
                got = requests.recv_many(&mut waiting, self.batch) => got,
                // Deliveries still waiting, and any to come, get `None`: the process is stopping.
                _ = closing.cancelled() => return,
            };
            if got == 0 {
                return;
            }
            self.claim(&mut waiting).await;
        }
    }

    /// Claims the ids of `waiting` and answers each delivery (and empties `waiting`).
    async fn claim(&self, waiting: &mut Vec<ClaimRequest>) {
        let ids: Vec<Uuid> = waiting.iter().map(|(id, _)| *id).collect();
        let mut claimed: HashMap<Uuid, ClaimedJob> =
            match job_store::claim_many(&self.pool, &ids, &self.worker, self.lease).await {
                Ok(jobs) => jobs.into_iter().map(|job| (job.id, job)).collect(),
                Err(error) => {
                    // Nothing was claimed (or, if the statement committed and its answer was
                    // lost, nothing is renewed: those leases expire). Mark the rows unpushed,
                    // so that the dispatcher's next round pushes them again.
                    tracing::warn!(%error, count = ids.len(), "claim failed");
                    if let Err(error) = job_store::unmark_pushed(&self.pool, &ids).await {
                        tracing::warn!(%error, "unmarking the unclaimed rows failed too");
                    }
                    HashMap::new()
                }
            };
        self.held
            .with(|held| held.extend(claimed.values().map(|job| (job.id, job.attempts))));
        for (id, reply) in waiting.drain(..) {
            // A job delivered twice in one batch goes to the first delivery only.
            let job = claimed.remove(&id);
            if let Err(Some(job)) = reply.send(job) {
                // The delivery is gone (its runtime is stopping): the job was claimed for
                // nobody. Hand it back now rather than leave it to its lease.
                let end = EndOfRun {
                    id: job.id,
                    attempt: job.attempts,
                    end: RunEnd::HandedBack,
                };
                let span = tracing::Span::current();
                let _ = self.ends.send(Ended { end, span }).await;
            }
        }
    }
}

struct Writer {
    pool: PgPool,
    worker: Arc<str>,
    batch: usize,
    interval: Duration,
    held: Held,
}

impl Writer {
    async fn run(
        self,
        mut ends: mpsc::Receiver<Ended>,
        closing: CancellationToken,
        _guard: FailsLoudly,
    ) {
        let mut waiting: Vec<Ended> = Vec::with_capacity(self.batch);
        loop {
            let got = tokio::select! {
                biased;
                got = ends.recv_many(&mut waiting, self.batch) => got,
                // From here on no end is taken; those already handed over are still received
                // (then `recv_many` answers 0 and the writer stops).
                _ = closing.cancelled(), if !ends.is_closed() => {
                    ends.close();
                    continue;
                }
            };
            if got == 0 {
                return;
            }
            let deadline = tokio::time::Instant::now() + self.interval;
            while waiting.len() < self.batch && !closing.is_cancelled() {
                let room = self.batch - waiting.len();
                tokio::select! {
                    more = tokio::time::timeout_at(deadline, ends.recv_many(&mut waiting, room)) => {
                        // Closed and empty, or the first end has waited long enough.
                        if matches!(more, Ok(0) | Err(_)) {
                            break;
                        }
                    }
                    _ = closing.cancelled() => break,
                }
            }
            self.write(&mut waiting).await;
        }
    }

    /// Writes `waiting` (and empties it), trying again after a failure. A batch given up is not
    /// lost: its runs are no longer renewed, their leases expire and the jobs run again.
    async fn write(&self, waiting: &mut Vec<Ended>) {
        // One end per job in a statement (which must not update a row twice): the latest
        // attempt's. An earlier attempt's end can never be recorded (a later run of this
        // process holds the row): it is lost with its lease, like a refused one.
        let mut latest: HashMap<Uuid, i32> = HashMap::with_capacity(waiting.len());
        for e in waiting.iter() {
            let attempt = latest.entry(e.end.id).or_insert(e.end.attempt);
            *attempt = (*attempt).max(e.end.attempt);
        }
        let (current, stale): (Vec<&Ended>, Vec<&Ended>) = waiting
            .iter()
            .partition(|e| latest[&e.end.id] == e.end.attempt);
        let ends: Vec<EndOfRun> = current.iter().map(|e| e.end.clone()).collect();
        let mut lost = stale;
        let mut pause = Duration::from_millis(100);
        for attempt in 1..=WRITE_ATTEMPTS {
            match job_store::record_ends(&self.pool, &self.worker, &ends).await {
                Ok(recorded) => {
                    let recorded: HashSet<Uuid> = recorded.into_iter().collect();
                    lost.extend(current.iter().filter(|e| !recorded.contains(&e.end.id)));
                    break;
                }
                Err(error) if attempt < WRITE_ATTEMPTS => {
                    tracing::warn!(%error, attempt, count = ends.len(), ?pause,
                        "recording the ends of runs failed; trying again");
                    tokio::time::sleep(pause).await;
                    pause *= 2;
                }
                Err(error) => {
                    tracing::error!(%error, count = ends.len(),
                        "outcomes not recorded; the jobs will run again after their leases");
                    metrics::counter!(names::JOB_ENDS_UNRECORDED, "reason" => "write_failed")
                        .increment(ends.len() as u64);
                }
            }
        }
        for ended in lost {
            unrecorded("lease_lost");
            ended.span.in_scope(|| {
                tracing::warn!(
                    "outcome not recorded: the lease was lost (the job ran again or will)"
                )
            });
        }
        // Written, lost or given up, these runs are over for this process: no more renewals.
        self.held.with(|held| {
            for ended in waiting.iter() {
                held.remove(&(ended.end.id, ended.end.attempt));
            }
        });
        waiting.clear();
    }
}

/// Counts one end that could not be recorded (its job runs again).
pub fn unrecorded(reason: &'static str) {
    metrics::counter!(names::JOB_ENDS_UNRECORDED, "reason" => reason).increment(1);
}

async fn keep_leases(
    pool: PgPool,
    worker: Arc<str>,
    lease: Duration,
    held: Held,
    closing: CancellationToken,
    _guard: FailsLoudly,
) {
    let every = lease / 3;
    loop {
        tokio::select! {
            _ = tokio::time::sleep(every) => {},
            _ = closing.cancelled() => return,
        }
        let runs: Vec<(Uuid, i32)> = held.with(|held| held.iter().copied().collect());
        if let Err(error) = job_store::renew_leases(&pool, &worker, &runs, lease)
            .instrument(tracing::debug_span!("lease renewal", count = runs.len()))
            .await
        {
            tracing::warn!(%error, "lease renewal failed");
        }
    }
}
