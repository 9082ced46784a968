//! The one statement behind every figure (per bucket, or per listing and bucket), and its rows.

use futures::{StreamExt as _, stream::BoxStream};
use rust_decimal::Decimal;
use sqlx::PgConnection;
use uuid::Uuid;

use super::{Buckets, Currency, Figures, Scope};
use crate::{Error, Result};

/// A listing in scope, as the per-listing figures name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListingRef {
    pub id: Uuid,
    pub pms_id: i64,
    pub name: String,
    pub status: String,
    pub bedrooms: Option<i32>,
    pub location: Option<String>,
    /// The listing's own currency in the PMS (the figures' currency is the answer's).
    pub currency: Option<String>,
}

/// The figures of one bucket, of one listing or of every listing in scope.
#[derive(Debug, Clone)]
pub struct BucketFigures {
    /// Index in the [`Buckets`].
    pub bucket: usize,
    /// `None`: every listing in scope together.
    pub listing: Option<ListingRef>,
    pub figures: Figures,
}

/// The listings in scope (alias `l` of `pms_listings`): those of `$1` (a `uuid[]`), or every
/// ACTIVE one when `$1` is empty.
macro_rules! in_scope {
    () => {
        "CASE WHEN cardinality($1::uuid[]) = 0 THEN l.status = 'ACTIVE' ELSE l.id = ANY($1::uuid[]) END"
    };
}

// The statement's binds: $1 the scope's listing ids (uuid[]), $2 the buckets' first nights
// (date[], ascending), $3 the night after the last bucket (date), $4 the currency (text).
//
// `buckets`: (i, b_from, b_to), i from 1 as the array's subscripts.
// `parts`: one row per counted stay and bucket it touches: its nights inside the bucket, its own
// nights, its amount, whether it is in the currency and whether it checks in inside the bucket.
// The buckets touched are those of its first and last night inside the range (`width_bucket`
// over the buckets' first nights), and every one between: a set-returning call in the select
// list (one ProjectSet node) rather than a LATERAL function scan, which cost ~40 % of the
// metrics statement (re-scanned per stay, measured on 100,000 stays). Currencies are stored
// upper-cased (`hostaway`), so the comparison needs no function. The scope is a semi-join on
// `pms_listings` rather than a CTE, so that the scan of the stays may run in parallel.
// `owner`: per bucket and listing, the distinct nights inside the range that owner stays block
// (offsets from the range's first night, so the series is of integers, not of timestamps).
macro_rules! figures_with {
    () => {
        concat!(
            "WITH buckets AS (
    SELECT g.i, ($2::date[])[g.i] AS b_from, coalesce(($2::date[])[g.i + 1], $3::date) AS b_to
    FROM generate_subscripts($2::date[], 1) AS g (i)),
parts AS (
    SELECT x.listing_pms_id, x.i,
           least(x.check_out, coalesce(($2::date[])[x.i + 1], $3::date))
               - greatest(x.check_in, ($2::date[])[x.i]) AS nights,
           x.check_out - x.check_in AS stay_nights,
           x.total_amount,
           coalesce(x.currency = $4::text, false) AS priced,
           x.check_in >= ($2::date[])[x.i] AS checks_in
    FROM (SELECT r.listing_pms_id, r.check_in, r.check_out, r.total_amount, r.currency,
                 generate_series(width_bucket(greatest(r.check_in, ($2::date[])[1]), $2::date[]),
                                 width_bucket(least(r.check_out, $3::date) - 1, $2::date[])) AS i
          FROM pms_reservations r
          WHERE r.status = 'CONFIRMED' AND r.check_out > ($2::date[])[1] AND r.check_in < $3::date
            AND r.check_out > r.check_in
            AND r.listing_pms_id IN (SELECT l.pms_id FROM pms_listings l WHERE ",
            in_scope!(),
            ")) x),
owner AS (
    SELECT width_bucket(($2::date[])[1] + d.k, $2::date[]) AS i, d.listing_pms_id, count(*) AS nights
    FROM (SELECT DISTINCT r.listing_pms_id, n.k
          FROM pms_reservations r
          CROSS JOIN LATERAL generate_series(
              greatest(r.check_in, ($2::date[])[1]) - ($2::date[])[1],
              least(r.check_out, $3::date) - ($2::date[])[1] - 1) AS n (k)
          WHERE r.status = 'OWNER_STAY' AND r.check_out > ($2::date[])[1] AND r.check_in < $3::date
            AND r.listing_pms_id IN (SELECT l.pms_id FROM pms_listings l WHERE ",
            in_scope!(),
            ")) d
    GROUP BY 1, 2)"
        )
    };
}

// The sums of `parts` (alias `p`) per group. A stay wholly inside the bucket adds its amount
// as it is (no division).
macro_rules! part_sums {
    () => {
        "sum(p.nights) AS booked, sum(p.nights) FILTER (WHERE p.priced) AS priced,
         sum(CASE WHEN p.nights = p.stay_nights THEN p.total_amount
                  ELSE p.total_amount * p.nights / p.stay_nights END) FILTER (WHERE p.priced) AS revenue,
         count(*) FILTER (WHERE p.checks_in) AS bookings"
    };
}

// The figure columns from the sums (`k`) and the owner nights (`ow`). The revenue is kept to 10
// decimals: a division's repeating decimals would pass the 28 digits a Decimal holds, and 10
// decimals change no figure rounded to 2.
macro_rules! figure_columns {
    () => {
        "coalesce(k.booked, 0)::bigint AS booked_nights, coalesce(k.priced, 0)::bigint AS priced_nights,
         coalesce(round(k.revenue, 10), 0) AS revenue, coalesce(k.bookings, 0)::bigint AS bookings,
         coalesce(ow.nights, 0)::bigint AS owner_nights"
    };
}

/// Per bucket, every listing in scope together. Public for `bench/reporting.sh`, which has
/// Postgres run it alone beside the route (`reporting-sql`).
pub const TOTALS: &str = concat!(
    figures_with!(),
    "
SELECT b.i, NULL::uuid AS listing_id, NULL::bigint AS pms_id, NULL::text AS name, NULL::text AS status,
       NULL::integer AS bedrooms, NULL::text AS location, NULL::text AS listing_currency,
       (b.b_to - b.b_from)::bigint * (SELECT count(*) FROM pms_listings l WHERE ",
    in_scope!(),
    ") AS nights, ",
    figure_columns!(),
    "
FROM buckets b
LEFT JOIN (SELECT p.i, ",
    part_sums!(),
    " FROM parts p GROUP BY p.i) k ON k.i = b.i
LEFT JOIN (SELECT o.i, sum(o.nights) AS nights FROM owner o GROUP BY o.i) ow ON ow.i = b.i
ORDER BY b.i"
);

/// Per listing in scope and bucket, every listing present.
const BY_LISTING: &str = concat!(
    figures_with!(),
    ",
scope AS (
    SELECT l.id, l.pms_id, l.name, l.status, l.bedrooms, l.location, l.currency
    FROM pms_listings l WHERE ",
    in_scope!(),
    ")
SELECT b.i, s.id AS listing_id, s.pms_id, s.name, s.status, s.bedrooms, s.location,
       s.currency AS listing_currency, (b.b_to - b.b_from)::bigint AS nights, ",
    figure_columns!(),
    "
FROM scope s
CROSS JOIN buckets b
LEFT JOIN (SELECT p.listing_pms_id, p.i, ",
    part_sums!(),
    " FROM parts p GROUP BY p.listing_pms_id, p.i) k ON k.listing_pms_id = s.pms_id AND k.i = b.i
LEFT JOIN owner ow ON ow.listing_pms_id = s.pms_id AND ow.i = b.i
ORDER BY lower(s.name), s.id, b.i"
);

/// A row of [`TOTALS`] or [`BY_LISTING`].
#[derive(sqlx::FromRow)]
struct FigureRow {
    i: i32,
    listing_id: Option<Uuid>,
    pms_id: Option<i64>,
    name: Option<String>,
    status: Option<String>,
    bedrooms: Option<i32>,
    location: Option<String>,
    listing_currency: Option<String>,
    nights: i64,
    booked_nights: i64,
    priced_nights: i64,
    revenue: Decimal,
    bookings: i64,
    owner_nights: i64,
}

impl From<FigureRow> for BucketFigures {
    fn from(row: FigureRow) -> Self {
        let listing = row.listing_id.map(|id| ListingRef {
            id,
            pms_id: row.pms_id.unwrap_or_default(),
            name: row.name.unwrap_or_default(),
            status: row.status.unwrap_or_default(),
            bedrooms: row.bedrooms,
            location: row.location,
            currency: row.listing_currency,
        });
        BucketFigures {
            // SQL's subscripts start at 1.
            bucket: usize::try_from(row.i - 1).unwrap_or_default(),
            listing,
            figures: Figures {
                revenue: row.revenue,
                booked_nights: row.booked_nights,
                priced_nights: row.priced_nights,
                owner_nights: row.owner_nights,
                nights: row.nights,
                bookings: row.bookings,
            },
        }
    }
}

/// The one statement behind every figure. `by_listing` false: one row per bucket (the listings
/// in scope summed), in bucket order; true: one row per listing in scope and bucket, every
/// listing present even without stays, ordered by name (any letter case), id, bucket.
pub async fn figures(
    conn: &mut PgConnection,
    scope: &Scope,
    buckets: &Buckets,
    currency: &Currency,
    by_listing: bool,
) -> Result<Vec<BucketFigures>> {
    let rows: Vec<FigureRow> = sqlx::query_as(if by_listing { BY_LISTING } else { TOTALS })
        .bind(&scope.listing_ids)
        .bind(&buckets.starts)
        .bind(buckets.to)
        .bind(currency.as_str())
        .fetch_all(&mut *conn)
        .await?;
    Ok(rows.into_iter().map(BucketFigures::from).collect())
}

/// The rows of [`figures`] by listing as a stream (the exports), so that a large export never
/// holds them all.
pub fn figures_stream<'c>(
    conn: &'c mut PgConnection,
    scope: &'c Scope,
    buckets: &'c Buckets,
    currency: &'c Currency,
) -> BoxStream<'c, Result<BucketFigures>> {
    sqlx::query_as::<_, FigureRow>(BY_LISTING)
        .bind(&scope.listing_ids)
        .bind(&buckets.starts)
        .bind(buckets.to)
        .bind(currency.as_str())
        .fetch(conn)
        .map(|row| row.map(BucketFigures::from).map_err(Error::from))
        .boxed()
}
