//! Keeps the API description honest: every answer a test receives is checked against the
//! OpenAPI document the API serves. The operation is found from the request's method and path,
//! the status must be one the operation documents, and a JSON answer must validate against the
//! declared schema (JSON Schema 2020-12, formats asserted). A [`TestApp`](crate::TestApp) fails
//! its test when any answer did not conform, listing each.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use axum::{
    body::{Body, to_bytes},
    extract::{Request, State},
    middleware::Next,
    response::Response,
};
use serde_json::Value;

/// The document, its operations, compiled validators and what failed.
pub struct DocCheck {
    doc: Value,
    /// (method, path template, its segments)
    operations: Vec<(String, String, Vec<String>)>,
    validators: Mutex<HashMap<String, Arc<jsonschema::Validator>>>,
    failures: Mutex<Vec<String>>,
    checked: Mutex<Vec<String>>,
}

impl DocCheck {
    pub fn new(doc: &utoipa::openapi::OpenApi) -> Arc<DocCheck> {
        let doc = serde_json::to_value(doc).expect("the document serializes");
        let mut operations = Vec::new();
        if let Some(paths) = doc["paths"].as_object() {
            for (template, item) in paths {
                for method in ["get", "post", "put", "patch", "delete"] {
                    if item.get(method).is_some() {
                        operations.push((
                            method.to_uppercase(),
                            template.clone(),
                            template.split('/').map(str::to_owned).collect(),
                        ));
                    }
                }
            }
        }
        Arc::new(DocCheck {
            doc,
            operations,
            validators: Mutex::new(HashMap::new()),
            failures: Mutex::new(Vec::new()),
            checked: Mutex::new(Vec::new()),
        })
    }

    /// The documented operation a request is for: literal segments must match, a `{param}`
    /// matches any segment; the template with the most literal segments wins.
    fn operation(&self, method: &str, path: &str) -> Option<&str> {
        let segments: Vec<&str> = path.split('/').collect();
        self.operations
            .iter()
            .filter(|(m, _, parts)| {
                m == method
                    && parts.len() == segments.len()
                    && parts.iter().zip(&segments).all(|(t, s)| {
                        (t.starts_with('{') && t.ends_with('}') && !s.is_empty()) || t == s
                    })
            })
            .max_by_key(|(_, _, parts)| parts.iter().filter(|p| !p.starts_with('{')).count())
            .map(|(_, template, _)| template.as_str())
    }

    fn fail(&self, what: String) {
        self.failures.lock().unwrap().push(what);
    }

    /// What did not conform, one line each.
    pub fn failures(&self) -> Vec<String> {
        self.failures.lock().unwrap().clone()
    }

    /// What did not conform, forgotten (for a test that provokes it on purpose).
    pub fn take_failures(&self) -> Vec<String> {
        std::mem::take(&mut *self.failures.lock().unwrap())
    }

    /// `METHOD template status` of every answer checked.
    pub fn checked(&self) -> Vec<String> {
        self.checked.lock().unwrap().clone()
    }

    fn validator(&self, key: &str, schema: &Value) -> Option<Arc<jsonschema::Validator>> {
        let mut cache = self.validators.lock().unwrap();
        if let Some(v) = cache.get(key) {
            return Some(v.clone());
        }
        // The schema refers to `#/components/schemas/...`: resolve those against a root that
        // carries the document's components beside the schema.
        let mut root = schema.clone();
        if let Value::Object(map) = &mut root {
            map.insert("components".into(), self.doc["components"].clone());
        }
        match jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .should_validate_formats(true)
            .build(&root)
        {
            Ok(v) => {
                let v = Arc::new(v);
                cache.insert(key.to_owned(), v.clone());
                Some(v)
            }
            Err(e) => {
                self.fail(format!("{key}: the declared schema does not compile: {e}"));
                None
            }
        }
    }
}

/// `documented` (`image/*`, `*/*`, `application/json`) covers `actual`.
fn media_matches(documented: &str, actual: &str) -> bool {
    match documented.split_once('/') {
        Some(("*", "*")) => true,
        Some((kind, "*")) => actual.split('/').next() == Some(kind),
        _ => documented == actual,
    }
}

fn bodyless(status: &str) -> bool {
    matches!(status, "204" | "304")
}

/// Middleware: runs the request, then checks its answer against the document.
pub async fn check(State(c): State<Arc<DocCheck>>, req: Request, next: Next) -> Response {
    let method = req.method().as_str().to_owned();
    let path = req.uri().path().to_owned();
    let res = next.run(req).await;
    let Some(template) = c.operation(&method, &path).map(str::to_owned) else {
        return res;
    };
    let status = res.status().as_u16().to_string();
    let label = format!("{method} {template} {status}");
    c.checked.lock().unwrap().push(label.clone());
    let op = &c.doc["paths"][&template][method.to_lowercase()];
    let Some(spec) = op["responses"]
        .get(&status)
        .or_else(|| op["responses"].get("default"))
    else {
        c.fail(format!("{label}: status not documented"));
        return res;
    };
    let media = res
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap_or_default().trim().to_owned());
    let documented: Vec<&String> = spec["content"]
        .as_object()
        .map(|c| c.keys().collect())
        .unwrap_or_default();
    let Some(media) = media else {
        if !documented.is_empty() && !bodyless(&status) {
            c.fail(format!(
                "{label}: no Content-Type, documented {documented:?}"
            ));
        }
        return res;
    };
    if !documented.iter().any(|d| media_matches(d, &media)) {
        c.fail(format!(
            "{label}: Content-Type {media} is not one of {documented:?}"
        ));
        return res;
    }
    if media != "application/json" {
        return res;
    }
    let Some(schema) = spec["content"]["application/json"]["schema"]
        .as_object()
        .map(|o| Value::Object(o.clone()))
    else {
        return res;
    };
    let (parts, body) = res.into_parts();
    let bytes = to_bytes(body, usize::MAX).await.unwrap_or_default();
    match serde_json::from_slice::<Value>(&bytes) {
        Err(e) => c.fail(format!("{label}: the answer is not JSON: {e}")),
        Ok(answer) => {
            if let Some(validator) = c.validator(&label, &schema) {
                let errors: Vec<String> = validator
                    .iter_errors(&answer)
                    .take(5)
                    .map(|e| format!("{} at {}", e, e.instance_path()))
                    .collect();
                if !errors.is_empty() {
                    let shown = answer.to_string();
                    let shown = &shown[..shown.len().min(600)];
                    c.fail(format!("{label}: {} in {shown}", errors.join("; ")));
                }
            }
        }
    }
    Response::from_parts(parts, Body::from(bytes))
}
