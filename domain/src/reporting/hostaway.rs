//! The mapping from Hostaway's API v1 records to ours: pure functions, no I/O. Hostaway's JSON is
//! loose: a number may come as a JSON number or a numeric string, booleans are integers 0/1, and
//! most fields may be missing or null. A record maps unless what identifies it is unusable (no
//! id, no stay dates, an amount that is not a number): those are refused with the reason, and the
//! sync skips and counts them rather than storing a guess.
//!
//! Listing: `pmsId` = `id`, `name`, `status` ACTIVE (INACTIVE when `specialStatus` is `archived`
//! or `isArchived` is 1), `bedrooms` = `bedroomsNumber`, `location` = "city, country",
//! `currency` = `currencyCode`, `internalName` = `internalListingName` (matched against villa
//! codes). Reservation: see [`map_reservation`], [`channel_of`] and [`status_of`].

use std::str::FromStr;

use chrono::{Datelike, NaiveDate};
use rust_decimal::{Decimal, RoundingStrategy};
use serde_json::Value;

/// A listing as stored (`pms_listings`).
#[derive(Debug, Clone, PartialEq)]
pub struct ListingRecord {
    pub pms_id: i64,
    pub name: String,
    /// `ACTIVE` or `INACTIVE` ([`super::LISTING_STATUSES`]).
    pub status: &'static str,
    pub bedrooms: Option<i32>,
    pub location: Option<String>,
    pub currency: Option<String>,
    pub internal_name: Option<String>,
    /// The PMS record as received.
    pub raw: Value,
}

/// A reservation as stored (`pms_reservations`). Amounts are rounded to cents.
#[derive(Debug, Clone, PartialEq)]
pub struct ReservationRecord {
    pub pms_id: i64,
    pub listing_pms_id: Option<i64>,
    pub guest_name: Option<String>,
    pub check_in: NaiveDate,
    pub check_out: NaiveDate,
    pub nights: i32,
    /// One of [`super::CHANNELS`] ([`channel_of`]).
    pub channel: &'static str,
    pub channel_id: Option<i64>,
    pub channel_name: Option<String>,
    pub total_amount: Decimal,
    /// total − tax − channel commission − Hostaway commission.
    pub net_amount: Decimal,
    pub tax_amount: Decimal,
    pub channel_commission: Decimal,
    pub hostaway_commission: Decimal,
    pub currency: Option<String>,
    /// One of [`super::RESERVATION_STATUSES`] ([`status_of`]).
    pub status: &'static str,
    /// Hostaway's own status (`new`, `inquiryPreapproved`, ...).
    pub pms_status: Option<String>,
    /// The PMS record as received.
    pub raw: Value,
}

/// Maps a Hostaway listing. `Err` says why the record is unusable (no id).
pub fn map_listing(raw: Value) -> Result<ListingRecord, String> {
    let pms_id = record_id(&raw, &["id"])?;
    let name = text(&raw, "name")
        .or_else(|| text(&raw, "externalListingName"))
        .or_else(|| text(&raw, "internalListingName"))
        .unwrap_or_else(|| format!("Listing {pms_id}"));
    let archived = text(&raw, "specialStatus").is_some_and(|s| s.eq_ignore_ascii_case("archived"))
        || flag(raw.get("isArchived")) == Some(true);
    let bedrooms = integer(raw.get("bedroomsNumber"))
        .ok()
        .flatten()
        .and_then(|n| i32::try_from(n).ok())
        .filter(|n| *n >= 0);
    let city = text(&raw, "city");
    let country = text(&raw, "country").or_else(|| text(&raw, "countryCode"));
    let location = match (city, country) {
        (Some(city), Some(country)) => Some(format!("{city}, {country}")),
        (city, country) => city.or(country),
    };
    Ok(ListingRecord {
        pms_id,
        name,
        status: if archived { "INACTIVE" } else { "ACTIVE" },
        bedrooms,
        location,
        currency: text(&raw, "currencyCode").map(|c| c.to_uppercase()),
        internal_name: text(&raw, "internalListingName"),
        raw,
    })
}

/// Maps a Hostaway reservation: `listingMapId` is the listing, `arrivalDate`/`departureDate` the
/// stay, `nights` as given (else the days between the dates), `channel` from `channelId`
/// ([`channel_of`], `channelName` kept), `totalAmount` = `totalPrice`, `netAmount` = `totalPrice`
/// less `taxAmount`, `channelCommissionAmount` and `hostawayCommissionAmount` (a missing amount
/// counts as 0), `status` from Hostaway's ([`status_of`]). `Err` says why the record is unusable:
/// no id, no usable stay dates, or an amount that is not a number.
pub fn map_reservation(raw: Value) -> Result<ReservationRecord, String> {
    let pms_id = record_id(&raw, &["id", "hostawayReservationId"])?;
    let check_in = date(&raw, "arrivalDate")?;
    let check_out = date(&raw, "departureDate")?;
    if check_out < check_in {
        return Err(format!(
            "departureDate {check_out} is before arrivalDate {check_in}"
        ));
    }
    let span = i32::try_from((check_out - check_in).num_days())
        .map_err(|_| "the stay is too long".to_owned())?;
    let nights = integer(raw.get("nights"))
        .ok()
        .flatten()
        .and_then(|n| i32::try_from(n).ok())
        .filter(|n| *n >= 0)
        .unwrap_or(span);
    let channel_id = integer(raw.get("channelId")).ok().flatten();
    let total_amount = money(&raw, "totalPrice")?;
    let tax_amount = money(&raw, "taxAmount")?;
    let channel_commission = money(&raw, "channelCommissionAmount")?;
    let hostaway_commission = money(&raw, "hostawayCommissionAmount")?;
    let net_amount = total_amount - tax_amount - channel_commission - hostaway_commission;
    if net_amount.abs() >= money_limit() {
        return Err("the net amount is too large".to_owned());
    }
    let guest_name = text(&raw, "guestName").or_else(|| {
        let parts: Vec<String> = ["guestFirstName", "guestLastName"]
            .iter()
            .filter_map(|key| text(&raw, key))
            .collect();
        (!parts.is_empty()).then(|| parts.join(" "))
    });
    let pms_status = text(&raw, "status");
    Ok(ReservationRecord {
        pms_id,
        listing_pms_id: integer(raw.get("listingMapId")).ok().flatten(),
        guest_name,
        check_in,
        check_out,
        nights,
        channel: channel_of(channel_id),
        channel_id,
        channel_name: text(&raw, "channelName"),
        total_amount,
        net_amount,
        tax_amount,
        channel_commission,
        hostaway_commission,
        // Upper-cased: the figures compare it with the answer's currency (`figures`), by index.
        currency: text(&raw, "currency").map(|c| c.to_uppercase()),
        status: status_of(pms_status.as_deref().unwrap_or_default()),
        pms_status,
        raw,
    })
}

/// Our channel of a Hostaway `channelId`: 2018 and 2001 AIRBNB, 2005 BOOKING_COM, 2002 and 2010
/// VRBO, 2007 EXPEDIA, 2000 and 2013 DIRECT, 2022 GOOGLE, anything else (or none) OTHER.
pub fn channel_of(channel_id: Option<i64>) -> &'static str {
    match channel_id {
        Some(2018 | 2001) => "AIRBNB",
        Some(2005) => "BOOKING_COM",
        Some(2002 | 2010) => "VRBO",
        Some(2007) => "EXPEDIA",
        Some(2000 | 2013) => "DIRECT",
        Some(2022) => "GOOGLE",
        _ => "OTHER",
    }
}

/// Our status of a Hostaway reservation status (any letter case): `new` and `modified` →
/// CONFIRMED; `pending`, `awaitingPayment`, `awaitingGuestVerification` → PENDING; `cancelled` →
/// CANCELLED; `ownerStay` → OWNER_STAY; every `inquiry*` → INQUIRY; `declined` → DECLINED;
/// `expired` → EXPIRED; anything else UNKNOWN.
pub fn status_of(pms_status: &str) -> &'static str {
    let status = pms_status.trim().to_ascii_lowercase();
    match status.as_str() {
        "new" | "modified" => "CONFIRMED",
        "pending" | "awaitingpayment" | "awaitingguestverification" => "PENDING",
        "cancelled" => "CANCELLED",
        "ownerstay" => "OWNER_STAY",
        "declined" => "DECLINED",
        "expired" => "EXPIRED",
        s if s.starts_with("inquiry") => "INQUIRY",
        _ => "UNKNOWN",
    }
}

/// A boolean as Hostaway writes it: 0/1 (number or string), or a JSON boolean. `None` when
/// missing, null or anything else.
pub fn flag(value: Option<&Value>) -> Option<bool> {
    match value? {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => match n.as_i64() {
            Some(0) => Some(false),
            Some(1) => Some(true),
            _ => None,
        },
        Value::String(s) => match s.trim() {
            "0" | "false" => Some(false),
            "1" | "true" => Some(true),
            _ => None,
        },
        _ => None,
    }
}

/// The record's id: the first of `keys` present, a positive whole number.
fn record_id(raw: &Value, keys: &[&str]) -> Result<i64, String> {
    for key in keys {
        match integer(raw.get(*key)) {
            Ok(Some(id)) if id > 0 => return Ok(id),
            Ok(None) => continue,
            _ => return Err(format!("`{key}` is not a positive whole number")),
        }
    }
    Err(format!("no `{}`", keys.first().copied().unwrap_or("id")))
}

/// A whole number given as a JSON number (`3`, `3.0`) or a numeric string (`"3"`). `Ok(None)`
/// when missing, null or an empty string; `Err` for anything else.
fn integer(value: Option<&Value>) -> Result<Option<i64>, ()> {
    let Some(value) = value else {
        return Ok(None);
    };
    match value {
        Value::Null => Ok(None),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Ok(Some(i))
            } else {
                whole(n.to_string().as_str()).map(Some)
            }
        }
        Value::String(s) if s.trim().is_empty() => Ok(None),
        Value::String(s) => whole(s.trim()).map(Some),
        _ => Err(()),
    }
}

/// `"3"` or `"3.0"` as 3; a fraction or anything else is refused.
fn whole(s: &str) -> Result<i64, ()> {
    if let Ok(i) = s.parse::<i64>() {
        return Ok(i);
    }
    let d = decimal(s).ok_or(())?;
    if d.fract().is_zero() {
        i64::try_from(d).map_err(|_| ())
    } else {
        Err(())
    }
}

/// A decimal number, also in scientific notation (`1.5e3`, as a JSON float may be written).
fn decimal(s: &str) -> Option<Decimal> {
    let (mantissa, exponent) = match s.find(['e', 'E']) {
        Some(at) => (&s[..at], s[at + 1..].parse::<i32>().ok()?),
        None => (s, 0),
    };
    let mut d = Decimal::from_str(mantissa).ok()?;
    if exponent < -40 {
        return Some(Decimal::ZERO);
    }
    if exponent > 40 {
        return None;
    }
    for _ in 0..exponent.unsigned_abs() {
        d = if exponent > 0 {
            d.checked_mul(Decimal::TEN)?
        } else {
            d.checked_div(Decimal::TEN)?
        };
    }
    Some(d)
}

/// What NUMERIC(14, 2) holds: below 10^12.
fn money_limit() -> Decimal {
    Decimal::new(1_000_000_000_000, 0)
}

/// An amount (JSON number or numeric string) rounded to cents; 0 when missing, null or empty.
fn money(raw: &Value, key: &str) -> Result<Decimal, String> {
    let parsed = match raw.get(key) {
        None | Some(Value::Null) => return Ok(Decimal::ZERO),
        Some(Value::String(s)) if s.trim().is_empty() => return Ok(Decimal::ZERO),
        Some(Value::String(s)) => decimal(s.trim()),
        Some(Value::Number(n)) => decimal(&n.to_string()),
        Some(_) => None,
    };
    let amount = parsed
        .ok_or_else(|| format!("`{key}` is not a number"))?
        .round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero);
    if amount.abs() >= money_limit() {
        return Err(format!("`{key}` is too large"));
    }
    Ok(amount)
}

/// A date `YYYY-MM-DD` (a time after it, as in `2024-03-01 14:00:00`, is ignored), of a year
/// from 1900 to 2200: anything else is a broken record, not a stay.
fn date(raw: &Value, key: &str) -> Result<NaiveDate, String> {
    let Some(s) = raw.get(key).and_then(Value::as_str).map(str::trim) else {
        return Err(format!("no `{key}`"));
    };
    s.get(..10)
        .and_then(|day| NaiveDate::parse_from_str(day, "%Y-%m-%d").ok())
        .filter(|d| (1900..=2200).contains(&d.year()))
        .ok_or_else(|| format!("`{key}` is not a date (YYYY-MM-DD)"))
}

/// A text field, trimmed; numbers are written out. `None` when missing, null or blank.
fn text(raw: &Value, key: &str) -> Option<String> {
    match raw.get(key)? {
        Value::String(s) => {
            let s = s.trim();
            (!s.is_empty()).then(|| s.to_owned())
        }
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn dec(s: &str) -> Decimal {
        Decimal::from_str(s).unwrap()
    }

    fn reservation(extra: Value) -> Value {
        let mut base = json!({
            "id": 13, "listingMapId": 40160, "channelId": 2001, "channelName": "airbnb",
            "guestName": "Andrew Peterson", "arrivalDate": "2024-07-15", "departureDate": "2024-07-18",
            "nights": 3, "totalPrice": 267, "currency": "USD", "status": "new"
        });
        if let (Some(base), Value::Object(extra)) = (base.as_object_mut(), extra) {
            base.extend(extra);
        }
        base
    }

    #[test]
    fn every_channel_of_the_table() {
        let table = [
            (2018, "AIRBNB"),
            (2001, "AIRBNB"),
            (2005, "BOOKING_COM"),
            (2002, "VRBO"),
            (2010, "VRBO"),
            (2007, "EXPEDIA"),
            (2000, "DIRECT"),
            (2013, "DIRECT"),
            (2022, "GOOGLE"),
            (2009, "OTHER"),
            (2015, "OTHER"),
            (2019, "OTHER"),
            (0, "OTHER"),
        ];
        for (id, channel) in table {
            assert_eq!(channel_of(Some(id)), channel, "channel {id}");
            let r = map_reservation(reservation(json!({ "channelId": id }))).unwrap();
            assert_eq!(r.channel, channel, "channel {id}");
            assert_eq!(r.channel_id, Some(id));
        }
        assert_eq!(channel_of(None), "OTHER");
        let r = map_reservation(reservation(json!({ "channelId": "2005" }))).unwrap();
        assert_eq!((r.channel, r.channel_id), ("BOOKING_COM", Some(2005)));
        let r = map_reservation(reservation(json!({ "channelId": null }))).unwrap();
        assert_eq!((r.channel, r.channel_id), ("OTHER", None));
        assert_eq!(r.channel_name.as_deref(), Some("airbnb"));
    }

    #[test]
    fn every_status_of_the_table() {
        let table = [
            ("new", "CONFIRMED"),
            ("modified", "CONFIRMED"),
            ("pending", "PENDING"),
            ("awaitingPayment", "PENDING"),
            ("awaitingGuestVerification", "PENDING"),
            ("cancelled", "CANCELLED"),
            ("ownerStay", "OWNER_STAY"),
            ("inquiry", "INQUIRY"),
            ("inquiryPreapproved", "INQUIRY"),
            ("inquiryDenied", "INQUIRY"),
            ("inquiryTimedout", "INQUIRY"),
            ("inquiryNotPossible", "INQUIRY"),
            ("declined", "DECLINED"),
            ("expired", "EXPIRED"),
            ("unconfirmed", "UNKNOWN"),
            ("unknown", "UNKNOWN"),
            ("", "UNKNOWN"),
        ];
        for (pms, ours) in table {
            assert_eq!(status_of(pms), ours, "status {pms:?}");
        }
        let r = map_reservation(reservation(json!({ "status": "ownerStay" }))).unwrap();
        assert_eq!(r.status, "OWNER_STAY");
        assert_eq!(r.pms_status.as_deref(), Some("ownerStay"));
        let r = map_reservation(reservation(json!({ "status": null }))).unwrap();
        assert_eq!((r.status, r.pms_status), ("UNKNOWN", None));
    }

    #[test]
    fn zero_one_booleans() {
        assert_eq!(flag(Some(&json!(1))), Some(true));
        assert_eq!(flag(Some(&json!(0))), Some(false));
        assert_eq!(flag(Some(&json!("1"))), Some(true));
        assert_eq!(flag(Some(&json!("0"))), Some(false));
        assert_eq!(flag(Some(&json!(true))), Some(true));
        assert_eq!(flag(Some(&json!(2))), None);
        assert_eq!(flag(Some(&Value::Null)), None);
        assert_eq!(flag(None), None);
        let listing = json!({ "id": 1, "name": "A", "isArchived": 1 });
        assert_eq!(map_listing(listing).unwrap().status, "INACTIVE");
        let listing = json!({ "id": 1, "name": "A", "isArchived": 0 });
        assert_eq!(map_listing(listing).unwrap().status, "ACTIVE");
    }

    #[test]
    fn numeric_strings() {
        let r = map_reservation(reservation(json!({
            "id": "77", "listingMapId": "40160", "nights": "3", "totalPrice": "1200.50",
            "taxAmount": "100.25", "channelCommissionAmount": 50.1, "hostawayCommissionAmount": "0"
        })))
        .unwrap();
        assert_eq!(r.pms_id, 77);
        assert_eq!(r.listing_pms_id, Some(40160));
        assert_eq!(r.nights, 3);
        assert_eq!(r.total_amount, dec("1200.50"));
        assert_eq!(r.tax_amount, dec("100.25"));
        assert_eq!(r.channel_commission, dec("50.10"));
        assert_eq!(r.net_amount, dec("1050.15"));
        let l =
            map_listing(json!({ "id": "40160", "name": "Villa", "bedroomsNumber": "4" })).unwrap();
        assert_eq!((l.pms_id, l.bedrooms), (40160, Some(4)));
        let l =
            map_listing(json!({ "id": 40160.0, "name": "Villa", "bedroomsNumber": 4.0 })).unwrap();
        assert_eq!((l.pms_id, l.bedrooms), (40160, Some(4)));
        // Amounts are rounded to cents, half away from zero.
        let r = map_reservation(reservation(json!({ "totalPrice": 10.005 }))).unwrap();
        assert_eq!(r.total_amount, dec("10.01"));
        let r = map_reservation(reservation(
            json!({ "totalPrice": "1.5e3", "taxAmount": 2.5e1 }),
        ))
        .unwrap();
        assert_eq!((r.total_amount, r.tax_amount), (dec("1500"), dec("25")));
        assert!(map_reservation(reservation(json!({ "totalPrice": "ten" }))).is_err());
        assert!(map_reservation(reservation(json!({ "totalPrice": 1e13 }))).is_err());
    }

    #[test]
    fn missing_amounts_count_as_zero() {
        let r = map_reservation(reservation(json!({
            "taxAmount": null, "channelCommissionAmount": null
        })))
        .unwrap();
        assert_eq!(r.total_amount, dec("267"));
        assert_eq!(r.tax_amount, Decimal::ZERO);
        assert_eq!(r.channel_commission, Decimal::ZERO);
        assert_eq!(r.hostaway_commission, Decimal::ZERO);
        assert_eq!(r.net_amount, dec("267"));
        let mut raw = reservation(json!({}));
        if let Some(o) = raw.as_object_mut() {
            o.remove("totalPrice");
        }
        let r = map_reservation(raw).unwrap();
        assert_eq!(
            (r.total_amount, r.net_amount),
            (Decimal::ZERO, Decimal::ZERO)
        );
    }

    #[test]
    fn location_is_city_and_country() {
        let location = |v: Value| map_listing(v).unwrap().location;
        assert_eq!(
            location(json!({ "id": 1, "city": "Canggu", "country": "Indonesia" })).as_deref(),
            Some("Canggu, Indonesia")
        );
        assert_eq!(
            location(json!({ "id": 1, "city": "Canggu", "country": null })).as_deref(),
            Some("Canggu")
        );
        assert_eq!(
            location(json!({ "id": 1, "city": " ", "country": "Indonesia" })).as_deref(),
            Some("Indonesia")
        );
        assert_eq!(
            location(json!({ "id": 1, "city": "Ubud", "countryCode": "ID" })).as_deref(),
            Some("Ubud, ID")
        );
        assert_eq!(location(json!({ "id": 1 })), None);
    }

    #[test]
    fn listing_fields() {
        let l = map_listing(json!({
            "id": 40160, "name": "Villa Sunset", "internalListingName": "VS-01",
            "bedroomsNumber": 3, "currencyCode": "IDR", "specialStatus": null
        }))
        .unwrap();
        assert_eq!(l.pms_id, 40160);
        assert_eq!(l.name, "Villa Sunset");
        assert_eq!(l.status, "ACTIVE");
        assert_eq!(l.bedrooms, Some(3));
        assert_eq!(l.currency.as_deref(), Some("IDR"));
        assert_eq!(l.internal_name.as_deref(), Some("VS-01"));
        assert_eq!(l.raw["id"], json!(40160));
        let l = map_listing(json!({ "id": 7, "internalListingName": "VS-02" })).unwrap();
        assert_eq!(l.name, "VS-02");
        let l = map_listing(json!({ "id": 7 })).unwrap();
        assert_eq!(l.name, "Listing 7");
        assert!(map_listing(json!({ "name": "no id" })).is_err());
        assert!(map_listing(json!({ "id": "x" })).is_err());
        assert!(map_listing(json!({ "id": 0 })).is_err());
    }

    #[test]
    fn archived_is_inactive() {
        let l = map_listing(json!({ "id": 1, "name": "A", "specialStatus": "archived" })).unwrap();
        assert_eq!(l.status, "INACTIVE");
        let l = map_listing(json!({ "id": 1, "name": "A", "specialStatus": "Archived" })).unwrap();
        assert_eq!(l.status, "INACTIVE");
        let l = map_listing(json!({ "id": 1, "name": "A", "specialStatus": null })).unwrap();
        assert_eq!(l.status, "ACTIVE");
    }

    #[test]
    fn nights_fall_back_to_the_dates() {
        let r = map_reservation(reservation(json!({ "nights": null }))).unwrap();
        assert_eq!(r.nights, 3);
        let mut raw = reservation(json!({}));
        if let Some(o) = raw.as_object_mut() {
            o.remove("nights");
        }
        assert_eq!(map_reservation(raw).unwrap().nights, 3);
        let r = map_reservation(reservation(json!({ "nights": "x" }))).unwrap();
        assert_eq!(r.nights, 3);
        let r = map_reservation(reservation(json!({ "nights": 5 }))).unwrap();
        assert_eq!(r.nights, 5);
    }

    #[test]
    fn reservation_fields() {
        let r = map_reservation(reservation(json!({}))).unwrap();
        assert_eq!(r.pms_id, 13);
        assert_eq!(r.listing_pms_id, Some(40160));
        assert_eq!(r.guest_name.as_deref(), Some("Andrew Peterson"));
        assert_eq!(r.check_in, NaiveDate::from_ymd_opt(2024, 7, 15).unwrap());
        assert_eq!(r.check_out, NaiveDate::from_ymd_opt(2024, 7, 18).unwrap());
        assert_eq!(r.currency.as_deref(), Some("USD"));
        assert_eq!(r.status, "CONFIRMED");
        let r = map_reservation(reservation(json!({
            "guestName": null, "guestFirstName": "Made", "guestLastName": "Wirawan",
            "arrivalDate": "2024-07-15 15:00:00"
        })))
        .unwrap();
        assert_eq!(r.guest_name.as_deref(), Some("Made Wirawan"));
        assert_eq!(r.check_in, NaiveDate::from_ymd_opt(2024, 7, 15).unwrap());
        let r = map_reservation(reservation(json!({ "listingMapId": null }))).unwrap();
        assert_eq!(r.listing_pms_id, None);
        assert!(map_reservation(reservation(json!({ "id": null }))).is_err());
        assert!(map_reservation(reservation(json!({ "arrivalDate": null }))).is_err());
        assert!(map_reservation(reservation(json!({ "departureDate": "2024-13-01" }))).is_err());
        assert!(map_reservation(reservation(json!({ "departureDate": "2024-07-01" }))).is_err());
        assert!(map_reservation(reservation(json!({ "arrivalDate": "0001-07-01" }))).is_err());
    }
}
