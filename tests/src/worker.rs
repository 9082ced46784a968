//! Workers run in the test process, each on a tokio runtime of its own in its own thread, so a
//! test can stop one gracefully ([`TestWorker::shutdown`]) or kill it outright
//! ([`TestWorker::kill`]: its runtime is dropped mid-flight, nothing of it runs again, no
//! hand-back happens — from Postgres's and Redis's view, the process died).

use std::{sync::Arc, thread::JoinHandle};

use domain::settings::CoreSettings;
use jobs::{JobQueues, JobRegistry, JobServices};
use sqlx::PgPool;
use tokio_util::sync::CancellationToken;
use workers::runtime::{self, Runtime};

pub struct TestWorker {
    pub name: String,
    stop: CancellationToken,
    kill: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl TestWorker {
    pub fn start(pool: PgPool, core: &CoreSettings, registry: JobRegistry) -> TestWorker {
        let name = runtime::process_name("test");
        let queues = JobQueues::new(&core.redis_url, &core.redis_prefix).unwrap();
        let services = Arc::new(JobServices::from_settings(core));
        let settings = core.jobs.clone();
        let stop = CancellationToken::new();
        let (kill_tx, kill_rx) = tokio::sync::oneshot::channel::<()>();
        let rt_name = name.clone();
        let token = stop.clone();
        // The pool is rebuilt on the worker's runtime: connections belong to the runtime that
        // opened them, and killing the worker must not break the test's own pool.
        let options = pool.connect_options().as_ref().clone();
        let thread = std::thread::spawn(move || {
            let tokio_rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            tokio_rt.block_on(async move {
                let pool = sqlx::postgres::PgPoolOptions::new()
                    .max_connections(10)
                    .connect_with(options)
                    .await
                    .unwrap();
                let rt = Arc::new(Runtime {
                    pool,
                    services,
                    queues,
                    registry,
                    settings,
                    name: rt_name.into(),
                });
                tokio::select! {
                    _ = runtime::run(rt, token) => {},
                    _ = kill_rx => {},
                }
            });
            // Dropping the runtime here, after a kill, abandons every task where it stands.
            tokio_rt.shutdown_background();
        });
        TestWorker {
            name,
            stop,
            kill: Some(kill_tx),
            thread: Some(thread),
        }
    }

    /// SIGTERM: stop taking work, let in-flight jobs finish within the grace, hand back the rest.
    pub async fn shutdown(mut self) {
        self.stop.cancel();
        self.join().await;
    }

    /// SIGKILL: the worker stops where it stands.
    pub async fn kill(mut self) {
        if let Some(kill) = self.kill.take() {
            let _ = kill.send(());
        }
        self.join().await;
    }

    async fn join(&mut self) {
        if let Some(thread) = self.thread.take() {
            tokio::task::spawn_blocking(move || thread.join())
                .await
                .unwrap()
                .unwrap();
        }
    }
}

impl Drop for TestWorker {
    fn drop(&mut self) {
        if let Some(kill) = self.kill.take() {
            let _ = kill.send(());
        }
    }
}
