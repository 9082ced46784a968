//! The figures of a listing over a window of nights, defined once for the listing routes (the
//! last 30 days) and the dashboard (any period). The SQL is static text: the window's bounds and
//! the listing are SQL expressions the caller writes (a bound parameter, a column), never client
//! text.
//!
//! Over the nights `[from, to)` (`to` excluded), counting only `CONFIRMED` reservations (owner
//! stays, cancellations, inquiries and pending requests are not bookings):
//! - `revenue`: the sum over those reservations of `totalAmount × (its nights inside the window)
//!   / (its nights)`, so a stay across the window's edge counts pro rata by night; rounded to 2
//!   decimals, in the listing's currency. A stay's nights are the days between its check-in and
//!   check-out.
//! - `occupancy`: the nights of the window booked by at least one of them, as a percentage of the
//!   window's nights, rounded to 1 decimal (0 to 100).
//! - `bookings`: how many of them check in inside the window.
//!
//! "The last 30 days" are the 30 nights before today, `[today − 30, today)`, where today is the
//! company's day (`BUSINESS_TIME_ZONE`, [`crate::clock::BusinessZone::today`]), bound by the
//! caller, never SQL's `current_date`.

/// How many nights "the last 30 days" span.
pub const LAST_DAYS: i32 = 30;

/// The definitions above, for the OpenAPI description of `metrics`.
pub const DEFINITIONS: &str = "Figures over the last 30 days: the 30 nights before today \
(the company's day, BUSINESS_TIME_ZONE), counting CONFIRMED reservations only. \
revenue: the sum of each reservation's totalAmount × (its nights inside the 30 days) / (its nights), \
so a stay across the period's edge counts pro rata by night, rounded to 2 decimals, in the \
listing's currency. occupancy: the nights of the 30 booked by at least one of them, as a \
percentage rounded to 1 decimal (owner stays are not bookings). bookings: how many of them check \
in inside the 30 days.";

/// The metrics `{revenue, occupancy, bookings}` (a `jsonb` object) of the listing whose PMS id is
/// the SQL expression `$listing`, over the nights `[$from, $to)`, both SQL `date` expressions
/// (`"($1::date - 30)"`, `"$1::date"`). Each argument is a string literal; the expression reads
/// reservations under the aliases `r` and `o`, and the window's bounds several times (a bound
/// parameter, not a volatile call).
macro_rules! window_metrics {
    ($listing:tt, $from:tt, $to:tt) => {
        concat!(
            "(SELECT jsonb_build_object(",
            "'revenue', coalesce(round(sum(r.total_amount * (least(r.check_out, ",
            $to,
            ") - greatest(r.check_in, ",
            $from,
            ")) / nullif(r.check_out - r.check_in, 0)), 2), 0), ",
            "'occupancy', coalesce(round(100.0 * (SELECT count(DISTINCT n.night) FROM pms_reservations o ",
            "CROSS JOIN LATERAL generate_series(greatest(o.check_in, ",
            $from,
            ") - ",
            $from,
            ", least(o.check_out, ",
            $to,
            ") - ",
            $from,
            " - 1) AS n (night) WHERE o.listing_pms_id = ",
            $listing,
            " AND o.status = 'CONFIRMED' AND o.check_in < ",
            $to,
            " AND o.check_out > ",
            $from,
            ") / nullif(",
            $to,
            " - ",
            $from,
            ", 0), 1), 0), ",
            "'bookings', count(*) FILTER (WHERE r.check_in >= ",
            $from,
            ")) FROM pms_reservations r WHERE r.listing_pms_id = ",
            $listing,
            " AND r.status = 'CONFIRMED' AND r.check_in < ",
            $to,
            " AND r.check_out > ",
            $from,
            ")"
        )
    };
}
pub(crate) use window_metrics;

/// The metrics of listing `l` over the last 30 days, today being `$1` of the statement.
macro_rules! last_30_days {
    () => {
        $crate::reporting::metrics::window_metrics!("l.pms_id", "($1::date - 30)", "$1::date")
    };
}
pub(crate) use last_30_days;

/// The metrics `{revenue, occupancy, bookings}` of listing `l`
/// (alias of `pms_listings`) over the 30 nights before `$1` (today, a `date`).
pub const LAST_30_DAYS: &str = last_30_days!();
