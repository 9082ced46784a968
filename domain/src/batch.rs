//! Request batching for hot reads: concurrent callers enqueue their keys, a loader takes
//! everything queued so far and answers all of it with one pass over the database (one query for
//! many ids, one query per distinct list filter), then hands each caller its answer.
//!
//! Unlike a cache this never serves an old answer: a caller is only ever answered by a load that
//! started after it asked (a load already running when a key arrives does not take that key; the
//! next one does), so it sees every write committed before its request. What batching saves is
//! the per-query cost (a round trip, two context switches, a pool checkout) that dominates a
//! primary-key read: under 32 concurrent readers, a batch carries several keys; a lone reader
//! waits for nothing.

use std::{
    collections::{HashMap, HashSet},
    hash::Hash,
    sync::Arc,
};

use futures::future::BoxFuture;
use tokio::sync::{Mutex, mpsc, oneshot};

use crate::{Error, Result};

/// At most this many keys per load (one statement's worth).
const MAX_KEYS: usize = 256;
/// Callers waiting beyond this many wait for room (backpressure, not unbounded memory).
const QUEUE: usize = 4_096;

/// Answers a set of distinct keys; a key missing from the map has no record.
pub type LoadFn<K, V> = dyn Fn(Vec<K>) -> BoxFuture<'static, Result<HashMap<K, V>>> + Send + Sync;

type Waiter<K, V> = (K, oneshot::Sender<std::result::Result<Option<V>, String>>);

pub struct Batcher<K, V> {
    queue: mpsc::Sender<Waiter<K, V>>,
}

impl<K, V> Batcher<K, V>
where
    K: Eq + Hash + Clone + Send + 'static,
    V: Clone + Send + 'static,
{
    /// Starts `loaders` loaders on the current tokio runtime; they stop when the batcher is
    /// dropped. Keys that arrive while every loader is busy wait for the next load, so fewer
    /// loaders make larger batches, and more keep a slow load from holding up the next.
    pub fn new(loaders: usize, load: Arc<LoadFn<K, V>>) -> Self {
        let (queue, receiver) = mpsc::channel(QUEUE);
        let receiver = Arc::new(Mutex::new(receiver));
        for _ in 0..loaders.max(1) {
            tokio::spawn(run(receiver.clone(), load.clone()));
        }
        Self { queue }
    }

    /// The record for `key` (`None`: there is none), read after this call began.
    pub async fn load(&self, key: K) -> Result<Option<V>> {
        let (reply, answer) = oneshot::channel();
        self.queue
            .send((key, reply))
            .await
            .map_err(|_| Error::Internal(anyhow::anyhow!("the batch loader has stopped")))?;
        answer
            .await
            .map_err(|_| Error::Internal(anyhow::anyhow!("the batch load was abandoned")))?
            .map_err(|message| Error::Internal(anyhow::anyhow!(message)))
    }
}

async fn run<K, V>(receiver: Arc<Mutex<mpsc::Receiver<Waiter<K, V>>>>, load: Arc<LoadFn<K, V>>)
where
    K: Eq + Hash + Clone + Send + 'static,
    V: Clone + Send + 'static,
{
    loop {
        // Holding the receiver while waiting makes this loader the one that gathers next; the
        // other may be in the database meanwhile.
        let batch = {
            let mut receiver = receiver.lock().await;
            let Some(first) = receiver.recv().await else {
                return;
            };
            let mut batch = vec![first];
            while batch.len() < MAX_KEYS {
                match receiver.try_recv() {
                    Ok(waiter) => batch.push(waiter),
                    Err(_) => break,
                }
            }
            batch
        };
        let keys: Vec<K> = batch
            .iter()
            .map(|(key, _)| key)
            .collect::<HashSet<_>>()
            .into_iter()
            .cloned()
            .collect();
        // In its own task, so that a panicking load fails its callers and not this loop.
        let outcome = match tokio::spawn(load(keys)).await {
            Ok(Ok(found)) => Ok(found),
            Ok(Err(error)) => Err(error.to_string()),
            Err(join) => Err(format!("batch load failed: {join}")),
        };
        if let Err(message) = &outcome {
            tracing::error!(error = %message, keys = batch.len(), "batch load failed");
        }
        for (key, reply) in batch {
            let answer = match &outcome {
                Ok(found) => Ok(found.get(&key).cloned()),
                Err(message) => Err(message.clone()),
            };
            // The caller may have gone (client disconnected): nothing to do.
            let _ = reply.send(answer);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// Keys are answered by the loads, concurrent callers share loads, duplicate keys are
    /// loaded once, absent keys are `None`, and a failing load fails only its own callers.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn batches_concurrent_keys() {
        let loads = Arc::new(AtomicUsize::new(0));
        let counted = loads.clone();
        let load: Arc<LoadFn<u32, String>> = Arc::new(move |keys: Vec<u32>| {
            counted.fetch_add(1, Ordering::SeqCst);
            Box::pin(async move {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                if keys.contains(&999) {
                    return Err(Error::Internal(anyhow::anyhow!("unlucky")));
                }
                let unique: HashSet<_> = keys.iter().collect();
                assert_eq!(unique.len(), keys.len(), "a key loaded twice in one batch");
                Ok(keys
                    .into_iter()
                    .filter(|k| k % 2 == 0)
                    .map(|k| (k, format!("v{k}")))
                    .collect())
            })
        });
        let batcher = Arc::new(Batcher::new(2, load));
        let callers: Vec<_> = (0..100u32)
            .map(|i| {
                let batcher = batcher.clone();
                tokio::spawn(async move { (i, batcher.load(i % 50).await) })
            })
            .collect();
        for caller in callers {
            let (i, answer) = caller.await.unwrap();
            let key = i % 50;
            assert_eq!(
                answer.unwrap(),
                (key % 2 == 0).then(|| format!("v{key}")),
                "key {key}"
            );
        }
        let used = loads.load(Ordering::SeqCst);
        assert!(used < 10, "100 concurrent callers took {used} loads");
        let failed = batcher.load(999).await;
        assert!(matches!(failed, Err(Error::Internal(_))), "{failed:?}");
        assert_eq!(batcher.load(4).await.unwrap().as_deref(), Some("v4"));
    }
}
