//! The dashboard's answers made of the figures: the metrics, the chart and the occupancy.

use rust_decimal::Decimal;
use serde_json::{Value, json};
use sqlx::PgConnection;

use super::sums::change_json;
use super::{
    BucketFigures, Buckets, ChartType, Currency, Figures, Granularity, Period, Scope, figures,
    label, number,
};
use crate::Result;

/// The figures of buckets 0 and 1 of a [`Buckets::with_previous`] of the whole period: (previous,
/// current).
fn previous_and_current(rows: &[BucketFigures]) -> (Figures, Figures) {
    let of = |bucket: usize| {
        rows.iter()
            .find(|r| r.bucket == bucket)
            .map(|r| r.figures)
            .unwrap_or_default()
    };
    (of(0), of(1))
}

/// `/dashboard/metrics`: `{period: {startDate, endDate}, previousPeriod: {...}, currency,
/// listingIds: [..] | null, revenue: {total, previous, change}, occupancy: {rate, previous,
/// change}, adr: {value, previous, change}, bookings: {count, previous, change}, revpar: {value,
/// previous, change}, nights: {booked, available, previousBooked, previousAvailable, priced,
/// previousPriced}}`.
pub async fn metrics(
    conn: &mut PgConnection,
    scope: &Scope,
    period: Period,
    currency: &Currency,
) -> Result<Value> {
    let buckets = Buckets::with_previous(period, None);
    let rows = figures(conn, scope, &buckets, currency, false).await?;
    let (previous, current) = previous_and_current(&rows);
    // The figures as shown (rounded), and the change between those.
    let trio = |value: Decimal, before: Decimal| {
        (number(value), number(before), change_json(value, before))
    };
    let (revenue, revenue_before, revenue_change) =
        trio(current.revenue_rounded(), previous.revenue_rounded());
    let (occupancy, occupancy_before, occupancy_change) =
        trio(current.occupancy(), previous.occupancy());
    let (adr, adr_before, adr_change) = trio(current.adr(), previous.adr());
    let (revpar, revpar_before, revpar_change) = trio(current.revpar(), previous.revpar());
    Ok(json!({
        "period": period.json(),
        "previousPeriod": period.previous().json(),
        "currency": currency.as_str(),
        "listingIds": scope.json(),
        "revenue": {"total": revenue, "previous": revenue_before, "change": revenue_change},
        "occupancy": {"rate": occupancy, "previous": occupancy_before, "change": occupancy_change},
        "adr": {"value": adr, "previous": adr_before, "change": adr_change},
        "bookings": {
            "count": current.bookings,
            "previous": previous.bookings,
            "change": change_json(Decimal::from(current.bookings), Decimal::from(previous.bookings)),
        },
        "revpar": {"value": revpar, "previous": revpar_before, "change": revpar_change},
        "nights": {
            "booked": current.booked_nights,
            "available": current.available_nights(),
            "previousBooked": previous.booked_nights,
            "previousAvailable": previous.available_nights(),
            "priced": current.priced_nights,
            "previousPriced": previous.priced_nights,
        },
    }))
}

/// `/dashboard/charts`: `{type, period, startDate, endDate, currency, labels: [..], datasets:
/// [{label: "Revenue" | "Occupancy", data: [..]}, {label: "Previous period", data: [..],
/// startDate, endDate}]}`, one value per label: revenue (rounded) or occupancy per bucket.
pub async fn chart(
    conn: &mut PgConnection,
    scope: &Scope,
    period: Period,
    chart: ChartType,
    g: Granularity,
    currency: &Currency,
) -> Result<Value> {
    let current = Buckets::split(period, g);
    let count = current.len();
    let buckets = Buckets::with_previous(period, Some(g));
    let rows = figures(conn, scope, &buckets, currency, false).await?;
    let mut values = vec![Figures::default(); buckets.len()];
    for row in rows {
        if let Some(slot) = values.get_mut(row.bucket) {
            *slot = row.figures;
        }
    }
    let value = |f: &Figures| match chart {
        ChartType::Revenue => number(f.revenue_rounded()),
        ChartType::Occupancy => number(f.occupancy()),
    };
    let (before, now) = values.split_at(count.min(values.len()));
    let labels: Vec<String> = current.starts().iter().map(|d| label(g, *d)).collect();
    let previous = period.previous();
    Ok(json!({
        "type": chart.as_str(),
        "period": g.as_str(),
        "startDate": period.start.to_string(),
        "endDate": period.end.to_string(),
        "currency": currency.as_str(),
        "labels": labels,
        "datasets": [
            {"label": chart.label(), "data": now.iter().map(&value).collect::<Vec<Value>>()},
            {
                "label": "Previous period",
                "data": before.iter().map(&value).collect::<Vec<Value>>(),
                "startDate": previous.start.to_string(),
                "endDate": previous.end.to_string(),
            },
        ],
    }))
}

/// `/dashboard/occupancy`: `{startDate, endDate, calendar: [{date, occupancy, bookedNights,
/// availableNights}] one per night, byProperty: [{listingId, pmsId, name, occupancy,
/// bookedNights, availableNights}] highest occupancy first, then by name}`. No money: the
/// currency plays no part.
pub async fn occupancy(conn: &mut PgConnection, scope: &Scope, period: Period) -> Result<Value> {
    let currency = Currency::default();
    let nights = Buckets::split(period, Granularity::Daily);
    let calendar: Vec<Value> = figures(conn, scope, &nights, &currency, false)
        .await?
        .into_iter()
        .map(|row| {
            let (date, _) = nights.range(row.bucket);
            json!({
                "date": date.to_string(),
                "occupancy": number(row.figures.occupancy()),
                "bookedNights": row.figures.booked_nights,
                "availableNights": row.figures.available_nights(),
            })
        })
        .collect();
    // Each listing night by night (the heat map of listings × nights): two figures per night,
    // in `calendar`'s order, rather than an object per night (a year of 40 listings stays small).
    let mut nightly: std::collections::HashMap<uuid::Uuid, (Vec<i64>, Vec<i64>)> =
        std::collections::HashMap::new();
    for row in figures(conn, scope, &nights, &currency, true).await? {
        let Some(listing) = row.listing else { continue };
        let (booked, available) = nightly
            .entry(listing.id)
            .or_insert_with(|| (vec![0; nights.len()], vec![0; nights.len()]));
        if let (Some(b), Some(a)) = (booked.get_mut(row.bucket), available.get_mut(row.bucket)) {
            *b = row.figures.booked_nights;
            *a = row.figures.available_nights();
        }
    }
    let mut listings = figures(conn, scope, &Buckets::whole(period), &currency, true).await?;
    // Stable: equal occupancies stay in the statement's order, by name.
    listings.sort_by_key(|row| std::cmp::Reverse(row.figures.occupancy()));
    let by_property: Vec<Value> = listings
        .into_iter()
        .filter_map(|row| {
            let listing = row.listing?;
            let (booked, available) = nightly
                .remove(&listing.id)
                .unwrap_or_else(|| (vec![0; nights.len()], vec![0; nights.len()]));
            Some(json!({
                "listingId": listing.id,
                "pmsId": listing.pms_id,
                "name": listing.name,
                "occupancy": number(row.figures.occupancy()),
                "bookedNights": row.figures.booked_nights,
                "availableNights": row.figures.available_nights(),
                "nightly": {"bookedNights": booked, "availableNights": available},
            }))
        })
        .collect();
    Ok(json!({
        "startDate": period.start.to_string(),
        "endDate": period.end.to_string(),
        "calendar": calendar,
        "byProperty": by_property,
    }))
}
