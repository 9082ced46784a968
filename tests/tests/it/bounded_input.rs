//! Input far larger than any valid one, and the connection after a refusal (issue 27): a body
//! past its limit is refused before it is parsed, an array past its maximum before its members
//! are read, an answer lists at most 20 problems, and a refused request leaves its keep-alive
//! connection usable for the next one.

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};
use sqlx::PgPool;
use tests::{TestApp, json as read_json};
use tokio::{
    io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader},
    net::TcpStream,
};

use crate::auth::assert_error_shape;

/// One HTTP/1.1 connection, written and read by hand so that the test knows it is the same
/// connection throughout (a pooled client would quietly open another).
struct Connection {
    stream: BufReader<TcpStream>,
}

/// What came back: the status, whether the server said `Connection: close`, the body.
struct Answer {
    status: u16,
    closes: bool,
    body: Vec<u8>,
}

impl Connection {
    async fn open(app: &TestApp) -> Connection {
        let addr = app.base.trim_start_matches("http://");
        let stream = TcpStream::connect(addr).await.unwrap();
        stream.set_nodelay(true).unwrap();
        Connection {
            stream: BufReader::new(stream),
        }
    }

    /// Sends the head, then (after `pause`, long enough for a server that answers before
    /// reading the body to have answered) the body.
    async fn send(&mut self, head: &str, body: &[u8], pause: Duration) -> std::io::Result<()> {
        let stream = self.stream.get_mut();
        stream.write_all(head.as_bytes()).await?;
        stream.flush().await?;
        if !body.is_empty() {
            tokio::time::sleep(pause).await;
            stream.write_all(body).await?;
            stream.flush().await?;
        }
        Ok(())
    }

    /// One answer; an error when the connection ends before a whole one arrived.
    async fn read(&mut self) -> std::io::Result<Answer> {
        let eof = || std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "closed");
        let mut line = String::new();
        if self.stream.read_line(&mut line).await? == 0 {
            return Err(eof());
        }
        let status: u16 = line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(eof)?;
        let (mut length, mut chunked, mut closes) = (0usize, false, false);
        loop {
            line.clear();
            if self.stream.read_line(&mut line).await? == 0 {
                return Err(eof());
            }
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            let (name, value) = header.split_once(':').ok_or_else(eof)?;
            let (name, value) = (name.to_ascii_lowercase(), value.trim().to_ascii_lowercase());
            match name.as_str() {
                "content-length" => length = value.parse().map_err(|_| eof())?,
                "transfer-encoding" => chunked = value.contains("chunked"),
                "connection" => closes = value == "close",
                _ => {}
            }
        }
        let mut body = Vec::new();
        if chunked {
            loop {
                line.clear();
                self.stream.read_line(&mut line).await?;
                let size = usize::from_str_radix(line.trim(), 16).map_err(|_| eof())?;
                let mut chunk = vec![0; size + 2];
                self.stream.read_exact(&mut chunk).await?;
                if size == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..size]);
            }
        } else {
            body.resize(length, 0);
            self.stream.read_exact(&mut body).await?;
        }
        Ok(Answer {
            status,
            closes,
            body,
        })
    }
}

/// How a refusal followed by a valid request on the same connection went, over many pairs.
#[derive(Debug, Default)]
struct Pairs {
    /// A request that found the connection closed with no answer (what a client sees as a
    /// network error).
    lost: usize,
    /// Refusals answered with `Connection: close` (the client then opens another).
    closed_by_answer: usize,
}

/// Sends `pairs` times the refused request `head` + `body` (expecting `refused`), then a valid
/// GET, on one keep-alive connection.
async fn refused_then_valid(
    app: &TestApp,
    head: &str,
    body: &[u8],
    refused: u16,
    pairs: usize,
) -> Pairs {
    let valid = format!(
        "GET /maintenance/work-orders HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {}\r\n\r\n",
        app.idp.token(&["admin"])
    );
    let mut counts = Pairs::default();
    let mut conn = Connection::open(app).await;
    for i in 0..pairs {
        // Every other pair sends the body late: the refusal is then written before the body has
        // arrived, the case where the connection used to be dropped.
        let pause = Duration::from_millis(if i % 2 == 0 { 2 } else { 0 });
        let first = match conn.send(head, body, pause).await {
            Ok(()) => conn.read().await,
            Err(e) => Err(e),
        };
        match first {
            Ok(answer) => {
                assert_eq!(
                    answer.status,
                    refused,
                    "{}",
                    String::from_utf8_lossy(&answer.body)
                );
                if answer.closes {
                    counts.closed_by_answer += 1;
                    conn = Connection::open(app).await;
                }
            }
            Err(_) => {
                counts.lost += 1;
                conn = Connection::open(app).await;
                continue;
            }
        }
        let second = match conn.send(&valid, b"", Duration::ZERO).await {
            Ok(()) => conn.read().await,
            Err(e) => Err(e),
        };
        match second {
            Ok(answer) => {
                assert_eq!(answer.status, 200);
                if answer.closes {
                    conn = Connection::open(app).await;
                }
            }
            Err(_) => {
                counts.lost += 1;
                conn = Connection::open(app).await;
            }
        }
    }
    counts
}

fn post_head(path: &str, token: Option<&str>, content_type: &str, length: usize) -> String {
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    format!(
        "POST {path} HTTP/1.1\r\nHost: t\r\n{auth}Content-Type: {content_type}\r\nContent-Length: {length}\r\n\r\n"
    )
}

/// Every kind of refusal made before the body is read (no token, a role that may not, a
/// multipart form a role may not send, an unknown route, a content type the route does not
/// read) leaves the connection usable: 500 refused-then-valid pairs each on one connection, and
/// not one request finds the connection closed without an answer.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_refusal_leaves_the_connection_usable(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    let viewer = app.idp.token(&["viewer"]);
    let admin = app.idp.token(&["admin"]);
    let order = json!({"villaId": uuid::Uuid::nil(), "title": "Leaking tap", "priority": "HIGH",
        "description": "The guest bathroom tap drips all night long."})
    .to_string();
    let schedule = json!({"templateId": uuid::Uuid::nil(), "villaId": uuid::Uuid::nil(),
        "frequency": "MONTHLY"})
    .to_string();
    let boundary = "----villa-boundary";
    let form = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"workOrderId\"\r\n\r\n{}\r\n\
         --{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"note.txt\"\r\n\
         Content-Type: text/plain\r\n\r\n{}\r\n--{boundary}--\r\n",
        uuid::Uuid::nil(),
        "The pool pump hums loudly. ".repeat(40)
    );
    let multipart = format!("multipart/form-data; boundary={boundary}");
    let cases: [(&str, String, &[u8], u16); 5] = [
        (
            "no token",
            post_head(
                "/maintenance/work-orders",
                None,
                "application/json",
                order.len(),
            ),
            order.as_bytes(),
            401,
        ),
        (
            "viewer's schedule",
            post_head(
                "/maintenance/pmp/schedules",
                Some(&viewer),
                "application/json",
                schedule.len(),
            ),
            schedule.as_bytes(),
            403,
        ),
        (
            "viewer's multipart field note",
            post_head(
                "/maintenance/field-notes",
                Some(&viewer),
                &multipart,
                form.len(),
            ),
            form.as_bytes(),
            403,
        ),
        (
            "unknown route",
            post_head(
                "/maintenance/no-such-thing",
                Some(&admin),
                "application/json",
                order.len(),
            ),
            order.as_bytes(),
            404,
        ),
        (
            "content type not read",
            post_head(
                "/maintenance/work-orders",
                Some(&admin),
                "text/plain",
                order.len(),
            ),
            order.as_bytes(),
            415,
        ),
    ];
    for (name, head, body, refused) in cases {
        let counts = refused_then_valid(&app, &head, body, refused, 500).await;
        println!("{name}: {counts:?}");
        assert_eq!(counts.lost, 0, "{name}: {counts:?}");
        // Small bodies are read to their end: the connection is kept, not closed.
        assert_eq!(counts.closed_by_answer, 0, "{name}: {counts:?}");
    }

    // A refused upload of 1.5 MB, more than the server reads ahead: it used to close the
    // connection after each refusal (and now and then without saying so); now the rest is read
    // and the connection kept.
    let upload = format!(
        "{{\"villaId\":\"{}\",\"documentType\":\"CONTRACT\",\"fileName\":\"c.pdf\",\"fileContent\":\"{}\"}}",
        uuid::Uuid::nil(),
        "QUJD".repeat(375_000)
    );
    let head = post_head(
        "/api/documents/upload",
        None,
        "application/json",
        upload.len(),
    );
    let counts = refused_then_valid(&app, &head, upload.as_bytes(), 401, 50).await;
    println!("no token, 1.5 MB upload: {counts:?}");
    assert_eq!(counts.lost, 0, "{counts:?}");
    assert_eq!(counts.closed_by_answer, 0, "{counts:?}");
}

/// A refused body that does not arrive within the wait for it: the answer says `Connection:
/// close`, and the next request on a new connection is served.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_large_refused_body_closes_the_connection_saying_so(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    let body = vec![b' '; 3 * 1024 * 1024];
    let head = post_head(
        "/maintenance/work-orders",
        None,
        "application/json",
        body.len(),
    );
    let mut conn = Connection::open(&app).await;
    conn.send(&head, b"", Duration::ZERO).await.unwrap();
    let answer = conn.read().await.unwrap();
    assert_eq!(answer.status, 401);
    assert!(answer.closes, "the answer must say the connection closes");
    let (status, _) = read_json(app.get("/maintenance/work-orders", "admin").await).await;
    assert_eq!(status, 200);
}

/// The export request that took hundreds of megabytes and a core: a body past the JSON limit is
/// a 413 before it is parsed; an array past its maximum a 400 before its members are read, in
/// well under a second and a few hundred bytes of answer.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn an_export_request_far_larger_than_any_valid_one_is_refused_at_once(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    let zeros = |n: usize| {
        let mut body = String::from(r#"{"type":"reservations","listingIds":["#);
        body.push_str(&vec!["0"; n].join(","));
        body.push_str("]}");
        body
    };
    let send = |body: String| {
        app.request(Method::POST, "/reporting/export", Some("viewer"))
            .header("content-type", "application/json")
            .body(body)
            .send()
    };

    // 6 MB: past the 1 MiB a JSON body may be.
    let body = zeros(3_000_000);
    let started = Instant::now();
    let res = send(body).await.unwrap();
    let (status, body) = read_json(res).await;
    assert_eq!(status, 413, "{body}");
    assert_error_shape("reporting", &body, 413, "PAYLOAD_TOO_LARGE");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("1048576")
    );
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );

    // Just under 1 MiB: 500,000 members, refused by their count before the body is parsed.
    let body = zeros(500_000);
    let started = Instant::now();
    let res = send(body).await.unwrap();
    let text = res.text().await.unwrap();
    let elapsed = started.elapsed();
    let body: Value = serde_json::from_str(&text).unwrap();
    assert_error_shape("reporting", &body, 400, "VALIDATION_ERROR");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("more than 50000 JSON values"),
        "{body}"
    );
    assert!(text.len() < 1_000, "an answer of {} bytes", text.len());
    assert!(elapsed < Duration::from_secs(2), "{elapsed:?}");

    // 40,000 members: parsed, and refused by the array's length before they are read.
    let res = send(zeros(40_000)).await.unwrap();
    let body: Value = serde_json::from_str(&res.text().await.unwrap()).unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("listingIds holds 40000 items; at most 500 are allowed"),
        "{body}"
    );

    // Ids in number: 500 distinct ids are a valid size (unknown ones, each named); the same
    // id 500 times counts once.
    let ids: Vec<String> = (0..500).map(|_| uuid::Uuid::new_v4().to_string()).collect();
    let (status, body) = read_json(
        app.post_json(
            "/reporting/export",
            "viewer",
            &json!({"type": "reservations", "listingIds": ids}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 400);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no listing has the id")
    );
    let mut ids = ids;
    ids.push(uuid::Uuid::new_v4().to_string());
    let (status, body) = read_json(
        app.post_json(
            "/reporting/export",
            "viewer",
            &json!({"type": "reservations", "listingIds": ids}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 400);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("at most 500 are allowed"),
        "{body}"
    );
}

/// However many problems a body has, the answer lists the first 20 and says how many more
/// there were (a transfer of 200 lines, each with two bad members: 400 problems).
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn an_answer_lists_twenty_problems_and_counts_the_rest(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    let lines: Vec<Value> = (0..200)
        .map(|_| json!({"itemId": "not-an-id", "quantity": -1}))
        .collect();
    let (status, body) = read_json(
        app.post_json(
            "/inventory/transfers",
            "admin",
            &json!({"sourceLocationId": uuid::Uuid::new_v4(),
                "destinationLocationId": uuid::Uuid::new_v4(), "items": lines}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 400);
    assert_error_shape("inventory", &body, 400, "VALIDATION_ERROR");
    let fields = body["error"]["details"]["fields"].as_array().unwrap();
    assert_eq!(fields.len(), 21, "{body}");
    assert_eq!(fields[0]["field"], "items[0].itemId");
    let last = fields[20]["message"].as_str().unwrap();
    assert!(
        last.starts_with("380 more problems are not listed"),
        "{last}"
    );
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("400 problems in the request; the first 20 are listed"),
        "{body}"
    );
}

/// A JSON body without files is limited to 1 MiB (413 in the surface's shape); a base64 upload
/// route takes more.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn json_bodies_are_limited_to_what_their_largest_valid_value_needs(pool: PgPool) {
    let app = TestApp::spawn(pool).await;
    let notes = "x".repeat(1024 * 1024);
    let (status, body) = read_json(
        app.post_json(
            "/maintenance/work-orders",
            "admin",
            &json!({"villaId": uuid::Uuid::nil(), "title": "t", "notes": notes}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 413);
    assert_error_shape("maintenance", &body, 413, "PAYLOAD_TOO_LARGE");

    // 1.5 MB of file in base64 to the onboarding document upload: past 1 MiB, still read (an
    // unknown villa is what it answers).
    let content = "QUJD".repeat(400_000);
    let (status, body) = read_json(
        app.post_json(
            "/api/documents/upload",
            "admin",
            &json!({"villaId": uuid::Uuid::new_v4(), "documentType": "CONTRACT",
                "fileName": "contract.pdf", "fileContent": content}),
        )
        .await,
    )
    .await;
    assert_ne!(status, 413, "{body}");
}
