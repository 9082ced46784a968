//! The rows of an export as cells, streamed from Postgres: the figures per listing and bucket, or
//! the reservation list; and the revenue export's Total row.

use futures::StreamExt;
use futures::stream::BoxStream;
use sqlx::PgConnection;

use super::{Cell, ExportSpec, ExportType};
use crate::reporting::figures::{
    self, BucketFigures, Buckets, Currency, Figures, Granularity, ListingRef, Scope,
};
use crate::reporting::reservations::{self, ReservationRow};
use crate::{Error, Result};

/// The buckets the figures of an export are computed over: the period (listings), its nights
/// (occupancy), its calendar months (revenue); `None` for reservations, which have no figures.
pub fn buckets_for(spec: &ExportSpec) -> Option<Buckets> {
    let period = spec.period()?;
    match spec.kind {
        ExportType::Reservations | ExportType::OwnerStatement => None,
        ExportType::Listings => Some(Buckets::whole(period)),
        ExportType::Occupancy => Some(Buckets::split(period, Granularity::Daily)),
        ExportType::Revenue => Some(Buckets::split(period, Granularity::Monthly)),
    }
}

fn missing_period(kind: ExportType) -> Error {
    Error::Internal(anyhow::anyhow!("a {} export needs a period", kind.as_str()))
}

/// How many rows the export's file will have, the revenue export's Total row included (the
/// job's progress). Counted in a statement of its own, before the rows are read: a sync
/// meanwhile may make it a little off, which only the progress shows.
pub async fn count_rows(conn: &mut PgConnection, spec: &ExportSpec) -> Result<i64> {
    if spec.kind == ExportType::Reservations {
        return reservations::count_reservations(conn, &spec.reservation_filter()).await;
    }
    if spec.kind == ExportType::OwnerStatement {
        let rows = owner_statement_rows(conn, spec).await?;
        return Ok(i64::try_from(rows.len()).unwrap_or(i64::MAX));
    }
    let buckets = buckets_for(spec).ok_or_else(|| missing_period(spec.kind))?;
    // The listings in scope, as `figures` reads them.
    let listings: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM pms_listings l
         WHERE CASE WHEN cardinality($1::uuid[]) = 0 THEN l.status = 'ACTIVE'
                    ELSE l.id = ANY($1) END",
    )
    .bind(&spec.listing_ids)
    .fetch_one(&mut *conn)
    .await?;
    let per_listing = i64::try_from(buckets.len()).unwrap_or(i64::MAX);
    let total_row = i64::from(spec.kind == ExportType::Revenue);
    Ok(listings
        .saturating_mul(per_listing)
        .saturating_add(total_row))
}

/// The rows of the export, in order, streamed from Postgres so that a large export is never
/// held in memory; the revenue export's Total row is not among them ([`revenue_total_row`]).
/// `scope` is the export's listings ([`Scope::resolve`] of its `listingIds`) and `buckets` its
/// [`buckets_for`]; a reservations export reads neither (any value does).
pub fn rows<'c>(
    conn: &'c mut PgConnection,
    spec: &'c ExportSpec,
    scope: &'c Scope,
    buckets: &'c Buckets,
) -> BoxStream<'c, Result<Vec<Cell>>> {
    let currency = &spec.currency;
    match spec.kind {
        ExportType::Reservations => reservations::export_stream(conn, &spec.reservation_filter())
            .map(|row| row.map(reservation_cells))
            .boxed(),
        ExportType::Listings => figures::figures_stream(conn, scope, buckets, currency)
            .map(move |row| row.and_then(|row| listing_cells(row, currency)))
            .boxed(),
        ExportType::Occupancy => figures::figures_stream(conn, scope, buckets, currency)
            .map(move |row| row.and_then(|row| occupancy_cells(row, buckets)))
            .boxed(),
        ExportType::Revenue => figures::figures_stream(conn, scope, buckets, currency)
            .map(move |row| row.and_then(|row| revenue_cells(row, buckets, currency)))
            .boxed(),
        // A statement is a few hundred lines at most: computed whole, then streamed.
        ExportType::OwnerStatement => {
            futures::stream::once(async move { owner_statement_rows(conn, spec).await })
                .flat_map(|rows| match rows {
                    Ok(rows) => futures::stream::iter(rows.into_iter().map(Ok)).boxed(),
                    Err(e) => futures::stream::iter([Err(e)]).boxed(),
                })
                .boxed()
        }
    }
}

/// An owner statement's rows: per villa its stays, its owner costs and its totals per currency,
/// then the owner's totals per currency.
async fn owner_statement_rows(
    conn: &mut PgConnection,
    spec: &ExportSpec,
) -> Result<Vec<Vec<Cell>>> {
    use crate::reporting::statements::{self, Month, Totals};
    let bad = || {
        Error::Internal(anyhow::anyhow!(
            "an owner statement export without its owner, month or zone"
        ))
    };
    let owner = spec.owner_id.ok_or_else(bad)?;
    let zone = spec.zone().ok_or_else(bad)?;
    let month = spec.start_date.and_then(Month::of).ok_or_else(bad)?;
    let statement = statements::statement(conn, owner, month, zone).await?;
    let money = |d: rust_decimal::Decimal| Cell::Money(d);
    let total_cells = |villa: &str, line: &str, currency: &str, t: &Totals| {
        vec![
            Cell::Text(villa.to_owned()),
            Cell::Text(line.to_owned()),
            Cell::Empty,
            Cell::Empty,
            Cell::Empty,
            Cell::Int(t.nights),
            Cell::Text(currency.to_owned()),
            money(t.gross),
            money(t.commission),
            money(t.net),
            money(t.costs),
            money(t.management_fee),
            money(t.balance()),
        ]
    };
    let mut rows = Vec::new();
    for villa in &statement.villas {
        for (stay, m) in &villa.stays {
            let priced = stay.currency.is_some();
            let amount = |d| if priced { Cell::Money(d) } else { Cell::Empty };
            rows.push(vec![
                Cell::Text(villa.name.clone()),
                Cell::Text("Stay".to_owned()),
                Cell::Text(stay.pms_id.to_string()),
                Cell::Text(format!(
                    "{} · {} · {} · {} to {}",
                    stay.listing_name,
                    stay.guest_name.as_deref().unwrap_or("guest"),
                    stay.channel,
                    stay.check_in,
                    stay.check_out
                )),
                Cell::Date(stay.check_in),
                Cell::Int(i64::from(stay.nights)),
                text(stay.currency.clone()),
                amount(m.gross),
                amount(m.commission),
                amount(m.net()),
                Cell::Empty,
                Cell::Empty,
                Cell::Empty,
            ]);
        }
        for cost in &villa.costs {
            rows.push(vec![
                Cell::Text(villa.name.clone()),
                Cell::Text("Owner cost".to_owned()),
                Cell::Text(cost.work_order_id.to_string()),
                Cell::Text(format!(
                    "{}: {} ({})",
                    cost.title, cost.description, cost.kind
                )),
                Cell::Date(cost.completed_on),
                Cell::Empty,
                Cell::Text(cost.currency.clone()),
                Cell::Empty,
                Cell::Empty,
                Cell::Empty,
                Cell::Money(cost.amount),
                Cell::Empty,
                Cell::Empty,
            ]);
        }
        for (currency, t) in &villa.totals {
            rows.push(total_cells(&villa.name, "Villa total", currency, t));
        }
    }
    for (currency, t) in &statement.totals {
        rows.push(total_cells("All villas", "Owner total", currency, t));
    }
    Ok(rows)
}

fn text(value: Option<String>) -> Cell {
    value.map_or(Cell::Empty, Cell::Text)
}

fn reservation_cells(r: ReservationRow) -> Vec<Cell> {
    vec![
        Cell::Text(r.id.to_string()),
        Cell::Int(r.pms_id),
        text(r.listing_name),
        r.listing_pms_id.map_or(Cell::Empty, Cell::Int),
        text(r.guest_name),
        Cell::Date(r.check_in),
        Cell::Date(r.check_out),
        Cell::Int(i64::from(r.nights)),
        Cell::Text(r.channel),
        text(r.channel_name),
        Cell::Text(r.status),
        Cell::Money(r.total_amount),
        Cell::Money(r.net_amount),
        text(r.currency),
    ]
}

/// The listing of a per-listing row: `figures_stream` gives one to every row.
fn listing_of(row: BucketFigures) -> Result<(ListingRef, Figures, usize)> {
    match row.listing {
        Some(listing) => Ok((listing, row.figures, row.bucket)),
        None => Err(Error::Internal(anyhow::anyhow!(
            "a figures row per listing came without its listing"
        ))),
    }
}

fn listing_cells(row: BucketFigures, currency: &Currency) -> Result<Vec<Cell>> {
    let (listing, f, _) = listing_of(row)?;
    Ok(vec![
        Cell::Text(listing.id.to_string()),
        Cell::Int(listing.pms_id),
        Cell::Text(listing.name),
        Cell::Text(listing.status),
        listing
            .bedrooms
            .map_or(Cell::Empty, |b| Cell::Int(i64::from(b))),
        text(listing.location),
        Cell::Int(f.nights),
        Cell::Int(f.booked_nights),
        Cell::Int(f.available_nights()),
        Cell::Number(f.occupancy()),
        Cell::Int(f.bookings),
        Cell::Money(f.revenue_rounded()),
        Cell::Money(f.adr()),
        Cell::Money(f.revpar()),
        Cell::Text(currency.as_str().to_owned()),
    ])
}

fn occupancy_cells(row: BucketFigures, buckets: &Buckets) -> Result<Vec<Cell>> {
    let (listing, f, bucket) = listing_of(row)?;
    let (night, _) = buckets.range(bucket);
    Ok(vec![
        Cell::Date(night),
        Cell::Text(listing.id.to_string()),
        Cell::Int(listing.pms_id),
        Cell::Text(listing.name),
        Cell::Int(f.booked_nights),
        Cell::Int(f.owner_nights),
        Cell::Int(f.available_nights()),
        Cell::Number(f.occupancy()),
    ])
}

/// The figures' columns of a revenue row, from Nights on.
fn revenue_figures(f: &Figures, currency: &Currency) -> [Cell; 9] {
    [
        Cell::Int(f.nights),
        Cell::Int(f.booked_nights),
        Cell::Int(f.available_nights()),
        Cell::Money(f.revenue_rounded()),
        Cell::Number(f.occupancy()),
        Cell::Money(f.adr()),
        Cell::Money(f.revpar()),
        Cell::Int(f.bookings),
        Cell::Text(currency.as_str().to_owned()),
    ]
}

fn revenue_cells(row: BucketFigures, buckets: &Buckets, currency: &Currency) -> Result<Vec<Cell>> {
    let (listing, f, bucket) = listing_of(row)?;
    let (first_night, _) = buckets.range(bucket);
    let mut cells = vec![
        Cell::Text(figures::label(Granularity::Monthly, first_night)),
        Cell::Text(listing.id.to_string()),
        Cell::Int(listing.pms_id),
        Cell::Text(listing.name),
    ];
    cells.extend(revenue_figures(&f, currency));
    Ok(cells)
}

/// The revenue export's last row: every listing in scope over the whole period, with the
/// figures `GET /reporting/dashboard/metrics` computes for the same period, listings and
/// currency (the same computation, unrounded until the end; the route answers up to 366 nights,
/// the export takes 730).
pub async fn revenue_total_row(
    conn: &mut PgConnection,
    spec: &ExportSpec,
    scope: &Scope,
) -> Result<Vec<Cell>> {
    let period = spec.period().ok_or_else(|| missing_period(spec.kind))?;
    let whole = Buckets::whole(period);
    let rows = figures::figures(conn, scope, &whole, &spec.currency, false).await?;
    // No row when no listing is in scope: every figure is 0.
    let total = rows
        .into_iter()
        .next()
        .map(|row| row.figures)
        .unwrap_or_default();
    let mut cells = vec![
        Cell::Text(format!("{} – {}", period.start, period.end)),
        Cell::Empty,
        Cell::Empty,
        Cell::Text("Total".to_owned()),
    ];
    cells.extend(revenue_figures(&total, &spec.currency));
    Ok(cells)
}

#[cfg(test)]
mod tests {
    use rust_decimal::Decimal;
    use uuid::Uuid;

    use super::super::columns;
    use super::super::tests::{date, spec};
    use super::*;

    fn listing() -> ListingRef {
        ListingRef {
            id: Uuid::nil(),
            pms_id: 40160,
            name: "Villa Mango".to_owned(),
            status: "ACTIVE".to_owned(),
            bedrooms: None,
            location: Some("Phuket, Thailand".to_owned()),
            currency: Some("THB".to_owned()),
        }
    }

    fn figures_row(bucket: usize) -> BucketFigures {
        BucketFigures {
            bucket,
            listing: Some(listing()),
            figures: Figures {
                revenue: Decimal::new(1_000_000, 3),
                booked_nights: 3,
                priced_nights: 3,
                owner_nights: 1,
                nights: 31,
                bookings: 1,
            },
        }
    }

    /// Every cell fits its column: the kind the header promises, or empty.
    fn assert_fits(kind: ExportType, cells: &[Cell]) {
        let columns = columns(kind);
        assert_eq!(cells.len(), columns.len(), "{kind:?}");
        for (cell, column) in cells.iter().zip(columns) {
            if let Some(cell_kind) = cell.kind() {
                assert_eq!(cell_kind, column.kind, "{kind:?} {}", column.header);
            }
        }
    }

    #[test]
    fn rows_fit_their_columns() {
        let reservation = ReservationRow {
            id: Uuid::nil(),
            pms_id: 77,
            listing_id: None,
            listing_pms_id: Some(40160),
            listing_name: None,
            guest_name: Some("Ann".to_owned()),
            check_in: date("2026-02-27"),
            check_out: date("2026-03-02"),
            nights: 3,
            channel: "AIRBNB".to_owned(),
            channel_name: None,
            status: "CONFIRMED".to_owned(),
            total_amount: Decimal::new(300_000, 2),
            net_amount: Decimal::new(250_000, 2),
            currency: Some("THB".to_owned()),
        };
        let cells = reservation_cells(reservation);
        assert_fits(ExportType::Reservations, &cells);
        assert_eq!(cells[5], Cell::Date(date("2026-02-27")));
        assert_eq!(cells[2], Cell::Empty);

        let thb = Currency::new_setting("THB").unwrap();
        let cells = listing_cells(figures_row(0), &thb).unwrap();
        assert_fits(ExportType::Listings, &cells);
        assert_eq!(cells[4], Cell::Empty);
        // 30 available nights (31 less 1 owner night); revenue rounded only at the end.
        assert_eq!(cells[8], Cell::Int(30));
        assert_eq!(cells[11], Cell::Money(Decimal::new(100_000, 2)));

        let period = spec(ExportType::Occupancy).period().unwrap();
        let daily = Buckets::split(period, Granularity::Daily);
        let cells = occupancy_cells(figures_row(2), &daily).unwrap();
        assert_fits(ExportType::Occupancy, &cells);
        assert_eq!(cells[0], Cell::Date(date("2026-03-03")));

        let monthly = Buckets::split(period, Granularity::Monthly);
        let cells = revenue_cells(figures_row(0), &monthly, &thb).unwrap();
        assert_fits(ExportType::Revenue, &cells);
        assert_eq!(cells[0], Cell::Text("2026-03".to_owned()));

        let no_listing = BucketFigures {
            listing: None,
            ..figures_row(0)
        };
        assert!(listing_cells(no_listing, &thb).is_err());
    }
}
