//! A listing's `metrics`, as the listing routes show them: the figures of [`super::figures`]
//! (where every formula is) of one listing over a period, in one currency: the one asked for,
//! else the listing's own ([`MetricsCurrency`]), so that a USD listing shows its USD revenue. A
//! page of listings gets them from one statement per currency among the page's listings (one
//! for a page asked in one currency), merged into the page's JSON by id.

use std::collections::HashMap;

use serde_json::Value;
use sqlx::PgConnection;
use uuid::Uuid;

use super::figures::{self, Buckets, Currency, Figures, Period, Scope, number};
use crate::pagination::JsonPage;
use crate::{Error, Result};

/// The currency of listings' `metrics`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MetricsCurrency {
    /// The request's `currency`: every listing's money figures in it.
    Asked(Currency),
    /// Each listing's own currency (its `currency`); `fallback` (`REPORTING_CURRENCY`) for a
    /// listing without one.
    ListingsOwn { fallback: Currency },
}

/// As a cache key names it: the code asked for, or `own` with the fallback.
impl std::fmt::Display for MetricsCurrency {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Asked(currency) => write!(f, "{currency}"),
            Self::ListingsOwn { fallback } => write!(f, "own:{fallback}"),
        }
    }
}

impl MetricsCurrency {
    /// The currency of the metrics of a listing whose own currency is `own`, as stored (none, or
    /// not a 3-letter code: the fallback).
    pub fn for_listing(&self, own: Option<&str>) -> Currency {
        match self {
            Self::Asked(currency) => currency.clone(),
            Self::ListingsOwn { fallback } => own
                .and_then(Currency::new_setting)
                .unwrap_or_else(|| fallback.clone()),
        }
    }

    /// The currency of the metrics of `listing`, a listing's JSON with its `currency` member.
    fn of(&self, listing: &Value) -> Currency {
        self.for_listing(listing.get("currency").and_then(Value::as_str))
    }
}

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

/// The metrics of each listing of `listings` over the period, each in the currency beside it:
/// one statement per currency (no listing: nothing computed).
pub async fn of_listings(
    conn: &mut PgConnection,
    listings: &[(Uuid, Currency)],
    period: Period,
) -> Result<HashMap<Uuid, Value>> {
    // The listings of each currency, the currencies in their first listing's order.
    let mut groups: Vec<(&Currency, Vec<Uuid>)> = Vec::new();
    for (id, currency) in listings {
        match groups.iter_mut().find(|(c, _)| *c == currency) {
            Some((_, ids)) => ids.push(*id),
            None => groups.push((currency, vec![*id])),
        }
    }
    let mut metrics = HashMap::with_capacity(listings.len());
    // Never an empty scope: it would be every ACTIVE listing.
    for (currency, ids) in groups {
        let scope = Scope { listing_ids: ids };
        let rows = figures::figures(conn, &scope, &Buckets::whole(period), currency, true).await?;
        metrics.extend(rows.into_iter().filter_map(|row| {
            let listing = row.listing?;
            Some((listing.id, json(&row.figures, period, currency)))
        }));
    }
    Ok(metrics)
}

/// The listing's `id` member, as its JSON holds it.
fn id_of(item: &Value) -> Option<Uuid> {
    item.get("id")?.as_str()?.parse().ok()
}

/// Sets `metrics` of one listing (a JSON object with its `id` and `currency`).
pub async fn add_to_listing(
    conn: &mut PgConnection,
    mut listing: Value,
    period: Period,
    currency: &MetricsCurrency,
) -> Result<Value> {
    let currency = currency.of(&listing);
    let Some(id) = id_of(&listing) else {
        return Ok(listing);
    };
    let mut metrics = of_listings(conn, &[(id, currency.clone())], period).await?;
    if let Some(object) = listing.as_object_mut() {
        let value = metrics
            .remove(&id)
            .unwrap_or_else(|| json(&Figures::default(), period, &currency));
        object.insert("metrics".to_owned(), value);
    }
    Ok(listing)
}

/// Sets `metrics` of every listing of a page (its `data`, a JSON array of listing objects with
/// their `id` and `currency`).
pub async fn add_to_page(
    conn: &mut PgConnection,
    mut page: JsonPage,
    period: Period,
    currency: &MetricsCurrency,
) -> Result<JsonPage> {
    let mut items: Vec<Value> = serde_json::from_str(&page.data)
        .map_err(|e| Error::Internal(anyhow::anyhow!("a listing page is not a JSON array: {e}")))?;
    let listings: Vec<(Uuid, Currency)> = items
        .iter()
        .filter_map(|item| Some((id_of(item)?, currency.of(item))))
        .collect();
    let mut metrics = of_listings(conn, &listings, period).await?;
    for item in &mut items {
        let Some(id) = id_of(item) else { continue };
        let value = metrics
            .remove(&id)
            .unwrap_or_else(|| json(&Figures::default(), period, &currency.of(item)));
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
    fn metrics_are_in_the_listings_own_currency_unless_one_is_asked() {
        let thb = Currency::default();
        let usd = Currency::new_setting("USD").unwrap();
        let own = MetricsCurrency::ListingsOwn {
            fallback: thb.clone(),
        };
        assert_eq!(own.of(&json!({"currency": "USD"})), usd);
        assert_eq!(own.for_listing(Some("idr")).as_str(), "IDR");
        // None, or not a code: REPORTING_CURRENCY.
        assert_eq!(own.of(&json!({"currency": null})), thb);
        assert_eq!(own.for_listing(Some("dollars")), thb);
        assert_eq!(own.for_listing(None), thb);
        let asked = MetricsCurrency::Asked(thb.clone());
        assert_eq!(asked.of(&json!({"currency": "USD"})), thb);
    }

    #[test]
    fn a_listing_is_known_by_its_id_member() {
        let id = Uuid::now_v7();
        assert_eq!(id_of(&json!({"id": id, "name": "Villa"})), Some(id));
        assert_eq!(id_of(&json!({"name": "Villa"})), None);
        assert_eq!(id_of(&json!({"id": 7})), None);
    }
}
