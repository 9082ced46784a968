//! Claims and ends of runs in batches: what lets one worker process move thousands of jobs a
//! second on a database that costs the same per statement whether it touches one row or a
//! hundred.
//!
//! - **Claims** ([`Claims`]): each delivery asks for its job; one task per process claims every
//!   id asked for since its last statement, up to `WORKER_CLAIM_BATCH`, in one statement
//!   (`job_store::claim_many`). Nothing waits to fill a batch: on a quiet platform a lone
//!   delivery is claimed at once, and under load the deliveries that arrive while a claim runs
//!   make the next batch.
//! - **Ends** ([`Ends`]): a run's outcome is handed over and the delivery's slot is free at
//!   once; one task per process writes the waiting ends in one statement
//!   (`job_store::record_ends`) once `WORKER_COMPLETE_BATCH` wait or the first has waited
//!   `WORKER_COMPLETE_INTERVAL_MS`. An end not yet written when the process dies is lost with
//!   it: the job's lease expires and it runs again, which is why every handler is idempotent.
//!   Nothing the process wrote can be overwritten by it later: an end is recorded only while
//!   this process still holds the lease (`locked_by`, `RUNNING`).
//!
//! Both stop on [`Batching::close`]: the claimer answers what it has, the writer writes every
//! end handed over before the close, so that a graceful shutdown hands back only runs that did
//! not end.

use std::{collections::HashMap, sync::Arc, time::Duration};

use domain::job_store::{self, ClaimedJob, RunEnd};
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
    pub id: Uuid,
    pub end: RunEnd,
    pub span: tracing::Span,
}

/// How long writing a batch of ends is tried before it is given up (the jobs' leases then
/// expire and they run again).
const WRITE_ATTEMPTS: u32 = 4;

/// The claim and end batchers of one worker process.
pub struct Batching {
    pub claims: Claims,
    pub ends: Ends,
    closing: CancellationToken,
    tasks: Vec<JoinHandle<()>>,
}

impl Batching {
    pub fn start(pool: PgPool, worker: Arc<str>, settings: &domain::settings::JobSettings) -> Self {
        let claim_batch = settings.claim_batch.clamp(1, settings.concurrency.max(1));
        // Room for every slot of a few queues' consumers to be waiting at once.
        let (claim_tx, claim_rx) = mpsc::channel(settings.concurrency.max(claim_batch) * 4);
        // Bounded: a writer that cannot keep up holds up the runs handing over ends, which holds
        // up the consumers, instead of memory growing.
        let (end_tx, end_rx) = mpsc::channel(settings.complete_batch * 4);
        let closing = CancellationToken::new();
        let tasks = vec![
            tokio::spawn(claimer(
                pool.clone(),
                worker.clone(),
                settings.lease,
                claim_batch,
                claim_rx,
                end_tx.clone(),
                closing.clone(),
            )),
            tokio::spawn(writer(
                pool,
                worker,
                settings.complete_batch,
                settings.complete_interval,
                end_rx,
                closing.clone(),
            )),
        ];
        Self {
            claims: Claims { tx: claim_tx },
            ends: Ends { tx: end_tx },
            closing,
            tasks,
        }
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
    /// QUEUED and the dispatcher pushes it again).
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

async fn claimer(
    pool: PgPool,
    worker: Arc<str>,
    lease: Duration,
    batch: usize,
    mut requests: mpsc::Receiver<ClaimRequest>,
    ends: mpsc::Sender<Ended>,
    closing: CancellationToken,
) {
    let mut waiting: Vec<ClaimRequest> = Vec::with_capacity(batch);
    loop {
        let got = tokio::select! {
            got = requests.recv_many(&mut waiting, batch) => got,
            // Deliveries still waiting, and any to come, get `None`: the process is stopping.
            _ = closing.cancelled() => return,
        };
        if got == 0 {
            return;
        }
        let ids: Vec<Uuid> = waiting.iter().map(|(id, _)| *id).collect();
        let mut claimed: HashMap<Uuid, ClaimedJob> =
            match job_store::claim_many(&pool, &ids, &worker, lease).await {
                Ok(jobs) => jobs.into_iter().map(|job| (job.id, job)).collect(),
                Err(error) => {
                    // Nothing was claimed; the rows stay QUEUED for the dispatcher.
                    tracing::warn!(%error, count = ids.len(), "claim failed");
                    HashMap::new()
                }
            };
        for (id, reply) in waiting.drain(..) {
            // A job delivered twice in one batch goes to the first delivery only.
            let job = claimed.remove(&id);
            if let Err(Some(job)) = reply.send(job) {
                // The delivery is gone (its runtime is stopping): the job was claimed for
                // nobody. Hand it back now rather than keep renewing its lease.
                let ended = Ended {
                    id: job.id,
                    end: RunEnd::HandedBack,
                    span: tracing::Span::current(),
                };
                let _ = ends.send(ended).await;
            }
        }
    }
}

async fn writer(
    pool: PgPool,
    worker: Arc<str>,
    batch: usize,
    interval: Duration,
    mut ends: mpsc::Receiver<Ended>,
    closing: CancellationToken,
) {
    let mut waiting: Vec<Ended> = Vec::with_capacity(batch);
    loop {
        let got = tokio::select! {
            biased;
            got = ends.recv_many(&mut waiting, batch) => got,
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
        let deadline = tokio::time::Instant::now() + interval;
        while waiting.len() < batch && !closing.is_cancelled() {
            let room = batch - waiting.len();
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
        write(&pool, &worker, &mut waiting).await;
    }
}

/// Writes `waiting` (and empties it), trying again after a failure: a batch given up is not
/// lost (its jobs run again after their leases), but it is work done twice.
async fn write(pool: &PgPool, worker: &str, waiting: &mut Vec<Ended>) {
    let ends: Vec<(Uuid, RunEnd)> = waiting.iter().map(|e| (e.id, e.end.clone())).collect();
    let mut pause = Duration::from_millis(100);
    for attempt in 1..=WRITE_ATTEMPTS {
        match job_store::record_ends(pool, worker, &ends).await {
            Ok(recorded) => {
                if recorded.len() < waiting.len() {
                    for ended in waiting.iter() {
                        if !recorded.contains(&ended.id) {
                            async {
                                tracing::warn!(
                                    "outcome not recorded: the lease was lost to another worker"
                                )
                            }
                            .instrument(ended.span.clone())
                            .await;
                        }
                    }
                }
                waiting.clear();
                return;
            }
            Err(error) if attempt < WRITE_ATTEMPTS => {
                tracing::warn!(%error, attempt, count = ends.len(), ?pause,
                    "recording the ends of runs failed; trying again");
                tokio::time::sleep(pause).await;
                pause *= 2;
            }
            Err(error) => {
                // The leases expire and the jobs run again; handlers are idempotent.
                tracing::error!(%error, count = ends.len(),
                    "outcomes not recorded; the jobs will run again after their leases");
            }
        }
    }
    waiting.clear();
}
