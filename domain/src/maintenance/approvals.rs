//! The owner's approval of repair costs. A work order whose owner-billed estimate is above its
//! villa's approval threshold (the villa's own, else its owner's; an estimate in another currency
//! than the threshold's always needs approval) waits in AWAITING_APPROVAL, where it cannot start
//! or complete, until the owner approves on the page of a signed link or a manager records an
//! approval given by phone. An approval covers the estimate it was given for: a larger one needs
//! another. A declined work order is CANCELLED with the owner's note. An emergency's work order
//! skips the wait and is flagged `approvalSkipped: EMERGENCY`. Every step is a row of
//! `work_order_approvals` and an entry of the work order's history.

use std::collections::BTreeMap;

use base64::Engine;
use hmac::{Hmac, Mac};
use rust_decimal::Decimal;
use serde_json::Value;
use sha2::Sha256;
use sqlx::PgConnection;
use uuid::Uuid;

use super::work_orders::record_history;
use crate::{Error, Result};

/// What a decision says.
pub const DECISIONS: &[&str] = &["APPROVED", "DECLINED"];

/// The longest note an owner or a manager leaves with a decision.
pub const MAX_NOTE: usize = 2000;

/// Who the history names for a decision taken on the owner's page.
pub const OWNER_ON_LINK: &str = "owner (approval link)";

/// Signs and checks approval links. A token is the approval's id and a MAC of it under a key
/// derived from `DATA_ENCRYPTION_KEY`, so a link cannot be forged or pointed at another
/// approval, and nothing that opens a page is stored.
#[derive(Clone)]
pub struct ApprovalLinks {
    key: [u8; 32],
}

impl std::fmt::Debug for ApprovalLinks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApprovalLinks(<key>)")
    }
}

type HmacSha256 = Hmac<Sha256>;

/// The MAC bytes a token carries: 128 bits.
const TAG_LEN: usize = 16;

impl ApprovalLinks {
    pub fn new(data_encryption_key: &[u8; 32]) -> Self {
        // A key of its own, so that a MAC here is never a MAC anything else computes.
        let mut mac = HmacSha256::new_from_slice(data_encryption_key).expect("any key length");
        mac.update(b"villa-ops approval links v1");
        Self {
            key: mac.finalize().into_bytes().into(),
        }
    }

    fn tag(&self, id: Uuid) -> [u8; TAG_LEN] {
        let mut mac = HmacSha256::new_from_slice(&self.key).expect("any key length");
        mac.update(id.as_bytes());
        let full = mac.finalize().into_bytes();
        let mut tag = [0u8; TAG_LEN];
        tag.copy_from_slice(&full[..TAG_LEN]);
        tag
    }

    /// The token of approval `id`: 43 URL-safe characters.
    pub fn token(&self, id: Uuid) -> String {
        let mut raw = [0u8; 16 + TAG_LEN];
        raw[..16].copy_from_slice(id.as_bytes());
        raw[16..].copy_from_slice(&self.tag(id));
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw)
    }

    /// The approval a token names, when its MAC holds (compared in constant time).
    pub fn verify(&self, token: &str) -> Option<Uuid> {
        if token.len() != 43 {
            return None;
        }
        let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(token)
            .ok()?;
        let (id, tag) = raw.split_at(16);
        let id = Uuid::from_slice(id).ok()?;
        use subtle::ConstantTimeEq;
        bool::from(self.tag(id).ct_eq(tag)).then_some(id)
    }

    /// The page's address under `base_url`.
    pub fn url(&self, base_url: &str, id: Uuid) -> String {
        format!(
            "{}/approvals/{}",
            base_url.trim_end_matches('/'),
            self.token(id)
        )
    }
}

/// An amount in a currency (an approval threshold).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Money {
    pub amount: Decimal,
    pub currency: String,
}

impl std::fmt::Display for Money {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {:.2}", self.currency, self.amount)
    }
}

/// The owner-billed estimate of a work order, per currency (only currencies with lines).
pub type Estimate = BTreeMap<String, Decimal>;

/// "USD 620.00, EUR 40.00": the estimate as a person reads it, and what the owner's page sends
/// back, so that a decision is taken on the figures the owner saw.
pub fn describe(estimate: &Estimate) -> String {
    if estimate.is_empty() {
        return "nothing".to_owned();
    }
    estimate
        .iter()
        .map(|(currency, amount)| format!("{currency} {amount:.2}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// An estimate as the API and the approval rows keep it: `{"USD": "620.00"}`.
pub fn estimate_json(estimate: &Estimate) -> Value {
    estimate
        .iter()
        .map(|(c, a)| (c.clone(), Value::String(format!("{a:.2}"))))
        .collect::<serde_json::Map<_, _>>()
        .into()
}

/// An estimate read back from [`estimate_json`]'s form (members that are not amounts are left
/// out).
pub fn parse_estimate(value: &Value) -> Estimate {
    value
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(c, a)| Some((c.clone(), a.as_str()?.parse().ok()?)))
        .collect()
}

/// Whether `estimate` needs the owner's approval under `threshold`: some amount above it, or any
/// amount in another currency (the platform does not convert money).
pub fn needs_approval(estimate: &Estimate, threshold: Option<&Money>) -> bool {
    let Some(threshold) = threshold else {
        return false;
    };
    estimate.iter().any(|(currency, amount)| {
        *amount > Decimal::ZERO && (*currency != threshold.currency || *amount > threshold.amount)
    })
}

/// Whether an approval given for `approved` covers `estimate`: no currency asks more.
pub fn covers(approved: &Estimate, estimate: &Estimate) -> bool {
    estimate
        .iter()
        .all(|(currency, amount)| approved.get(currency).is_some_and(|a| amount <= a))
}

pub async fn owner_estimate(conn: &mut PgConnection, work_order: Uuid) -> Result<Estimate> {
    let rows: Vec<(String, Decimal)> = sqlx::query_as(
        "SELECT currency, sum(amount) FROM work_order_costs
         WHERE work_order_id = $1 AND bill_to = 'OWNER' AND estimate GROUP BY currency",
    )
    .bind(work_order)
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows.into_iter().collect())
}

/// The threshold that applies to a work order: its villa's, else the villa owner's, else none.
pub async fn threshold_of(conn: &mut PgConnection, work_order: Uuid) -> Result<Option<Money>> {
    let row: Option<(Option<Decimal>, Option<String>)> = sqlx::query_as(
        "SELECT coalesce(v.approval_threshold_amount, o.approval_threshold_amount),
                CASE WHEN v.approval_threshold_amount IS NOT NULL THEN v.approval_threshold_currency
                     ELSE o.approval_threshold_currency END
         FROM work_orders w JOIN villas v ON v.id = w.villa_id LEFT JOIN owners o ON o.id = v.owner_id
         WHERE w.id = $1",
    )
    .bind(work_order)
    .fetch_optional(&mut *conn)
    .await?;
    Ok(match row {
        Some((Some(amount), Some(currency))) => Some(Money { amount, currency }),
        _ => None,
    })
}

/// The estimate of the latest approval given (by link or phone), if any.
async fn approved_estimate(conn: &mut PgConnection, work_order: Uuid) -> Result<Option<Estimate>> {
    let approved: Option<Value> = sqlx::query_scalar(
        "SELECT estimate FROM work_order_approvals
         WHERE work_order_id = $1 AND decision = 'APPROVED' ORDER BY decided_at DESC, id DESC LIMIT 1",
    )
    .bind(work_order)
    .fetch_optional(&mut *conn)
    .await?;
    Ok(approved.as_ref().map(parse_estimate))
}

/// Closes the unused links of a work order (a later request, a decision, the need gone).
async fn supersede_links(conn: &mut PgConnection, work_order: Uuid) -> Result<()> {
    sqlx::query(
        "UPDATE work_order_approvals SET superseded_at = now()
         WHERE work_order_id = $1 AND channel = 'LINK' AND decision IS NULL AND superseded_at IS NULL",
    )
    .bind(work_order)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Decides, under the work order's row lock (the caller holds it), whether it must wait for the
/// owner, and moves it: an open work order whose estimate needs an approval it does not have
/// becomes AWAITING_APPROVAL (remembering its status); one waiting whose estimate no longer needs
/// it goes back. COMPLETED and CANCELLED work orders are left as they are (their lines are the
/// bill). An emergency's work order is flagged instead of held.
pub async fn reassess(conn: &mut PgConnection, work_order: Uuid, by: &str) -> Result<()> {
    let (status, before, emergency, flagged): (String, Option<String>, bool, bool) =
        sqlx::query_as(
            "SELECT status, status_before_approval,
                EXISTS (SELECT 1 FROM emergencies e WHERE e.work_order_id = w.id),
                approval_skipped IS NOT NULL
         FROM work_orders w WHERE id = $1 FOR UPDATE",
        )
        .bind(work_order)
        .fetch_optional(&mut *conn)
        .await?
        .ok_or(Error::NotFound("work order"))?;
    if matches!(status.as_str(), "COMPLETED" | "CANCELLED") {
        return Ok(());
    }
    let estimate = owner_estimate(conn, work_order).await?;
    // Most work orders bill the owner no estimate: nothing to wait for, flag or release.
    if estimate.is_empty() && status != "AWAITING_APPROVAL" && !flagged {
        return Ok(());
    }
    let threshold = threshold_of(conn, work_order).await?;
    let needs = needs_approval(&estimate, threshold.as_ref())
        && !approved_estimate(conn, work_order)
            .await?
            .is_some_and(|approved| covers(&approved, &estimate));
    let skipped = (needs && emergency).then_some("EMERGENCY");
    let flagged = sqlx::query(
        "UPDATE work_orders SET approval_skipped = $2 WHERE id = $1 AND approval_skipped IS DISTINCT FROM $2",
    )
    .bind(work_order)
    .bind(skipped)
    .execute(&mut *conn)
    .await?
    .rows_affected();
    if flagged > 0 && skipped.is_some() {
        record_history(
            conn,
            work_order,
            Some(&status),
            &status,
            Some(&format!(
                "the owner-billed estimate ({}) would need the owner's approval; skipped: an emergency",
                describe(&estimate)
            )),
            by,
        )
        .await?;
    }
    let hold = needs && !emergency;
    let waiting = status == "AWAITING_APPROVAL";
    if hold && !waiting {
        let threshold = threshold.map(|t| t.to_string()).unwrap_or_default();
        move_status(
            conn,
            work_order,
            &status,
            "AWAITING_APPROVAL",
            Some(&status),
            &format!(
                "the owner-billed estimate ({}) is above the approval threshold ({threshold}): the owner must approve",
                describe(&estimate)
            ),
            by,
        )
        .await?;
    } else if !hold && waiting {
        let back = before.unwrap_or_else(|| "OPEN".to_owned());
        let why = if emergency {
            "an emergency's work order needs no approval".to_owned()
        } else {
            format!(
                "the owner-billed estimate ({}) needs no approval any more",
                describe(&estimate)
            )
        };
        supersede_links(conn, work_order).await?;
        move_status(conn, work_order, &status, &back, None, &why, by).await?;
    }
    Ok(())
}

async fn move_status(
    conn: &mut PgConnection,
    work_order: Uuid,
    from: &str,
    to: &str,
    before: Option<&str>,
    reason: &str,
    by: &str,
) -> Result<()> {
    sqlx::query(
        "UPDATE work_orders SET status = $2, status_before_approval = $3, updated_at = now(),
             completed_at = CASE WHEN $2 = 'COMPLETED' THEN completed_at ELSE NULL END
         WHERE id = $1",
    )
    .bind(work_order)
    .bind(to)
    .bind(before)
    .execute(&mut *conn)
    .await?;
    record_history(conn, work_order, Some(from), to, Some(reason), by).await
}

fn not_awaiting(status: &str) -> Error {
    Error::conflict(
        "APPROVAL_NOT_NEEDED",
        format!(
            "the work order is {status}: only one AWAITING_APPROVAL needs the owner's approval"
        ),
    )
}

/// A link request, created by [`request_link`].
#[derive(Debug, Clone)]
pub struct LinkRequest {
    pub id: Uuid,
    pub expires_at: chrono::DateTime<chrono::Utc>,
    /// The owner's e-mail address; `None` when the villa has no owner or the owner none.
    pub email_to: Option<String>,
    pub estimate: Estimate,
}

/// Creates an approval request by link for a work order AWAITING_APPROVAL (409
/// `APPROVAL_NOT_NEEDED` otherwise), valid `link_days`; earlier unused links of the work order
/// stop working. The caller enqueues the e-mail in the same transaction.
pub async fn request_link(
    conn: &mut PgConnection,
    work_order: Uuid,
    base_url: &str,
    link_days: u32,
    by: &str,
) -> Result<LinkRequest> {
    let status = super::work_orders::lock(conn, work_order).await?;
    if status != "AWAITING_APPROVAL" {
        return Err(not_awaiting(&status));
    }
    let email_to: Option<String> = sqlx::query_scalar(
        "SELECT nullif(trim(o.email), '') FROM work_orders w JOIN villas v ON v.id = w.villa_id
         JOIN owners o ON o.id = v.owner_id WHERE w.id = $1",
    )
    .bind(work_order)
    .fetch_optional(&mut *conn)
    .await?
    .flatten();
    let estimate = owner_estimate(conn, work_order).await?;
    supersede_links(conn, work_order).await?;
    let id = Uuid::now_v7();
    let expires_at: chrono::DateTime<chrono::Utc> = sqlx::query_scalar(
        "INSERT INTO work_order_approvals (id, work_order_id, channel, estimate, requested_by, base_url, expires_at, email_to)
         VALUES ($1, $2, 'LINK', $3, $4, $5, now() + make_interval(days => $6), $7)
         RETURNING expires_at",
    )
    .bind(id)
    .bind(work_order)
    .bind(estimate_json(&estimate))
    .bind(by)
    .bind(base_url)
    .bind(i32::try_from(link_days).unwrap_or(i32::MAX))
    .bind(&email_to)
    .fetch_one(&mut *conn)
    .await?;
    let to = email_to
        .as_deref()
        .unwrap_or("no e-mail address: send the link yourself");
    record_history(
        conn,
        work_order,
        Some(&status),
        &status,
        Some(&format!(
            "approval requested by link for {} ({to}), valid until {}",
            describe(&estimate),
            expires_at.format("%Y-%m-%d %H:%M UTC")
        )),
        by,
    )
    .await?;
    Ok(LinkRequest {
        id,
        expires_at,
        email_to,
        estimate,
    })
}

/// Why a link no longer opens a decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkClosed {
    /// The owner answered already (through this link or another way).
    Used,
    /// A later request replaced it, or the estimate fell under the threshold.
    Replaced,
    Expired,
    /// The work order no longer waits for the owner (cancelled, say).
    NotAwaiting,
}

/// What the owner's page shows.
#[derive(Debug, Clone)]
pub struct ApprovalPage {
    pub approval_id: Uuid,
    pub work_order_id: Uuid,
    pub villa_name: String,
    pub villa_location: Option<String>,
    pub title: String,
    pub description: Option<String>,
    pub category: String,
    pub priority: String,
    pub expires_at: chrono::DateTime<chrono::Utc>,
    /// The owner-billed estimate lines: (kind, description, amount, currency).
    pub lines: Vec<(String, String, Decimal, String)>,
    pub estimate: Estimate,
    pub threshold: Option<Money>,
    /// The work order's PHOTO field notes (at most [`MAX_PAGE_PHOTOS`]).
    pub photo_ids: Vec<Uuid>,
    /// Set when the link no longer takes a decision.
    pub closed: Option<LinkClosed>,
    /// The decision already taken, for a used link: (decision, when).
    pub decided: Option<(String, chrono::DateTime<chrono::Utc>)>,
}

/// The most photos the owner's page shows.
pub const MAX_PAGE_PHOTOS: i64 = 12;

/// The page of approval `id` (404 when there is no such approval by link).
pub async fn page(conn: &mut PgConnection, id: Uuid) -> Result<ApprovalPage> {
    #[derive(sqlx::FromRow)]
    struct Row {
        work_order_id: Uuid,
        villa_name: String,
        villa_location: Option<String>,
        title: String,
        description: Option<String>,
        category: String,
        priority: String,
        status: String,
        expires_at: chrono::DateTime<chrono::Utc>,
        expired: bool,
        superseded: bool,
        decision: Option<String>,
        decided_at: Option<chrono::DateTime<chrono::Utc>>,
        other_decision: Option<String>,
        other_decided_at: Option<chrono::DateTime<chrono::Utc>>,
    }
    let row: Row = sqlx::query_as(
        "SELECT a.work_order_id, v.villa_name,
                nullif(concat_ws(', ', nullif(v.city, ''), nullif(v.country, '')), '') AS villa_location,
                w.title, w.description, w.category, w.priority, w.status, a.expires_at,
                a.expires_at <= now() AS expired, a.superseded_at IS NOT NULL AS superseded,
                a.decision, a.decided_at, d.decision AS other_decision, d.decided_at AS other_decided_at
         FROM work_order_approvals a JOIN work_orders w ON w.id = a.work_order_id
         JOIN villas v ON v.id = w.villa_id
         LEFT JOIN LATERAL (SELECT decision, decided_at FROM work_order_approvals x
             WHERE x.work_order_id = a.work_order_id AND x.decision IS NOT NULL AND x.decided_at >= a.requested_at
             ORDER BY x.decided_at DESC LIMIT 1) d ON true
         WHERE a.id = $1 AND a.channel = 'LINK'",
    )
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or(Error::NotFound("approval"))?;
    let closed = if row.decision.is_some() || row.other_decision.is_some() {
        Some(LinkClosed::Used)
    } else if row.superseded {
        Some(LinkClosed::Replaced)
    } else if row.expired {
        Some(LinkClosed::Expired)
    } else if row.status != "AWAITING_APPROVAL" {
        Some(LinkClosed::NotAwaiting)
    } else {
        None
    };
    let decided = row
        .decision
        .zip(row.decided_at)
        .or(row.other_decision.zip(row.other_decided_at));
    let lines: Vec<(String, String, Decimal, String)> = sqlx::query_as(
        "SELECT kind, description, amount, currency FROM work_order_costs
         WHERE work_order_id = $1 AND bill_to = 'OWNER' AND estimate ORDER BY created_at, id",
    )
    .bind(row.work_order_id)
    .fetch_all(&mut *conn)
    .await?;
    let photo_ids: Vec<Uuid> = sqlx::query_scalar(
        "SELECT id FROM field_notes WHERE work_order_id = $1 AND type = 'PHOTO'
         ORDER BY created_at, id LIMIT $2",
    )
    .bind(row.work_order_id)
    .bind(MAX_PAGE_PHOTOS)
    .fetch_all(&mut *conn)
    .await?;
    let estimate = owner_estimate(conn, row.work_order_id).await?;
    let threshold = threshold_of(conn, row.work_order_id).await?;
    Ok(ApprovalPage {
        approval_id: id,
        work_order_id: row.work_order_id,
        villa_name: row.villa_name,
        villa_location: row.villa_location,
        title: row.title,
        description: row.description,
        category: row.category,
        priority: row.priority,
        expires_at: row.expires_at,
        lines,
        estimate,
        threshold,
        photo_ids,
        closed,
        decided,
    })
}

/// What a decision on the owner's page came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkDecision {
    /// Recorded; the work order moved to this status.
    Recorded { status: String },
    /// Nothing changed: the link is closed.
    Closed(LinkClosed),
    /// Nothing changed: the estimate is no longer the one the owner saw (`seen`); the page shows
    /// the new one.
    EstimateChanged,
}

/// A decision from the owner's page: `seen` is the estimate the page showed ([`describe`]),
/// `from` the address the answer came from. Locks the work order, then the approval. Answers
/// the outcome with the page as it read it under those locks (what the answer page shows: the
/// villa, the work order and the estimate a decision does not change).
pub async fn decide_by_link(
    conn: &mut PgConnection,
    id: Uuid,
    decision: &str,
    note: Option<&str>,
    seen: &str,
    from: &str,
) -> Result<(LinkDecision, ApprovalPage)> {
    let work_order: Uuid = sqlx::query_scalar(
        "SELECT work_order_id FROM work_order_approvals WHERE id = $1 AND channel = 'LINK'",
    )
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or(Error::NotFound("approval"))?;
    super::work_orders::lock(conn, work_order).await?;
    sqlx::query("SELECT 1 FROM work_order_approvals WHERE id = $1 FOR UPDATE")
        .bind(id)
        .execute(&mut *conn)
        .await?;
    let shown = page(conn, id).await?;
    if let Some(closed) = shown.closed {
        return Ok((LinkDecision::Closed(closed), shown));
    }
    if describe(&shown.estimate) != seen {
        return Ok((LinkDecision::EstimateChanged, shown));
    }
    sqlx::query(
        "UPDATE work_order_approvals SET decision = $2, decided_at = now(), note = $3, decided_from = $4,
             decided_by = $5, estimate = $6
         WHERE id = $1",
    )
    .bind(id)
    .bind(decision)
    .bind(note)
    .bind(from)
    .bind(OWNER_ON_LINK)
    .bind(estimate_json(&shown.estimate))
    .execute(&mut *conn)
    .await?;
    let status = apply_decision(
        conn,
        work_order,
        decision,
        note,
        "on the approval link",
        OWNER_ON_LINK,
    )
    .await?;
    Ok((LinkDecision::Recorded { status }, shown))
}

/// An approval or a refusal the owner gave by phone, recorded by a manager (`by`): the work
/// order must be AWAITING_APPROVAL (409 `APPROVAL_NOT_NEEDED`). Open links stop working.
pub async fn record_by_phone(
    conn: &mut PgConnection,
    work_order: Uuid,
    decision: &str,
    note: Option<&str>,
    by: &str,
) -> Result<()> {
    let status = super::work_orders::lock(conn, work_order).await?;
    if status != "AWAITING_APPROVAL" {
        return Err(not_awaiting(&status));
    }
    let estimate = owner_estimate(conn, work_order).await?;
    sqlx::query(
        "INSERT INTO work_order_approvals (id, work_order_id, channel, estimate, requested_by, decision, decided_at,
             note, decided_by)
         VALUES ($1, $2, 'PHONE', $3, $4, $5, now(), $6, $4)",
    )
    .bind(Uuid::now_v7())
    .bind(work_order)
    .bind(estimate_json(&estimate))
    .bind(by)
    .bind(decision)
    .bind(note)
    .execute(&mut *conn)
    .await?;
    apply_decision(
        conn,
        work_order,
        decision,
        note,
        &format!("by phone, recorded by {by}"),
        by,
    )
    .await?;
    Ok(())
}

/// Moves a waiting work order on after a decision: back to its status before the wait when
/// approved, CANCELLED with the owner's note when declined. Answers the new status.
async fn apply_decision(
    conn: &mut PgConnection,
    work_order: Uuid,
    decision: &str,
    note: Option<&str>,
    how: &str,
    by: &str,
) -> Result<String> {
    supersede_links(conn, work_order).await?;
    let before: Option<String> =
        sqlx::query_scalar("SELECT status_before_approval FROM work_orders WHERE id = $1")
            .bind(work_order)
            .fetch_one(&mut *conn)
            .await?;
    let (to, reason) = if decision == "APPROVED" {
        let reason = match note {
            Some(note) => format!("approved by the owner {how}: {note}"),
            None => format!("approved by the owner {how}"),
        };
        (before.unwrap_or_else(|| "OPEN".to_owned()), reason)
    } else {
        let reason = match note {
            Some(note) => format!("declined by the owner {how}: {note}"),
            None => format!("declined by the owner {how}"),
        };
        ("CANCELLED".to_owned(), reason)
    };
    move_status(
        conn,
        work_order,
        "AWAITING_APPROVAL",
        &to,
        None,
        &reason,
        by,
    )
    .await?;
    Ok(to)
}

/// What the e-mail job needs of a link request; `None` when there is nothing to send any more
/// (no such request, already sent, answered, replaced or expired).
#[derive(Debug, Clone)]
pub struct LinkMail {
    pub email_to: String,
    pub base_url: String,
    pub villa_name: String,
    pub title: String,
    pub estimate: Estimate,
    pub expires_at: chrono::DateTime<chrono::Utc>,
}

pub async fn mail_to_send(conn: &mut PgConnection, id: Uuid) -> Result<Option<LinkMail>> {
    #[derive(sqlx::FromRow)]
    struct Row {
        email_to: String,
        base_url: String,
        villa_name: String,
        title: String,
        estimate: Value,
        expires_at: chrono::DateTime<chrono::Utc>,
    }
    let row: Option<Row> = sqlx::query_as(
        "SELECT a.email_to, a.base_url, v.villa_name, w.title, a.estimate, a.expires_at
         FROM work_order_approvals a JOIN work_orders w ON w.id = a.work_order_id JOIN villas v ON v.id = w.villa_id
         WHERE a.id = $1 AND a.channel = 'LINK' AND a.email_to IS NOT NULL AND a.email_sent_at IS NULL
           AND a.decision IS NULL AND a.superseded_at IS NULL AND a.expires_at > now()
           AND w.status = 'AWAITING_APPROVAL'",
    )
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?;
    Ok(row.map(|r| LinkMail {
        email_to: r.email_to,
        base_url: r.base_url,
        villa_name: r.villa_name,
        title: r.title,
        estimate: parse_estimate(&r.estimate),
        expires_at: r.expires_at,
    }))
}

/// Records that the e-mail of request `id` went out, in the request and the work order's
/// history, in one transaction that locks the work order first (as decisions do).
pub async fn mark_mail_sent(conn: &mut PgConnection, id: Uuid) -> Result<()> {
    use sqlx::Connection as _;
    let mut tx = conn.begin().await?;
    let work_order: Option<Uuid> =
        sqlx::query_scalar("SELECT work_order_id FROM work_order_approvals WHERE id = $1")
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?;
    let Some(work_order) = work_order else {
        return Ok(());
    };
    let status = super::work_orders::lock(&mut tx, work_order).await?;
    let to: Option<Option<String>> = sqlx::query_scalar(
        "UPDATE work_order_approvals SET email_sent_at = now()
         WHERE id = $1 AND email_sent_at IS NULL RETURNING email_to",
    )
    .bind(id)
    .fetch_optional(&mut *tx)
    .await?;
    if let Some(to) = to {
        record_history(
            &mut tx,
            work_order,
            Some(&status),
            &status,
            Some(&format!(
                "approval e-mail sent to {}",
                to.as_deref().unwrap_or("the owner")
            )),
            "mail",
        )
        .await?;
    }
    tx.commit().await?;
    Ok(())
}

/// Reassesses the open work orders of `villas` that have owner-billed estimates or wait for the
/// owner: what a changed threshold (a villa's, its owner's) or a villa's new owner implies.
pub async fn reassess_villas(conn: &mut PgConnection, villas: &[Uuid], by: &str) -> Result<()> {
    let orders: Vec<Uuid> = sqlx::query_scalar(
        "SELECT w.id FROM work_orders w
         WHERE w.villa_id = ANY($1) AND w.status IN ('OPEN', 'ASSIGNED', 'IN_PROGRESS', 'ON_HOLD', 'AWAITING_APPROVAL')
           AND EXISTS (SELECT 1 FROM work_order_costs c
                       WHERE c.work_order_id = w.id AND c.bill_to = 'OWNER' AND c.estimate)
         ORDER BY w.id",
    )
    .bind(villas)
    .fetch_all(&mut *conn)
    .await?;
    for id in orders {
        reassess(conn, id, by).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est(pairs: &[(&str, &str)]) -> Estimate {
        pairs
            .iter()
            .map(|(c, a)| (c.to_string(), a.parse().unwrap()))
            .collect()
    }

    #[test]
    fn the_threshold_is_passed_above_it_and_by_any_other_currency() {
        let usd500 = Money {
            amount: "500".parse().unwrap(),
            currency: "USD".into(),
        };
        assert!(!needs_approval(&est(&[("USD", "500.00")]), Some(&usd500)));
        assert!(needs_approval(&est(&[("USD", "500.01")]), Some(&usd500)));
        assert!(needs_approval(&est(&[("EUR", "1")]), Some(&usd500)));
        assert!(!needs_approval(&est(&[("EUR", "0")]), Some(&usd500)));
        assert!(!needs_approval(&est(&[("USD", "9999")]), None));
    }

    #[test]
    fn an_approval_covers_what_it_was_given_for_and_no_more() {
        let approved = est(&[("USD", "620")]);
        assert!(covers(&approved, &est(&[("USD", "600")])));
        assert!(!covers(&approved, &est(&[("USD", "620.01")])));
        assert!(!covers(&approved, &est(&[("USD", "1"), ("EUR", "1")])));
    }

    #[test]
    fn a_link_names_one_approval_and_cannot_be_forged() {
        let links = ApprovalLinks::new(&[7u8; 32]);
        let id = Uuid::now_v7();
        let token = links.token(id);
        assert_eq!(token.len(), 43);
        assert_eq!(links.verify(&token), Some(id));
        // Another approval's id under this one's MAC, a changed character, another key.
        let other = links.token(Uuid::now_v7());
        let swapped = format!("{}{}", &other[..22], &token[22..]);
        assert_eq!(links.verify(&swapped), None);
        let mut bytes = token.clone().into_bytes();
        bytes[40] = if bytes[40] == b'A' { b'B' } else { b'A' };
        assert_eq!(links.verify(&String::from_utf8(bytes).unwrap()), None);
        assert_eq!(ApprovalLinks::new(&[8u8; 32]).verify(&token), None);
        assert_eq!(links.verify("short"), None);
        assert_eq!(links.verify(&"é".repeat(43)), None);
    }
}
