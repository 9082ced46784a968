//! The request a piece of work comes from. The API runs each request inside
//! [`with_request_id`]; a job enqueued while it runs stores the id ([`crate::job_store::insert`]),
//! and the worker that runs the job logs every line of its run with it, so one id follows a
//! request into the worker that did its work.

use std::future::Future;

tokio::task_local! {
    static REQUEST_ID: String;
}

/// Runs `fut` as the work of request `id`.
pub async fn with_request_id<F: Future>(id: String, fut: F) -> F::Output {
    REQUEST_ID.scope(id, fut).await
}

/// The id of the request the current task serves, if it serves one (a worker's or the
/// scheduler's own work serves none).
pub fn current_request_id() -> Option<String> {
    REQUEST_ID
        .try_with(|id| id.clone())
        .ok()
        .filter(|id| !id.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_id_is_seen_inside_its_scope_only() {
        assert_eq!(current_request_id(), None);
        let inside = with_request_id("req-1".to_owned(), async { current_request_id() }).await;
        assert_eq!(inside.as_deref(), Some("req-1"));
        assert_eq!(current_request_id(), None);
        let empty = with_request_id(String::new(), async { current_request_id() }).await;
        assert_eq!(empty, None);
    }
}
