//! The work the calendar implies: one work order per task rule, stay and occurrence (a checkout,
//! a check-in, every few nights of a long stay), from today to the horizon, kept in step with the
//! stays as they change.
//!
//! One run, in one transaction, set-based:
//! 1. the stays it looks at: those whose dates come near the horizon, and those with open
//!    generated work (which may have moved out of it); each with its villa (through its listing)
//!    and whether it still counts (`CONFIRMED`, or an owner stay for a rule that includes them);
//! 2. the occurrences of every active rule over those stays;
//! 3. work cancelled with its stay comes back when the stay does; open work orders (OPEN,
//!    ASSIGNED, ON_HOLD) follow their occurrence's date and villa, the move written in their
//!    history; after a change of their rule (its revision) they also take its title, category
//!    and checklist, keeping the items already answered; those whose occurrence is gone are
//!    CANCELLED (`stay_cancelled`, to come back with the stay); started or finished ones are only
//!    flagged `reservationChanged`, and only when their stay changed (not their rule);
//! 4. the occurrences inside the horizon that have no work order get one, with the rule's
//!    checklist: a unique index on (rule, stay, occurrence) makes this exactly once whatever
//!    else writes (`ON CONFLICT DO NOTHING`); runs themselves take turns (an advisory lock), so
//!    that none works on stays another has changed since it read them;
//! 5. a checkout's work orders are a same-day turnover when another stay checks in to the villa
//!    that day: flagged, and at least HIGH while open; recomputed on every run.
//!
//! An archived rule generates nothing and its work orders are left as they are.

use chrono::{Days, NaiveDate};
use sqlx::{Connection as _, PgConnection};

use crate::Result;

/// Who the generated work orders and their history say made them.
pub const GENERATOR: &str = "turnover-generation";

/// The occurrences a run creates work orders for: `today` to `today + horizon days`, both
/// included, "today" being the company's day (`BUSINESS_TIME_ZONE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Horizon {
    pub today: NaiveDate,
    pub until: NaiveDate,
}

impl Horizon {
    pub fn new(today: NaiveDate, days: u32) -> Self {
        Self {
            today,
            until: today
                .checked_add_days(Days::new(u64::from(days)))
                .unwrap_or(NaiveDate::MAX),
        }
    }
}

/// What one run changed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Generated {
    pub created: u64,
    pub moved: u64,
    pub cancelled: u64,
    pub restored: u64,
    pub flagged: u64,
}

/// The stays a run looks at (step 1). `$1` today, `$2` the horizon's end. Offsets reach 30 days
/// either way, so stays within 30 days of the horizon can have an occurrence inside it.
const STAYS: &str = "
CREATE TEMP TABLE turnover_stays ON COMMIT DROP AS
SELECT r.id, r.check_in, r.check_out, r.status, l.villa_id
FROM pms_reservations r
LEFT JOIN pms_listings l ON l.pms_id = r.listing_pms_id
WHERE (r.check_out >= $1::date - 31 AND r.check_in <= $2::date + 31)
   OR r.id IN (SELECT reservation_id FROM work_orders
               WHERE task_rule_id IS NOT NULL AND reservation_id IS NOT NULL
                 AND status IN ('OPEN', 'ASSIGNED', 'ON_HOLD', 'IN_PROGRESS'))";

// Whether rule `ru` applies to stay `s` (its `villa_id`, `status`): a stay of a villa that counts
// (`CONFIRMED`, or an owner stay for a rule that includes them), of a villa the rule names, or any
// villa when it names none. The supplies forecast reads the calendar through the same words.
macro_rules! rule_applies_to_stay {
    () => {
        "s.villa_id IS NOT NULL
 AND (s.status = 'CONFIRMED' OR (s.status = 'OWNER_STAY' AND ru.include_owner_stays))
 AND (NOT EXISTS (SELECT 1 FROM task_rule_villas v WHERE v.task_rule_id = ru.id)
      OR EXISTS (SELECT 1 FROM task_rule_villas v WHERE v.task_rule_id = ru.id AND v.villa_id = s.villa_id))"
    };
}
pub(crate) use rule_applies_to_stay;

// The occurrences (`o.idx`, `o.due`) of rule `ru` over stay `s` (`check_in`, `check_out`): one on
// the checkout or the arrival, plus the offset; or every `every_nights` nights of the stay.
macro_rules! rule_occurrences {
    () => {
        "CROSS JOIN LATERAL (
    SELECT 0 AS idx,
           (CASE ru.trigger WHEN 'CHECKOUT' THEN s.check_out ELSE s.check_in END) + ru.offset_days AS due
    WHERE ru.trigger <> 'MID_STAY'
    UNION ALL
    SELECT n, s.check_in + n * ru.every_nights + ru.offset_days
    -- At most 400 occurrences of one stay: a stay of years (a typing mistake in the PMS) must
    -- not enumerate thousands of rows on every run.
    FROM generate_series(1, least(400, greatest(0, (s.check_out - s.check_in - 1) / ru.every_nights))) AS n
    WHERE ru.trigger = 'MID_STAY'
) o"
    };
}
pub(crate) use rule_occurrences;

/// The occurrences of every active rule over the stays (step 2), each with the rule as this
/// statement read it: a rule changed later in the run is followed by the next run (enqueued by
/// the change), since the work orders record the revision whose dates they were given.
const OCCURRENCES: &str = concat!(
    "
CREATE TEMP TABLE turnover_occurrences ON COMMIT DROP AS
SELECT ru.id AS task_rule_id, s.id AS reservation_id, s.villa_id, o.idx AS occurrence_index, o.due,
       s.check_in AS stay_check_in, s.check_out AS stay_check_out, ru.trigger, ru.revision,
       coalesce(ru.title, ru.name) AS title, ru.category, ru.priority
FROM task_rules ru
JOIN turnover_stays s
  ON ",
    rule_applies_to_stay!(),
    "
",
    rule_occurrences!(),
    "
WHERE ru.archived_at IS NULL"
);

/// Open work orders follow what changed since they were placed (step 3): their rule (its
/// revision: the rule's title, category and date), their villa, or the stay's date their rule
/// counts from (the checkout for CHECKOUT rules, the arrival otherwise). Nothing else moves
/// them: a person's own edits (another day, another title) stay until one of those changes.
/// Those whose rule changed are noted in `turnover_rule_changed` for their checklists to follow
/// too. The stay's dates are recorded every time, for [`FLAG`]. `$1` the generator.
const MOVE: &str = "
WITH changed AS (
    SELECT w.id, w.status, w.due_date::date AS was, o.due, o.villa_id, o.stay_check_in,
           o.stay_check_out, w.task_rule_id, o.revision, o.title, o.category,
           w.task_rule_revision IS DISTINCT FROM o.revision AS rule_changed,
           w.villa_id <> o.villa_id AS villa_changed,
           CASE WHEN o.trigger = 'CHECKOUT' THEN w.stay_check_out IS DISTINCT FROM o.stay_check_out
                ELSE w.stay_check_in IS DISTINCT FROM o.stay_check_in END AS stay_moved
    FROM work_orders w
    JOIN turnover_occurrences o USING (task_rule_id, reservation_id, occurrence_index)
    WHERE w.status IN ('OPEN', 'ASSIGNED', 'ON_HOLD', 'AWAITING_APPROVAL')
      AND (w.villa_id <> o.villa_id
           OR w.task_rule_revision IS DISTINCT FROM o.revision
           OR w.stay_check_in IS DISTINCT FROM o.stay_check_in
           OR w.stay_check_out IS DISTINCT FROM o.stay_check_out)
    FOR UPDATE OF w
),
placed AS (
    SELECT c.*, (c.rule_changed OR c.villa_changed OR c.stay_moved) AS follows FROM changed c
),
moved AS (
    UPDATE work_orders w
    SET due_date = CASE WHEN p.follows THEN p.due::timestamptz ELSE w.due_date END,
        villa_id = p.villa_id,
        title = CASE WHEN p.rule_changed THEN p.title ELSE w.title END,
        category = CASE WHEN p.rule_changed THEN p.category ELSE w.category END,
        task_rule_revision = p.revision, stay_check_in = p.stay_check_in,
        stay_check_out = p.stay_check_out, updated_at = now()
    FROM placed p WHERE w.id = p.id
    RETURNING w.id
),
rule_changed AS (
    INSERT INTO turnover_rule_changed (work_order_id, task_rule_id)
    SELECT p.id, p.task_rule_id FROM placed p JOIN moved m ON m.id = p.id WHERE p.rule_changed
    RETURNING 1
),
history AS (
    INSERT INTO work_order_history (id, work_order_id, from_status, to_status, reason, changed_by)
    SELECT uuid_v7(), p.id, p.status, p.status,
           concat_ws(': ',
               concat_ws(' and ',
                   CASE WHEN p.rule_changed THEN 'task rule changed' END,
                   CASE WHEN p.stay_moved OR p.villa_changed THEN 'reservation moved' END),
               CASE WHEN p.was IS DISTINCT FROM p.due
                    THEN 'due ' || coalesce(p.was::text, 'none') || ' -> ' || p.due END),
           $1
    FROM placed p JOIN moved m ON m.id = p.id
    WHERE p.follows
    RETURNING 1
)
SELECT count(*) FROM history";

/// The checklists of open work orders whose rule changed follow it (step 3), item by item: an
/// item the rule still has (the same text and kind; the n-th of equal ones pairs with the n-th)
/// stays the same item, answered or not, in the rule's place (an unanswered one takes the
/// rule's `failCategory`); the rule's new items are added; an unanswered item the rule no longer
/// has is removed, an answered one kept after the rule's items. So a change that leaves the
/// checklist alone (a new title, another day) changes no item, and an answer is never lost.
/// Runs under the work orders' row locks (taken by [`MOVE`]), which answering an item takes too.
const CHECKLIST_PLAN: &str = "
CREATE TEMP TABLE turnover_checklist_plan ON COMMIT DROP AS
WITH wanted AS (
    SELECT c.work_order_id, (e.ord - 1)::int AS position, e.item->>'text' AS text,
           coalesce(e.item->>'kind', 'CHECK') AS kind,
           coalesce(e.item->>'failCategory', 'GENERAL') AS fail_category,
           row_number() OVER (PARTITION BY c.work_order_id, e.item->>'text',
                                           coalesce(e.item->>'kind', 'CHECK') ORDER BY e.ord) AS nth,
           count(*) OVER (PARTITION BY c.work_order_id) AS items
    FROM turnover_rule_changed c
    JOIN task_rules ru ON ru.id = c.task_rule_id
    CROSS JOIN LATERAL jsonb_array_elements(ru.checklist) WITH ORDINALITY AS e(item, ord)
),
existing AS (
    SELECT i.id, i.work_order_id, i.text, i.kind, i.position, i.result IS NOT NULL AS answered,
           row_number() OVER (PARTITION BY i.work_order_id, i.text, i.kind ORDER BY i.position) AS nth
    FROM work_order_checklist_items i
    JOIN turnover_rule_changed c ON c.work_order_id = i.work_order_id
),
placed AS (
    SELECT w.work_order_id, w.position, w.text, w.kind, w.fail_category, x.id AS item_id
    FROM wanted w
    LEFT JOIN existing x ON (x.work_order_id, x.text, x.kind, x.nth) = (w.work_order_id, w.text, w.kind, w.nth)
)
SELECT * FROM placed
UNION ALL
SELECT x.work_order_id,
       (coalesce((SELECT max(w.items) FROM wanted w WHERE w.work_order_id = x.work_order_id), 0)
        + row_number() OVER (PARTITION BY x.work_order_id ORDER BY x.position) - 1)::int,
       x.text, x.kind, NULL, x.id
FROM existing x
WHERE x.answered AND x.id NOT IN (SELECT item_id FROM placed WHERE item_id IS NOT NULL)";

/// Places the plan: items it does not keep are removed, the kept ones first moved out of the way
/// (positions are unique per work order) and then to their places, then the new items added.
const CHECKLIST_PLACE: &str = "
DELETE FROM work_order_checklist_items i
USING turnover_rule_changed c
WHERE i.work_order_id = c.work_order_id
  AND NOT EXISTS (SELECT 1 FROM turnover_checklist_plan p WHERE p.item_id = i.id);
UPDATE work_order_checklist_items i SET position = i.position + 1000000
FROM turnover_rule_changed c WHERE i.work_order_id = c.work_order_id;
UPDATE work_order_checklist_items i
SET position = p.position,
    fail_category = CASE WHEN i.result IS NULL AND p.fail_category IS NOT NULL
                         THEN p.fail_category ELSE i.fail_category END
FROM turnover_checklist_plan p WHERE i.id = p.item_id;
INSERT INTO work_order_checklist_items (id, work_order_id, position, text, kind, fail_category)
SELECT uuid_v7(), work_order_id, position, text, kind, fail_category
FROM turnover_checklist_plan WHERE item_id IS NULL
ORDER BY work_order_id, position";

/// Open work orders whose occurrence is gone are cancelled; started or finished ones flagged
/// (step 3). Only work orders whose stay the run looked at, of rules still active.
const CANCEL: &str = "
WITH gone AS (
    SELECT w.id, w.status,
           CASE WHEN s.villa_id IS NULL OR s.status NOT IN ('CONFIRMED', 'OWNER_STAY')
                THEN 'reservation cancelled'
                WHEN s.check_in <> w.stay_check_in OR s.check_out <> w.stay_check_out
                THEN 'reservation changed'
                ELSE 'task rule no longer applies' END AS reason
    FROM work_orders w
    JOIN turnover_stays s ON s.id = w.reservation_id
    JOIN task_rules ru ON ru.id = w.task_rule_id AND ru.archived_at IS NULL
    WHERE w.status IN ('OPEN', 'ASSIGNED', 'ON_HOLD', 'AWAITING_APPROVAL')
      AND NOT EXISTS (SELECT 1 FROM turnover_occurrences o
                      WHERE (o.task_rule_id, o.reservation_id, o.occurrence_index)
                          = (w.task_rule_id, w.reservation_id, w.occurrence_index))
    FOR UPDATE OF w
),
cancelled AS (
    UPDATE work_orders w SET status = 'CANCELLED', stay_cancelled = true, status_before_approval = NULL,
        updated_at = now()
    FROM gone g WHERE w.id = g.id
    RETURNING w.id
),
history AS (
    INSERT INTO work_order_history (id, work_order_id, from_status, to_status, reason, changed_by)
    SELECT uuid_v7(), g.id, g.status, 'CANCELLED', g.reason, $1
    FROM gone g JOIN cancelled c ON c.id = g.id
    RETURNING 1
)
SELECT count(*) FROM history";

/// Started or finished work orders are only flagged, when their stay changed after they were
/// placed: other dates, another villa, or no longer a stay the rule counts. A change of the rule
/// alone flags nothing.
const FLAG: &str = "
UPDATE work_orders w SET reservation_changed = true, updated_at = now()
FROM turnover_stays s, task_rules ru
WHERE s.id = w.reservation_id AND ru.id = w.task_rule_id AND ru.archived_at IS NULL
  AND w.status IN ('IN_PROGRESS', 'COMPLETED') AND NOT w.reservation_changed
  AND (s.villa_id IS DISTINCT FROM w.villa_id
       OR NOT (s.status = 'CONFIRMED' OR (s.status = 'OWNER_STAY' AND ru.include_owner_stays))
       OR s.check_in <> w.stay_check_in
       OR s.check_out <> w.stay_check_out
       -- Placed before the stay's dates were recorded (migration 0019): its occurrence's date.
       OR (w.stay_check_in IS NULL
           AND NOT EXISTS (SELECT 1 FROM turnover_occurrences o
                           WHERE (o.task_rule_id, o.reservation_id, o.occurrence_index)
                               = (w.task_rule_id, w.reservation_id, w.occurrence_index)
                             AND o.due::timestamptz = w.due_date)))";

/// A stay that came back brings back the work orders cancelled with it, when still ahead;
/// answers their ids (those with owner-billed estimates wait for the owner again:
/// [`super::approvals::reassess`]). `$1` the generator, `$2` today.
const RESTORE: &str = "
WITH back AS (
    SELECT w.id, o.due, o.villa_id, o.stay_check_in, o.stay_check_out
    FROM work_orders w
    JOIN turnover_occurrences o USING (task_rule_id, reservation_id, occurrence_index)
    WHERE w.status = 'CANCELLED' AND w.stay_cancelled AND o.due >= $2::date
    FOR UPDATE OF w
),
restored AS (
    UPDATE work_orders w
    SET status = CASE WHEN w.assignee_type IS NULL THEN 'OPEN' ELSE 'ASSIGNED' END,
        stay_cancelled = false, due_date = b.due::timestamptz, villa_id = b.villa_id,
        stay_check_in = b.stay_check_in, stay_check_out = b.stay_check_out, updated_at = now()
    FROM back b WHERE w.id = b.id
    RETURNING w.id, w.status
),
history AS (
    INSERT INTO work_order_history (id, work_order_id, from_status, to_status, reason, changed_by)
    SELECT uuid_v7(), id, 'CANCELLED', status, 'reservation restored', $1 FROM restored
    RETURNING work_order_id
)
SELECT coalesce(array_agg(work_order_id), '{}') FROM history";

/// The occurrences inside the horizon without a work order get one, with the rule's checklist
/// (step 4). `$1` the generator, `$2` today, `$3` the horizon's end.
const CREATE: &str = "
WITH created AS (
    INSERT INTO work_orders (id, villa_id, title, category, priority, status, assignee_type,
                             assignee_staff_id, due_date, created_by, source, reservation_id,
                             task_rule_id, occurrence_index, task_rule_revision, stay_check_in,
                             stay_check_out)
    SELECT uuid_v7(), o.villa_id, o.title, o.category, o.priority,
           CASE WHEN ru.default_assignee_id IS NULL THEN 'OPEN' ELSE 'ASSIGNED' END,
           CASE WHEN ru.default_assignee_id IS NULL THEN NULL ELSE 'TECHNICIAN' END,
           ru.default_assignee_id, o.due::timestamptz, $1, 'TURNOVER', o.reservation_id,
           o.task_rule_id, o.occurrence_index, o.revision, o.stay_check_in, o.stay_check_out
    FROM turnover_occurrences o
    JOIN task_rules ru ON ru.id = o.task_rule_id
    WHERE o.due BETWEEN $2::date AND $3::date
      AND NOT EXISTS (SELECT 1 FROM work_orders w
                      WHERE (w.task_rule_id, w.reservation_id, w.occurrence_index)
                          = (o.task_rule_id, o.reservation_id, o.occurrence_index))
    ORDER BY o.task_rule_id, o.reservation_id, o.occurrence_index
    ON CONFLICT (task_rule_id, reservation_id, occurrence_index)
        WHERE task_rule_id IS NOT NULL AND reservation_id IS NOT NULL DO NOTHING
    RETURNING id, status, task_rule_id
),
checklist AS (
    INSERT INTO work_order_checklist_items (id, work_order_id, position, text, kind, fail_category)
    SELECT uuid_v7(), c.id, (e.ord - 1)::int, e.item->>'text',
           coalesce(e.item->>'kind', 'CHECK'), coalesce(e.item->>'failCategory', 'GENERAL')
    FROM created c
    JOIN task_rules ru ON ru.id = c.task_rule_id
    CROSS JOIN LATERAL jsonb_array_elements(ru.checklist) WITH ORDINALITY AS e(item, ord)
    RETURNING 1
),
-- (Postgres runs every data-modifying CTE, read or not.)
history AS (
    INSERT INTO work_order_history (id, work_order_id, from_status, to_status, reason, changed_by)
    SELECT uuid_v7(), id, NULL, status, 'turnover', $1 FROM created
    RETURNING 1
)
SELECT count(*) FROM history";

/// A checkout's open work orders are a same-day turnover when another stay checks in to the
/// villa on the checkout's day: flagged and at least HIGH; otherwise unflagged, with the rule's
/// priority (step 5).
const SAME_DAY: &str = "
-- Materialized: inlined, its EXISTS would run once for the SET and again for the WHERE.
WITH wanted AS MATERIALIZED (
    SELECT w.id,
           EXISTS (SELECT 1 FROM turnover_stays n
                   WHERE n.villa_id = s.villa_id AND n.id <> s.id AND n.check_in = s.check_out
                     AND n.status IN ('CONFIRMED', 'OWNER_STAY')) AS same_day,
           ru.priority
    FROM work_orders w
    JOIN turnover_stays s ON s.id = w.reservation_id
    JOIN task_rules ru ON ru.id = w.task_rule_id AND ru.archived_at IS NULL AND ru.trigger = 'CHECKOUT'
    WHERE w.status IN ('OPEN', 'ASSIGNED', 'ON_HOLD', 'AWAITING_APPROVAL') AND s.villa_id IS NOT NULL
)
UPDATE work_orders w
SET same_day_turnover = x.same_day,
    priority = CASE WHEN x.same_day AND x.priority IN ('LOW', 'MEDIUM') THEN 'HIGH' ELSE x.priority END,
    updated_at = now()
FROM wanted x
WHERE w.id = x.id AND w.status IN ('OPEN', 'ASSIGNED', 'ON_HOLD', 'AWAITING_APPROVAL')
  AND (w.same_day_turnover <> x.same_day
       OR w.priority <> CASE WHEN x.same_day AND x.priority IN ('LOW', 'MEDIUM') THEN 'HIGH' ELSE x.priority END)";

/// One run over every active rule and the stays within `horizon` (the module's doc says what
/// it does). Safe to run any number of times at once.
pub async fn generate(conn: &mut PgConnection, horizon: Horizon) -> Result<Generated> {
    let mut tx = conn.begin().await?;
    // One run at a time: each reads the stays once, at its start, and a run working on what it
    // read before another committed would undo that one's work (bring back what it cancelled,
    // move back what it moved). A run that waits here reads what the other committed.
    sqlx::query("SELECT pg_advisory_xact_lock(hashtext('turnover-generation'))")
        .execute(&mut *tx)
        .await?;
    // A set-returning function of each row: Postgres cannot cost it and would compile the
    // statements (JIT) for longer than they run.
    sqlx::query("SET LOCAL jit = off").execute(&mut *tx).await?;
    sqlx::query(STAYS)
        .bind(horizon.today)
        .bind(horizon.until)
        .execute(&mut *tx)
        .await?;
    sqlx::raw_sql(
        "CREATE INDEX ON turnover_stays (id); CREATE INDEX ON turnover_stays (villa_id, check_in)",
    )
    .execute(&mut *tx)
    .await?;
    sqlx::query(OCCURRENCES).execute(&mut *tx).await?;
    sqlx::raw_sql(
        "CREATE INDEX ON turnover_occurrences (task_rule_id, reservation_id, occurrence_index);
         ANALYZE turnover_stays; ANALYZE turnover_occurrences",
    )
    .execute(&mut *tx)
    .await?;
    let count = |n: i64| u64::try_from(n).unwrap_or(0);
    // Work cancelled with its stay comes back first, so that it then follows the rule like the
    // rest (a rule may have changed while it was cancelled).
    let restored: Vec<uuid::Uuid> = sqlx::query_scalar(RESTORE)
        .bind(GENERATOR)
        .bind(horizon.today)
        .fetch_one(&mut *tx)
        .await?;
    // A restored work order with an owner-billed estimate waits for the owner again, as when
    // its lines were written.
    let estimated: Vec<uuid::Uuid> = sqlx::query_scalar(
        "SELECT DISTINCT work_order_id FROM work_order_costs
         WHERE work_order_id = ANY($1) AND bill_to = 'OWNER' AND estimate ORDER BY 1",
    )
    .bind(&restored)
    .fetch_all(&mut *tx)
    .await?;
    for id in estimated {
        super::approvals::reassess(&mut tx, id, GENERATOR).await?;
    }
    let restored = i64::try_from(restored.len()).unwrap_or(i64::MAX);
    sqlx::query(
        "CREATE TEMP TABLE turnover_rule_changed (work_order_id uuid PRIMARY KEY, task_rule_id uuid NOT NULL)
         ON COMMIT DROP",
    )
    .execute(&mut *tx)
    .await?;
    let moved: i64 = sqlx::query_scalar(MOVE)
        .bind(GENERATOR)
        .fetch_one(&mut *tx)
        .await?;
    let rule_changed: bool =
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM turnover_rule_changed)")
            .fetch_one(&mut *tx)
            .await?;
    if rule_changed {
        sqlx::query(CHECKLIST_PLAN).execute(&mut *tx).await?;
        sqlx::raw_sql(CHECKLIST_PLACE).execute(&mut *tx).await?;
    }
    let cancelled: i64 = sqlx::query_scalar(CANCEL)
        .bind(GENERATOR)
        .fetch_one(&mut *tx)
        .await?;
    let flagged = sqlx::query(FLAG).execute(&mut *tx).await?.rows_affected();
    let created: i64 = sqlx::query_scalar(CREATE)
        .bind(GENERATOR)
        .bind(horizon.today)
        .bind(horizon.until)
        .fetch_one(&mut *tx)
        .await?;
    sqlx::query(SAME_DAY).execute(&mut *tx).await?;
    tx.commit().await?;
    Ok(Generated {
        created: count(created),
        moved: count(moved),
        cancelled: count(cancelled),
        restored: count(restored),
        flagged,
    })
}
