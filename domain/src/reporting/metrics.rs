//! A listing's `metrics`, as the listing routes show them: the figures of [`super::figures`]
//! (where every formula is) of one listing over a period, in one currency. A page of listings
//! gets them from one statement over the page's listings, merged into the page's JSON by id.

use std::collections::HashMap;

use serde_json::Value;
use sqlx::PgConnection;
use uuid::Uuid;

use super::figures::{self, Buckets, Currency, Figures, Period, Scope, number};
use crate::pagination::JsonPage;
use crate::{Error, Result};

/// `{revenue, occupancy, bookings, adr, revpar, bookedNights, availableNights, currency,
/// startDate, endDate}`.
pub fn json(figures: &Figures, period: Period, currency: &Currency) -> Value {
    serde_json::json!({
        "revenue": number(figures.revenue_rounded()),
        "occupancy": number(figures.occupancy()),
        "bookings": figures.bookings,
        "adr": number(figures.adr()),
        "revpar": number(figures.revpar()),
        "bookedNights": figures.booked_nights,
        "availableNights": figures.available_nights(),
        "currency": currency.as_str(),
        "startDate": period.start.to_string(),
        "endDate": period.end.to_string(),
    })
}

/// The metrics of each listing of `ids` over the period (no id: nothing computed).
pub async fn of_listings(
    conn: &mut PgConnection,
    ids: &[Uuid],
    period: Period,
    currency: &Currency,
) -> Result<HashMap<Uuid, Value>> {
    if ids.is_empty() {
        // An empty scope would be every ACTIVE listing.
        return Ok(HashMap::new());
    }
    let scope = Scope {
        listing_ids: ids.to_vec(),
    };
    let rows = figures::figures(conn, &scope, &Buckets::whole(period), currency, true).await?;
    Ok(rows
        .into_iter()
        .filter_map(|row| {
            let listing = row.listing?;
            Some((listing.id, json(&row.figures, period, currency)))
        })
        .collect())
}

/// The listing's `id` member, as its JSON holds it.
fn id_of(item: &Value) -> Option<Uuid> {
    item.get("id")?.as_str()?.parse().ok()
}

/// Sets `metrics` of one listing (a JSON object with its `id`).
pub async fn add_to_listing(
    conn: &mut PgConnection,
    mut listing: Value,
    period: Period,
    currency: &Currency,
) -> Result<Value> {
    let ids: Vec<Uuid> = id_of(&listing).into_iter().collect();
    let mut metrics = of_listings(conn, &ids, period, currency).await?;
    if let (Some(id), Some(object)) = (ids.first(), listing.as_object_mut()) {
        let value = metrics
            .remove(id)
            .unwrap_or_else(|| json(&Figures::default(), period, currency));
        object.insert("metrics".to_owned(), value);
    }
    Ok(listing)
}

/// Sets `metrics` of every listing of a page (its `data`, a JSON array of listing objects).
pub async fn add_to_page(
    conn: &mut PgConnection,
    mut page: JsonPage,
    period: Period,
    currency: &Currency,
) -> Result<JsonPage> {
    let mut items: Vec<Value> = serde_json::from_str(&page.data)
        .map_err(|e| Error::Internal(anyhow::anyhow!("a listing page is not a JSON array: {e}")))?;
    let ids: Vec<Uuid> = items.iter().filter_map(id_of).collect();
    let mut metrics = of_listings(conn, &ids, period, currency).await?;
    for item in &mut items {
        let Some(id) = id_of(item) else { continue };
        let value = metrics
            .remove(&id)
            .unwrap_or_else(|| json(&Figures::default(), period, currency));
        if let Some(object) = item.as_object_mut() {
            object.insert("metrics".to_owned(), value);
        }
    }
    page.data = serde_json::to_string(&items)
        .map_err(|e| Error::Internal(anyhow::anyhow!("writing a listing page: {e}")))?;
    Ok(page)
}

#[cfg(test)]
mod tests {
    use rust_decimal::Decimal;
    use serde_json::json;

    use super::*;

    #[test]
    fn metrics_name_their_period_and_currency() {
        let f = Figures {
            revenue: Decimal::from(3100),
            booked_nights: 10,
            priced_nights: 10,
            owner_nights: 1,
            nights: 31,
            bookings: 2,
        };
        let period = Period {
            start: "2026-03-01".parse().unwrap(),
            end: "2026-03-31".parse().unwrap(),
        };
        assert_eq!(
            json(&f, period, &Currency::default()),
            json!({
                "revenue": 3100.0, "occupancy": 33.33, "bookings": 2, "adr": 310.0, "revpar": 103.33,
                "bookedNights": 10, "availableNights": 30, "currency": "THB",
                "startDate": "2026-03-01", "endDate": "2026-03-31"
            })
        );
    }

    #[test]
    fn a_listing_is_known_by_its_id_member() {
        let id = Uuid::now_v7();
        assert_eq!(id_of(&json!({"id": id, "name": "Villa"})), Some(id));
        assert_eq!(id_of(&json!({"name": "Villa"})), None);
        assert_eq!(id_of(&json!({"id": 7})), None);
    }
}
