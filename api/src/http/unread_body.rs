//! Keeping a keep-alive connection usable after a request whose body was not read.
//!
//! A request refused before its body is read (no token: 401; roles: 403; an unknown route: 404)
//! leaves the body's bytes on the connection. When they have not all arrived by the time the
//! answer is written, hyper cannot tell where the next request starts, so it closes the
//! connection after the answer, without saying so: a client that sends its next request on the
//! same connection finds it closed with no answer (a network error for a valid request; about
//! 2 % of such pairs, measured over HTTP). Here, whatever the handler did not read of a body is
//! handed back when the handler drops it; the rest is then read and thrown away (at most
//! [`DRAIN_MAX_BYTES`], for at most [`DRAIN_WAIT`]) before the answer goes out, and when that
//! cannot be done (a large upload refused, a client that stops sending) the answer says
//! `Connection: close`, so the client knows to open a new connection.

use std::{
    pin::Pin,
    sync::{Arc, Mutex},
    task::{Context, Poll},
    time::Duration,
};

use axum::{
    body::{Body, Bytes, HttpBody},
    extract::Request,
    http::{HeaderValue, header},
    middleware::Next,
    response::Response,
};
use http_body::{Frame, SizeHint};
use http_body_util::BodyExt as _;

/// The most unread bytes read and dropped to keep a connection: more than any body the API
/// takes (`BODY_LIMIT_BYTES`, 40 MiB by default), so that a refused upload is read to its end
/// too. Its answer is not sent before, so that a client still sending never meets a connection
/// closed under it (a reset, which it would see instead of the refusal).
pub const DRAIN_MAX_BYTES: u64 = 64 * 1024 * 1024;

/// How long the rest of a body may take to arrive before the connection is given up instead
/// (then the answer says `Connection: close`).
pub const DRAIN_WAIT: Duration = Duration::from_secs(2);

/// Where a body the handler dropped unread is handed back.
type Slot = Arc<Mutex<Option<Body>>>;

/// The request body as the handler sees it: the same frames; dropped before its end, it hands
/// what is left to the [`Slot`].
struct Tracked {
    inner: Option<Body>,
    slot: Slot,
}

impl HttpBody for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let Some(inner) = self.inner.as_mut() else {
            return Poll::Ready(None);
        };
        let polled = Pin::new(inner).poll_frame(cx);
        // At the end (or on an error, after which nothing more can be read) there is nothing
        // left to hand back.
        if matches!(polled, Poll::Ready(None | Some(Err(_)))) {
            self.inner = None;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.as_ref().is_none_or(HttpBody::is_end_stream)
    }

    fn size_hint(&self) -> SizeHint {
        self.inner
            .as_ref()
            .map_or_else(|| SizeHint::with_exact(0), HttpBody::size_hint)
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        if let Some(rest) = self.inner.take()
            && !rest.is_end_stream()
            && let Ok(mut slot) = self.slot.lock()
        {
            *slot = Some(rest);
        }
    }
}

/// The middleware (outermost, so that it sees the body as the connection delivers it).
pub async fn keep_connection_usable(req: Request, next: Next) -> Response {
    if req.body().is_end_stream() {
        // No body (GET, DELETE, an empty POST): nothing can be left on the connection.
        return next.run(req).await;
    }
    // A client that asked to be told before it sends its body (`Expect: 100-continue`) and was
    // refused has sent none: reading would invite it to send what was refused. Its connection
    // closes instead, saying so.
    let awaits_continue = req
        .headers()
        .get(header::EXPECT)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"));
    let slot: Slot = Arc::default();
    let req = req.map(|body| {
        Body::new(Tracked {
            inner: Some(body),
            slot: slot.clone(),
        })
    });
    let mut res = next.run(req).await;
    let rest = slot.lock().ok().and_then(|mut slot| slot.take());
    if let Some(rest) = rest
        && (awaits_continue || !drain(rest).await)
    {
        res.headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    res
}

/// Reads and drops the rest of a body; `false` when it is larger than [`DRAIN_MAX_BYTES`], does
/// not arrive within [`DRAIN_WAIT`], or fails.
async fn drain(mut rest: Body) -> bool {
    if rest.size_hint().lower() > DRAIN_MAX_BYTES {
        return false;
    }
    let read_all = async {
        let mut read: u64 = 0;
        while let Some(frame) = rest.frame().await {
            let Ok(frame) = frame else {
                return false;
            };
            if let Some(data) = frame.data_ref() {
                read += data.len() as u64;
                if read > DRAIN_MAX_BYTES {
                    return false;
                }
            }
        }
        true
    };
    tokio::time::timeout(DRAIN_WAIT, read_all)
        .await
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use axum::{Router, routing::post};
    use tower::ServiceExt as _;

    use super::*;

    async fn refuse() -> axum::http::StatusCode {
        axum::http::StatusCode::UNAUTHORIZED
    }

    fn app() -> Router {
        Router::new()
            .route("/refuse", post(refuse))
            .route(
                "/read",
                post(|body: Bytes| async move { body.len().to_string() }),
            )
            .layer(axum::middleware::from_fn(keep_connection_usable))
    }

    fn post_body(path: &str, body: Body) -> Request {
        axum::http::Request::post(path).body(body).unwrap()
    }

    /// A body nobody read is read to its end before the answer: the connection can go on. The
    /// channel holds one frame, so the sender gets its later frames through only if they are
    /// read.
    #[tokio::test]
    async fn an_unread_small_body_is_drained_and_the_connection_kept() {
        let (tx, rx) =
            tokio::sync::mpsc::channel::<Result<Frame<Bytes>, std::convert::Infallible>>(1);
        let body = Body::new(http_body_util::StreamBody::new(tokio_stream_from(rx)));
        let sender = tokio::spawn(async move {
            for part in [&b"{\"a\":"[..], b"1", b"}"] {
                tx.send(Ok(Frame::data(Bytes::from_static(part))))
                    .await
                    .map_err(|_| "the body was dropped unread")?;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Ok::<_, &str>(())
        });
        let res = app().oneshot(post_body("/refuse", body)).await.unwrap();
        assert_eq!(res.status(), 401);
        assert!(res.headers().get(header::CONNECTION).is_none());
        assert_eq!(sender.await.unwrap(), Ok(()), "every frame was read");
    }

    /// A refused client that waits for `100 Continue` is not invited to send its body.
    #[tokio::test]
    async fn a_client_awaiting_continue_is_told_the_connection_closes() {
        let req = axum::http::Request::post("/refuse")
            .header(header::EXPECT, "100-continue")
            .header(header::CONTENT_LENGTH, "5")
            .body(Body::from("hello"))
            .unwrap();
        let res = app().oneshot(req).await.unwrap();
        assert_eq!(res.status(), 401);
        assert_eq!(res.headers()[header::CONNECTION], "close");
    }

    /// A body larger than the drain allows is not read: the answer says the connection closes.
    #[tokio::test]
    async fn an_unread_large_body_closes_the_connection() {
        let big = vec![b'x'; DRAIN_MAX_BYTES as usize + 1];
        let res = app()
            .oneshot(post_body("/refuse", Body::from(big)))
            .await
            .unwrap();
        assert_eq!(res.status(), 401);
        assert_eq!(res.headers()[header::CONNECTION], "close");
    }

    /// A body the handler read whole leaves nothing to do.
    #[tokio::test]
    async fn a_read_body_is_left_alone() {
        let big = vec![b'x'; 1024 * 1024];
        let res = app()
            .oneshot(post_body("/read", Body::from(big)))
            .await
            .unwrap();
        assert_eq!(res.status(), 200);
        assert!(res.headers().get(header::CONNECTION).is_none());
    }

    fn tokio_stream_from<T>(
        mut rx: tokio::sync::mpsc::Receiver<T>,
    ) -> impl futures::Stream<Item = T> {
        futures::stream::poll_fn(move |cx| rx.poll_recv(cx))
    }
}
