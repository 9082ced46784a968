//! The housekeeping board: for each villa and day of a short range, the stays checking out and
//! checking in (a same-day turnover when both), and the work orders the task rules made for that
//! villa and day. One statement builds the whole answer.

use chrono::NaiveDate;
use serde_json::Value;
use sqlx::PgConnection;
use uuid::Uuid;

use crate::Result;

/// The most days one board shows (`from` to `to`, both included).
pub const MAX_DAYS: i64 = 62;

/// The days shown when `to` is left out: today and the next six.
pub const DEFAULT_DAYS: u64 = 7;

/// What the board is asked for: `from` to `to`, both included (at most [`MAX_DAYS`] dates), and
/// optionally one villa.
#[derive(Debug, Clone, Copy)]
pub struct Range {
    pub from: NaiveDate,
    pub to: NaiveDate,
    pub villa_id: Option<Uuid>,
}

// `$1` from, `$2` to, `$3` the villa or null. Stays that count: CONFIRMED or OWNER_STAY, on a
// listing linked to a villa. A work order is on the board when it was generated from a stay
// (`reservation_id`), is not CANCELLED and is due that day: the bounds are `due_date::date = day`
// in the session's time zone (the one the generation wrote `due_date` in), written as a range so
// that `work_orders_due (villa_id, due_date)` serves it.
const BOARD: &str = concat!(
    "
WITH stays AS (
    SELECT r.id, r.guest_name, r.check_in, r.check_out, r.nights, l.villa_id,
           CASE WHEN json_typeof(r.raw -> 'numberOfGuests') = 'number'
                 AND (r.raw ->> 'numberOfGuests')::numeric BETWEEN 0 AND 100000
                 AND (r.raw ->> 'numberOfGuests')::numeric = trunc((r.raw ->> 'numberOfGuests')::numeric)
                THEN (r.raw ->> 'numberOfGuests')::numeric::integer END AS guests
    FROM pms_reservations r
    JOIN pms_listings l ON l.pms_id = r.listing_pms_id
    WHERE r.status IN ('CONFIRMED', 'OWNER_STAY')
      AND l.villa_id IS NOT NULL
      AND ($3::uuid IS NULL OR l.villa_id = $3::uuid)
      AND ((r.check_out BETWEEN $1::date AND $2::date) OR (r.check_in BETWEEN $1::date AND $2::date))
),
days AS (
    SELECT villa_id, check_out AS day FROM stays WHERE check_out BETWEEN $1::date AND $2::date
    UNION
    SELECT villa_id, check_in FROM stays WHERE check_in BETWEEN $1::date AND $2::date
)
SELECT coalesce(jsonb_agg(jsonb_build_object(
           'date', d.day,
           'villa', jsonb_build_object('id', v.id, 'name', v.villa_name),
           'checkouts', outs.list,
           'checkins', ins.list,
           'sameDayTurnover', jsonb_array_length(outs.list) > 0 AND jsonb_array_length(ins.list) > 0,
           'workOrders', work.list)
         ORDER BY d.day, v.villa_name, v.id), '[]'::jsonb)
FROM days d
JOIN villas v ON v.id = d.villa_id
CROSS JOIN LATERAL (
    SELECT coalesce(jsonb_agg(jsonb_build_object('reservationId', s.id, 'guestName', s.guest_name,
                                                 'checkOut', s.check_out)
                              ORDER BY s.guest_name, s.id), '[]'::jsonb) AS list
    FROM stays s WHERE s.villa_id = d.villa_id AND s.check_out = d.day
) outs
CROSS JOIN LATERAL (
    SELECT coalesce(jsonb_agg(jsonb_build_object('reservationId', s.id, 'guestName', s.guest_name,
                                                 'checkIn', s.check_in, 'nights', s.nights,
                                                 'guests', s.guests)
                              ORDER BY s.guest_name, s.id), '[]'::jsonb) AS list
    FROM stays s WHERE s.villa_id = d.villa_id AND s.check_in = d.day
) ins
CROSS JOIN LATERAL (
    SELECT coalesce(jsonb_agg(jsonb_build_object('id', w.id, 'title', w.title, 'status', w.status,
                                                 'assignee', ",
    crate::maintenance::work_orders::work_order_assignee!(),
    ",
                                                 'taskRuleId', w.task_rule_id)
                              ORDER BY w.title, w.id), '[]'::jsonb) AS list
    FROM work_orders w
    WHERE w.villa_id = d.villa_id
      AND w.due_date >= d.day::timestamptz AND w.due_date < (d.day + 1)::timestamptz
      AND w.reservation_id IS NOT NULL
      AND w.status <> 'CANCELLED'
) work"
);

/// The board's entries, by date then villa name (a JSON array of `views::BoardDay`).
pub async fn board(conn: &mut PgConnection, range: Range) -> Result<Vec<Value>> {
    let board: Value = sqlx::query_scalar(BOARD)
        .bind(range.from)
        .bind(range.to)
        .bind(range.villa_id)
        .fetch_one(&mut *conn)
        .await?;
    Ok(match board {
        Value::Array(days) => days,
        _ => Vec::new(),
    })
}
