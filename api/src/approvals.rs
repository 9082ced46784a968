//! `/approvals/{token}`: the owner's approval page, which the platform renders itself. Plain
//! HTML with its styles inline and no script, readable on a phone: the villa, the work order,
//! its photos, the owner-billed estimate lines, and a form to approve or decline with a note.
//! The signed token (`domain::maintenance::approvals::ApprovalLinks`) is the only credential. A
//! forged token or an unknown approval is a 404 page, a link already used, replaced or expired
//! a 410 page; neither changes anything. Every answer is a page, errors included.

use std::net::SocketAddr;

use axum::{
    Extension,
    body::Bytes,
    extract::{ConnectInfo, State},
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use domain::maintenance::approvals::{
    self, ApprovalPage, DECISIONS, LinkClosed, LinkDecision, MAX_NOTE,
};
use utoipa_axum::{router::OpenApiRouter, routes};
use uuid::Uuid;

use crate::{error::OwnBody, state::AppState};

crate::computed_schema!(
    /// The owner's answer as the page's form posts it (`application/x-www-form-urlencoded`).
    ApprovalForm => serde_json::json!({
        "type": "object",
        "required": ["decision", "seen"],
        "properties": {
            "decision": {"type": "string", "enum": DECISIONS, "description": "APPROVED or DECLINED (any letter case)."},
            "note": {"type": "string", "maxLength": MAX_NOTE,
                "description": "At most 2000 characters, no NUL; a declined work order's cancellation reason."},
            "seen": {"type": "string", "maxLength": 500, "example": "USD 620.00",
                "description": "The estimate the page showed (its hidden field): a decision on figures that have changed since is refused with the new page."},
        },
    })
);

/// A page answer: the status, the HTML, and the headers a page holding a credential in its
/// address needs (no caching, no referrer, no framing, nothing loaded from elsewhere).
fn page(status: StatusCode, title: &str, body: &str) -> Response {
    let html = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<meta name=\"robots\" content=\"noindex\"><title>{title}</title><style>{STYLE}</style></head>\
<body><main>{body}</main></body></html>\n",
        title = escape(title),
    );
    let mut res = (status, html).into_response();
    let headers = res.headers_mut();
    for (name, value) in [
        (header::CONTENT_TYPE, "text/html; charset=utf-8"),
        (header::CACHE_CONTROL, "no-store"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (
            header::CONTENT_SECURITY_POLICY,
            "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
        ),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    res.extensions_mut().insert(OwnBody);
    res
}

const STYLE: &str = "\
:root{color-scheme:light;font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;line-height:1.5;color:#1a1d21;background:#f4f5f7}\
body{margin:0}main{max-width:40rem;margin:0 auto;padding:1rem;background:#fff;min-height:100vh;box-sizing:border-box}\
h1{font-size:1.4rem;margin:.5rem 0}h2{font-size:1.1rem;margin:1.5rem 0 .5rem}\
p{margin:.5rem 0}.muted{color:#4a5059}.villa{font-weight:600}\
table{width:100%;border-collapse:collapse}th,td{text-align:left;padding:.5rem .25rem;border-bottom:1px solid #d5d8dd;vertical-align:top}\
td.amount,th.amount{text-align:right;white-space:nowrap}tfoot td{font-weight:700}\
.photos{display:flex;flex-wrap:wrap;gap:.5rem}.photos img{width:9rem;height:9rem;object-fit:cover;border-radius:.25rem;border:1px solid #d5d8dd}\
label{display:block;font-weight:600;margin:1rem 0 .25rem}textarea{width:100%;box-sizing:border-box;min-height:6rem;font:inherit;padding:.5rem;border:1px solid #6b7280;border-radius:.25rem}\
.actions{display:flex;flex-wrap:wrap;gap:.75rem;margin-top:1rem}\
button{font:inherit;font-weight:600;padding:.75rem 1.25rem;border-radius:.375rem;border:2px solid transparent;cursor:pointer;min-height:44px;flex:1 1 10rem}\
.approve{background:#146c2e;color:#fff}.decline{background:#fff;color:#9b1c1c;border-color:#9b1c1c}\
button:focus-visible,textarea:focus-visible{outline:3px solid #1d4ed8;outline-offset:2px}\
.notice{padding:.75rem 1rem;border-radius:.375rem;background:#eef2ff;border:1px solid #c7d2fe}";

/// HTML-escapes text for element content and quoted attributes.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A refusal the framework made before a handler ran (a body too large, a timeout), as a page.
pub fn refusal_page(status: StatusCode, message: &str) -> Response {
    page(
        status,
        "Request refused",
        &format!(
            "<h1>This request was refused</h1><p>{}</p><p>Nothing was changed. Open the link from \
             your message again.</p>",
            escape(message)
        ),
    )
}

fn not_found() -> Response {
    page(
        StatusCode::NOT_FOUND,
        "Link not valid",
        "<h1>This link is not valid</h1><p>Check that the whole address from the message was \
         opened. If it was, ask your villa manager for a new link.</p>",
    )
}

fn closed_page(closed: LinkClosed, shown: &ApprovalPage) -> Response {
    let (title, text) = match closed {
        LinkClosed::Used => {
            let decided = shown.decided.as_ref().map_or(String::new(), |(d, at)| {
                format!(
                    " It was {} on {}.",
                    d.to_lowercase(),
                    at.format("%Y-%m-%d at %H:%M UTC")
                )
            });
            (
                "Already answered",
                format!(
                    "This request has already been answered.{decided} Nothing was changed. \
                     Contact your villa manager to change the decision."
                ),
            )
        }
        LinkClosed::Replaced => (
            "Link replaced",
            "A newer request replaced this link, or the work no longer needs your approval. \
             Nothing was changed. Use the latest message you received."
                .to_owned(),
        ),
        LinkClosed::Expired => (
            "Link expired",
            "This link has expired. Nothing was changed. Ask your villa manager for a new one."
                .to_owned(),
        ),
        LinkClosed::NotAwaiting => (
            "No approval needed",
            "This work order no longer waits for your approval. Nothing was changed.".to_owned(),
        ),
    };
    page(
        StatusCode::GONE,
        title,
        &format!(
            "<h1>{}</h1><p class=\"villa\">{}</p><p>{}</p>",
            escape(title),
            escape(&shown.villa_name),
            escape(&text)
        ),
    )
}

/// The decision page: what the owner is asked to approve, and the form.
fn decision_page(token: &str, shown: &ApprovalPage, notice: Option<&str>) -> String {
    let mut body = String::new();
    if let Some(notice) = notice {
        body.push_str(&format!(
            "<p class=\"notice\" role=\"status\">{}</p>",
            escape(notice)
        ));
    }
    body.push_str(&format!(
        "<p class=\"villa\">{}{}</p><h1>Approval needed: {}</h1>",
        escape(&shown.villa_name),
        shown
            .villa_location
            .as_deref()
            .map_or(String::new(), |l| format!(
                " <span class=\"muted\">· {}</span>",
                escape(l)
            )),
        escape(&shown.title),
    ));
    body.push_str(&format!(
        "<p class=\"muted\">{} · priority {}</p>",
        escape(&shown.category.replace('_', " ").to_lowercase()),
        escape(&shown.priority.to_lowercase())
    ));
    if let Some(description) = &shown.description {
        body.push_str(&format!("<p>{}</p>", escape(description)));
    }
    if !shown.photo_ids.is_empty() {
        body.push_str("<h2>Photos</h2><div class=\"photos\">");
        for (i, id) in shown.photo_ids.iter().enumerate() {
            body.push_str(&format!(
                // Relative to the page (`/approvals/{token}`), so that a platform served under a
                // path prefix (PUBLIC_BASE_URL) finds them.
                "<a href=\"{token}/photos/{id}\"><img src=\"{token}/photos/{id}\" \
                 alt=\"Photo {n} of the work\" width=\"144\" height=\"144\" loading=\"lazy\"></a>",
                n = i + 1
            ));
        }
        body.push_str("</div>");
    }
    body.push_str(
        "<h2>Estimate billed to you</h2><table><thead><tr><th scope=\"col\">Item</th>\
         <th scope=\"col\" class=\"amount\">Amount</th></tr></thead><tbody>",
    );
    for (kind, description, amount, currency) in &shown.lines {
        body.push_str(&format!(
            "<tr><td>{}<br><span class=\"muted\">{}</span></td><td class=\"amount\">{} {:.2}</td></tr>",
            escape(description),
            escape(&kind.replace('_', " ").to_lowercase()),
            escape(currency),
            amount
        ));
    }
    body.push_str("</tbody><tfoot>");
    for (currency, amount) in &shown.estimate {
        body.push_str(&format!(
            "<tr><td>Total</td><td class=\"amount\">{} {:.2}</td></tr>",
            escape(currency),
            amount
        ));
    }
    body.push_str("</tfoot></table>");
    if let Some(threshold) = &shown.threshold {
        body.push_str(&format!(
            "<p class=\"muted\">Repairs above {} need your approval.</p>",
            escape(&threshold.to_string())
        ));
    }
    body.push_str(&format!(
        "<form method=\"post\">\
         <input type=\"hidden\" name=\"seen\" value=\"{seen}\">\
         <label for=\"note\">Note for your villa manager (optional)</label>\
         <textarea id=\"note\" name=\"note\" maxlength=\"{MAX_NOTE}\"></textarea>\
         <div class=\"actions\">\
         <button class=\"approve\" type=\"submit\" name=\"decision\" value=\"APPROVED\">Approve</button>\
         <button class=\"decline\" type=\"submit\" name=\"decision\" value=\"DECLINED\">Decline</button>\
         </div></form><p class=\"muted\">This link works once, until {expires}.</p>",
        seen = escape(&approvals::describe(&shown.estimate)),
        expires = shown.expires_at.format("%Y-%m-%d %H:%M UTC"),
    ));
    body
}

/// The approval a token names, and its page; `Err` is the page to answer instead.
async fn open(state: &AppState, token: &str) -> Result<(Uuid, ApprovalPage), Response> {
    let id = state.approval_links.verify(token).ok_or_else(not_found)?;
    let mut conn = state.pool.acquire().await.map_err(|_| unavailable())?;
    match approvals::page(&mut conn, id).await {
        Ok(shown) => Ok((id, shown)),
        Err(domain::Error::NotFound(_)) => Err(not_found()),
        Err(_) => Err(unavailable()),
    }
}

fn unavailable() -> Response {
    let mut res = page(
        StatusCode::SERVICE_UNAVAILABLE,
        "Try again shortly",
        "<h1>Please try again in a minute</h1><p>The service is busy. Nothing was changed.</p>",
    );
    res.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("30"));
    res
}

/// The owner's approval page of a signed link: the villa, the work order, its photos, the
/// owner-billed estimate and the Approve and Decline form. Plain HTML, no script.
#[utoipa::path(get, operation_id = "approvals_page", path = "/approvals/{token}", tag = "approvals",
    params(("token" = String, Path, description = "The signed token of the link (43 characters)", max_length = 100)),
    responses(
        (status = 200, description = "The decision page", content_type = "text/html"),
        (status = 404, description = "A forged or unknown link: a page saying so", content_type = "text/html"),
        (status = 410, description = "A link already answered, replaced or expired, or a work order no longer waiting: a page saying so", content_type = "text/html"),
        (status = 503, description = "The database cannot be reached: a page asking to try again", content_type = "text/html")),
    security(()))]
pub async fn show(
    State(state): State<AppState>,
    axum::extract::Path(token): axum::extract::Path<String>,
) -> Response {
    let (_, shown) = match open(&state, &token).await {
        Ok(found) => found,
        Err(answer) => return answer,
    };
    if let Some(closed) = shown.closed {
        return closed_page(closed, &shown);
    }
    page(
        StatusCode::OK,
        &format!("Approval needed: {}", shown.title),
        &decision_page(&token, &shown, None),
    )
}

/// The address the answer came from: the peer, and what a proxy says it forwarded for.
fn answered_from(peer: Option<SocketAddr>, headers: &HeaderMap) -> String {
    let peer = peer.map_or_else(|| "unknown".to_owned(), |p| p.ip().to_string());
    match headers.get("x-forwarded-for").and_then(|h| h.to_str().ok()) {
        Some(forwarded) => {
            let forwarded: String = forwarded.chars().take(200).collect();
            format!("{peer} (forwarded for {forwarded})")
        }
        None => peer,
    }
}

fn bad_form(message: &str) -> Response {
    page(
        StatusCode::BAD_REQUEST,
        "Answer not understood",
        &format!(
            "<h1>Your answer was not understood</h1><p>{}</p><p>Go back to the page and choose \
             Approve or Decline. Nothing was changed.</p>",
            escape(message)
        ),
    )
}

/// The owner's decision from the page's form: recorded with when, from which address and the
/// note; the work order returns to its status before the wait (approved) or is CANCELLED with
/// the note as reason (declined). Answers a confirmation page. A used, replaced or expired link
/// changes nothing (410); an estimate changed since the page was opened answers the new page
/// (409).
#[utoipa::path(post, operation_id = "approvals_decide", path = "/approvals/{token}", tag = "approvals",
    params(("token" = String, Path, description = "The signed token of the link (43 characters)", max_length = 100)),
    request_body(content = ApprovalForm, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 200, description = "The confirmation page", content_type = "text/html"),
        (status = 400, description = "A form without a decision, or with a note over 2000 characters: a page saying so", content_type = "text/html"),
        (status = 404, description = "A forged or unknown link", content_type = "text/html"),
        (status = 409, description = "The estimate changed since the page was opened: the page again, with the new figures", content_type = "text/html"),
        (status = 413, description = "A form larger than 64 KiB: a page saying so", content_type = "text/html"),
        (status = 410, description = "A link already answered, replaced or expired: nothing changed", content_type = "text/html"),
        (status = 503, description = "The database cannot be reached: nothing changed", content_type = "text/html")),
    security(()))]
pub async fn decide(
    State(state): State<AppState>,
    axum::extract::Path(token): axum::extract::Path<String>,
    peer: Option<Extension<ConnectInfo<SocketAddr>>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Some(id) = state.approval_links.verify(&token) else {
        return not_found();
    };
    let (mut decision, mut note, mut seen) = (None, None, None);
    for (key, value) in form_urlencoded::parse(&body) {
        match key.as_ref() {
            "decision" => decision = Some(value.trim().to_uppercase()),
            "note" => note = Some(value.trim().to_owned()),
            "seen" => seen = Some(value.into_owned()),
            _ => {}
        }
    }
    let Some(decision) = decision.and_then(|d| DECISIONS.iter().find(|&&x| x == d).copied()) else {
        return bad_form("The answer must be Approve or Decline.");
    };
    let note = note.filter(|n| !n.is_empty());
    if note.as_ref().is_some_and(|n| n.chars().count() > MAX_NOTE) {
        return bad_form(&format!("The note may hold at most {MAX_NOTE} characters."));
    }
    if note.as_ref().is_some_and(|n| n.contains('\0'))
        || seen.as_ref().is_some_and(|s| s.contains('\0'))
    {
        return bad_form("The note holds a character that cannot be kept (NUL).");
    }
    let from = answered_from(peer.map(|Extension(ConnectInfo(p))| p), &headers);
    let seen = seen.unwrap_or_default();
    let outcome = async {
        let mut tx = state.pool.begin().await?;
        let outcome =
            approvals::decide_by_link(&mut tx, id, decision, note.as_deref(), &seen, &from).await?;
        tx.commit().await?;
        Ok::<_, domain::Error>(outcome)
    }
    .await;
    let (outcome, shown) = match outcome {
        Ok(done) => done,
        Err(domain::Error::NotFound(_)) => return not_found(),
        Err(domain::Error::Validation(problems)) => {
            return bad_form(
                &problems
                    .first()
                    .map_or_else(String::new, |p| p.message.clone()),
            );
        }
        Err(error) => {
            tracing::error!(%error, approval = %id, "recording an owner's decision failed");
            return unavailable();
        }
    };
    match outcome {
        LinkDecision::Recorded { .. } => {
            let (title, text) = if decision == "APPROVED" {
                (
                    "Thank you: approved",
                    "You approved the estimate. It is recorded on the work order, which your villa manager follows, and the work can go ahead.",
                )
            } else {
                (
                    "Thank you: declined",
                    "You declined the estimate. The work order is cancelled with your note, which your villa manager sees on it.",
                )
            };
            page(
                StatusCode::OK,
                title,
                &format!(
                    "<h1>{}</h1><p class=\"villa\">{}</p><p>{}</p><p class=\"muted\">{}: {}</p>",
                    escape(title),
                    escape(&shown.villa_name),
                    escape(text),
                    escape(&shown.title),
                    escape(&approvals::describe(&shown.estimate)),
                ),
            )
        }
        LinkDecision::Closed(closed) => closed_page(closed, &shown),
        LinkDecision::EstimateChanged => page(
            StatusCode::CONFLICT,
            &format!("Approval needed: {}", shown.title),
            &decision_page(
                &token,
                &shown,
                Some(
                    "The estimate changed since you opened this page. Nothing was recorded: please review the new figures.",
                ),
            ),
        ),
    }
}

/// How many photos the page's route decodes at once, per process.
static THUMBNAIL_TURNS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(2);

/// A photo of the work order an approval link shows, made small (at most 400 px, JPEG).
#[utoipa::path(get, operation_id = "approvals_photo", path = "/approvals/{token}/photos/{photoId}", tag = "approvals",
    params(("token" = String, Path, max_length = 100), ("photoId" = Uuid, Path, description = "A PHOTO field note of the work order")),
    responses(
        (status = 200, description = "The photo, small", content_type = "image/jpeg"),
        (status = 404, description = "A forged link, a link that no longer takes a decision, or a photo its page does not show", content_type = "text/html"),
        (status = 503, description = "The document store or the database failed", content_type = "text/html")),
    security(()))]
pub async fn photo(
    State(state): State<AppState>,
    axum::extract::Path((token, photo_id)): axum::extract::Path<(String, String)>,
) -> Response {
    let (Some(id), Ok(photo_id)) = (
        state.approval_links.verify(&token),
        photo_id.parse::<Uuid>(),
    ) else {
        return not_found();
    };
    // Only while the link takes a decision, and only the photos its page lists.
    let content = async {
        let mut conn = state.pool.acquire().await?;
        let shown = approvals::page(&mut conn, id).await?;
        if shown.closed.is_some() || !shown.photo_ids.contains(&photo_id) {
            return Ok(None);
        }
        drop(conn);
        domain::maintenance::field_notes::content(&state.pool, photo_id).await
    }
    .await;
    let content = match content {
        Ok(Some(content)) => content,
        Ok(None) | Err(domain::Error::NotFound(_)) => return not_found(),
        Err(_) => return unavailable(),
    };
    // Decoding a photo is the costliest thing an anonymous caller can ask for: two at a time per
    // process, the others wait their turn.
    let Ok(_turn) = THUMBNAIL_TURNS.acquire().await else {
        return unavailable();
    };
    let bytes = match content.pending_content {
        Some(bytes) => bytes,
        None => {
            let Some(path) = domain::storage::StoragePath::from_stored(&content.storage_path)
            else {
                return not_found();
            };
            match state.store.get(&path).await {
                Ok(Some(bytes)) => bytes,
                Ok(None) => return not_found(),
                Err(_) => return unavailable(),
            }
        }
    };
    match tokio::task::spawn_blocking(move || domain::media::thumbnail(&bytes)).await {
        Ok(Ok((thumb, _, _))) => {
            let mut res = (StatusCode::OK, thumb).into_response();
            res.headers_mut()
                .insert(header::CONTENT_TYPE, HeaderValue::from_static("image/jpeg"));
            res.headers_mut().insert(
                header::CACHE_CONTROL,
                HeaderValue::from_static("private, max-age=300"),
            );
            res
        }
        _ => not_found(),
    }
}

/// The largest form the page takes: a 2000-character note, percent-encoded, fits with room.
pub const FORM_LIMIT: usize = 64 * 1024;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(show, decide))
        .routes(routes!(photo))
        // A larger body is refused (413, as a page) before it is read whole.
        .layer(axum::extract::DefaultBodyLimit::max(FORM_LIMIT))
}
