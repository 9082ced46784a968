//! Every operation that reads a JSON body, taken from the API description, answers input past
//! its documented limits at once (issue 27): a body past the JSON limit (or, for routes that
//! carry files in base64, past the API's body limit) is a 413; an array one past its `maxItems`
//! and a string one past its `maxLength` are a 4xx; an array of exactly `maxItems` is no 5xx;
//! each within a second; and the API's resident memory grows by less than 50 MB over a whole
//! pass. Its own test binary, so that the memory measured is this pass's alone.

use std::time::{Duration, Instant};

use domain::settings::{PmsCredentials, PmsSettings, WebhookCredentials};
use reqwest::Method;
use serde_json::{Map, Value, json};
use sqlx::PgPool;
use tests::{TestApp, TestAppOptions};

/// The Hostaway webhook's credentials in this test.
const WEBHOOK_USER: &str = "hostaway";
const WEBHOOK_PASSWORD: &str = "a-long-webhook-password";

/// The resident and peak resident memory of this process (the API runs in it), in bytes.
fn memory() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .unwrap_or(0)
            * 1024
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// `schema` with its `$ref`s followed (one level at a time, as the walk needs them).
fn resolve<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    match schema["$ref"].as_str() {
        Some(r) => {
            let name = r.rsplit('/').next().unwrap();
            resolve(doc, &doc["components"]["schemas"][name])
        }
        None => schema,
    }
}

/// Whether the body carries files: base64 text somewhere in its schema (a member's
/// `contentEncoding`, or a member that may hold another body's, as its description says).
fn carries_files(doc: &Value, schema: &Value, depth: usize) -> bool {
    if depth > 8 {
        return false;
    }
    let schema = resolve(doc, schema);
    match schema {
        Value::String(text) => text.contains("base64"),
        Value::Object(map) => map.values().any(|v| carries_files(doc, v, depth + 1)),
        Value::Array(items) => items.iter().any(|v| carries_files(doc, v, depth + 1)),
        _ => false,
    }
}

/// A small member of the type `schema` describes.
fn sample(doc: &Value, schema: &Value) -> Value {
    let schema = resolve(doc, schema);
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    let kind = match &schema["type"] {
        Value::String(t) => t.clone(),
        Value::Array(types) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("string")
            .to_owned(),
        _ => "object".to_owned(),
    };
    match kind.as_str() {
        "string" if schema["format"] == "uuid" => json!(uuid::Uuid::new_v4()),
        "string" if schema["format"] == "date" => json!("2026-03-01"),
        "string" => json!("x"),
        "integer" | "number" => json!(1),
        "boolean" => json!(true),
        "array" => json!([]),
        _ => json!({}),
    }
}

/// A body sent as it is made, so that this process never holds a large one (its memory is the
/// API's, measured here).
enum Body {
    Small(Vec<u8>),
    /// `{"padding":"xxx…"}` of `len` bytes.
    Padded(usize),
}

impl Body {
    fn into_request(self) -> (reqwest::Body, usize) {
        match self {
            Body::Small(bytes) => {
                let len = bytes.len();
                (reqwest::Body::from(bytes), len)
            }
            Body::Padded(len) => {
                const HEAD: &[u8] = b"{\"padding\":\"";
                const TAIL: &[u8] = b"\"}";
                const CHUNK: usize = 64 * 1024;
                let filler = len - HEAD.len() - TAIL.len();
                let chunks = std::iter::once(bytes::Bytes::from_static(HEAD))
                    .chain((0..filler.div_ceil(CHUNK)).map(move |i| {
                        let n = CHUNK.min(filler - i * CHUNK);
                        bytes::Bytes::from(vec![b'x'; n])
                    }))
                    .chain(std::iter::once(bytes::Bytes::from_static(TAIL)))
                    .map(Ok::<_, std::io::Error>);
                (
                    reqwest::Body::wrap_stream(futures::stream::iter(chunks)),
                    len,
                )
            }
        }
    }
}

struct Probe {
    label: String,
    body: Body,
    /// What the answer must be.
    expect: fn(u16) -> bool,
    expected: &'static str,
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn every_operation_answers_input_past_its_limits_at_once(pool: PgPool) {
    // The webhook configured, so that its route reads bodies (it checks Basic credentials,
    // sent below to every operation the description secures with `basic`, before the body).
    let options = TestAppOptions {
        pms: Some(PmsSettings {
            credentials: Some(PmsCredentials {
                client_id: "70123".to_owned(),
                client_secret: "secret".to_owned(),
            }),
            webhook: Some(WebhookCredentials {
                user: WEBHOOK_USER.to_owned(),
                password: WEBHOOK_PASSWORD.to_owned(),
            }),
            ..PmsSettings::default()
        }),
        ..TestAppOptions::default()
    };
    let body_limit = options.body_limit_bytes;
    let app = TestApp::spawn_with(pool, options).await;
    let doc = serde_json::to_value(api::openapi_document()).unwrap();
    let json_limit = api::extract::JSON_BODY_LIMIT;
    let mut failures: Vec<String> = Vec::new();
    let mut sent = 0;
    let mut slowest = Duration::ZERO;
    // Twice: the first pass also fills this process's caches of its own (the answers' schema
    // validators, one per operation and status, which the API does not have); the memory the
    // API keeps is what the second pass adds.
    let mut baseline = 0;
    for pass in 0..2 {
        if pass == 1 {
            baseline = memory().0;
        }
        for (template, item) in doc["paths"].as_object().unwrap() {
            for (method, op) in item.as_object().unwrap() {
                let Some(schema) = op["requestBody"]["content"]["application/json"].get("schema")
                else {
                    continue;
                };
                let mut path = template.clone();
                for param in op["parameters"].as_array().into_iter().flatten() {
                    if param["in"] == "path" {
                        let name = param["name"].as_str().unwrap();
                        let value = if resolve(&doc, &param["schema"])["type"] == "integer" {
                            "8".to_owned()
                        } else {
                            uuid::Uuid::new_v4().to_string()
                        };
                        path = path.replace(&format!("{{{name}}}"), &value);
                    }
                }
                let files = carries_files(&doc, schema, 0);
                let basic = op["security"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|scheme| scheme.get("basic").is_some());
                // The wizard's autosave answers every failure with 200 `{success: false}`.
                let never_an_error = op["responses"]["200"]["description"]
                    .as_str()
                    .is_some_and(|d| d.contains("never an error status"));
                let mut probes = Vec::new();
                // Past the body limit of its kind: 413 before anything is parsed.
                let past = if files { body_limit } else { json_limit } + 1;
                probes.push(Probe {
                    label: format!("{past} bytes"),
                    body: Body::Padded(past),
                    expect: |s| s == 413,
                    expected: "413",
                });
                // Each top-level array and string past its maximum, and each array at it.
                let body_schema = resolve(&doc, schema);
                for (name, member) in body_schema["properties"].as_object().into_iter().flatten() {
                    let member = resolve(&doc, member);
                    if let Some(max) = member["maxItems"].as_u64() {
                        let one = sample(&doc, &member["items"]);
                        for (n, expect, expected) in [
                            (
                                max + 1,
                                (|s| (400..500).contains(&s)) as fn(u16) -> bool,
                                "4xx",
                            ),
                            (max, (|s| s < 500) as fn(u16) -> bool, "no 5xx"),
                        ] {
                            let mut body = Map::new();
                            body.insert(name.clone(), Value::Array(vec![one.clone(); n as usize]));
                            probes.push(Probe {
                                label: format!("{name}: {n} items (maxItems {max})"),
                                body: Body::Small(serde_json::to_vec(&body).unwrap()),
                                expect,
                                expected,
                            });
                        }
                    }
                    if let Some(max) = member["maxLength"].as_u64() {
                        let mut body = Map::new();
                        body.insert(name.clone(), json!("x".repeat(max as usize + 1)));
                        probes.push(Probe {
                            label: format!("{name}: {} characters (maxLength {max})", max + 1),
                            body: Body::Small(serde_json::to_vec(&body).unwrap()),
                            expect: |s| (400..500).contains(&s),
                            expected: "4xx",
                        });
                    }
                }
                for probe in probes {
                    // A caller of its own per request: the reporting surface's rate limits count
                    // per caller, and this pass is not about them.
                    let mut claims = app.idp.claims(&["admin"]);
                    claims["sub"] = json!(format!("limits-{}", uuid::Uuid::new_v4().simple()));
                    let (body, len) = probe.body.into_request();
                    let started = Instant::now();
                    let request = app.http.request(
                        method.to_uppercase().parse::<Method>().unwrap(),
                        app.url(&path),
                    );
                    let request = if basic {
                        request.basic_auth(WEBHOOK_USER, Some(WEBHOOK_PASSWORD))
                    } else {
                        request.bearer_auth(app.idp.sign("k1", &claims))
                    };
                    let res = request
                        .header("content-type", "application/json")
                        .header("content-length", len)
                        .body(body)
                        .send()
                        .await
                        .unwrap();
                    let status = res.status().as_u16();
                    let _ = res.bytes().await;
                    let took = started.elapsed();
                    slowest = slowest.max(took);
                    sent += 1;
                    let label = format!("{} {path}, {}", method.to_uppercase(), probe.label);
                    if never_an_error {
                        if status != 200 {
                            failures.push(format!("{label}: {status}, expected 200"));
                        }
                    } else if !(probe.expect)(status) {
                        failures.push(format!("{label}: {status}, expected {}", probe.expected));
                    }
                    if took > Duration::from_secs(1) {
                        failures.push(format!("{label}: answered in {took:?}"));
                    }
                }
            }
        }
    }
    let (after, peak) = memory();
    println!(
        "{sent} requests in two passes; slowest {slowest:?}; resident {} MB before the second, {} MB after it, peak {} MB",
        baseline / 1_000_000,
        after / 1_000_000,
        peak / 1_000_000
    );
    assert!(
        sent > 100,
        "only {sent} probes: the walk missed the operations"
    );
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(
        after.saturating_sub(baseline) < 50_000_000,
        "resident memory grew by {} MB",
        (after - baseline) / 1_000_000
    );
}
