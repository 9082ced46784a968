//! Monthly owner statements (`GET /reporting/owner-statements`, and the `ownerStatement` export):
//! per villa of the owner, the month's stays with their money, the owner-billed costs of the work
//! orders completed that month, the management fee and the balance owed to the owner, in each
//! currency. [`DEFINITIONS`] states how each figure is made; every total is the sum of its lines.

use std::collections::BTreeMap;

use chrono::{Datelike, Months, NaiveDate};
use rust_decimal::Decimal;
use serde_json::{Value, json};
use sqlx::PgConnection;
use uuid::Uuid;

use super::figures::{number, round2};
use crate::{Error, Result};

/// How the statement's figures are made, for the OpenAPI description, the answer and the
/// export's Definitions sheet.
pub const DEFINITIONS: &str = "Villas: those the owner owns (management's ownerId). Stays: the \
CONFIRMED reservations of the listings linked to those villas that have nights in the month (a \
stay occupies the nights from checkIn to the day before checkOut), as the dashboard counts them. \
Nights: the stay's nights inside the month. Gross: the reservation's totalAmount × nights / the \
stay's nights (its total spread evenly over its nights, the dashboard's revenue), in cents that \
add up, per currency, to the exact sum rounded once (half away from zero), as the dashboard's \
revenue of the owner's listings: each share is cut to the cent and the cents left go to the \
shares that lost the most. Channel commission: the reservation's channelCommission spread the \
same way. Net: gross − channel commission. Owner costs: the cost lines billed to the owner \
(billTo OWNER) that are actual costs (estimate false) of the villa's work orders COMPLETED in the \
month (the company's days, BUSINESS_TIME_ZONE). Management fee: the owner's managementFeePercent \
(0 when none is set) of a villa's net in a currency, rounded to 2 decimals (so the owner's fee is the sum of the villas', \
and a negative net gives a negative fee, a credit). Balance owed to the \
owner: net − management fee − owner costs. Money is never converted: each currency has its own \
totals. A villa's totals are the sums of its lines; the owner's totals the sums of the villas'. A \
stay without a currency is listed with its nights and left out of money.";

/// A month: its first day and the first day of the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Month {
    pub first: NaiveDate,
    pub next: NaiveDate,
}

impl Month {
    /// `YYYY-MM`, a month from 1900-01 to 9999-11 (its next month must be a date too).
    pub fn parse(raw: &str) -> Option<Month> {
        let raw = raw.trim();
        let (year, month) = raw.split_once('-')?;
        let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if year.len() != 4 || month.len() != 2 || !digits(year) || !digits(month) {
            return None;
        }
        let first = NaiveDate::from_ymd_opt(year.parse().ok()?, month.parse().ok()?, 1)?;
        Month::of(first).filter(|m| m.first.year() >= 1900)
    }

    /// The month `day` is in.
    pub fn of(day: NaiveDate) -> Option<Month> {
        let first = day.with_day(1)?;
        Some(Month {
            first,
            next: first.checked_add_months(Months::new(1))?,
        })
    }

    /// The month before `day`'s: a statement's default, the last whole month.
    pub fn before(day: NaiveDate) -> Option<Month> {
        Month::of(day.with_day(1)?.pred_opt()?)
    }

    pub fn last_day(&self) -> NaiveDate {
        self.next.pred_opt().unwrap_or(self.first)
    }

    pub fn label(&self) -> String {
        self.first.format("%Y-%m").to_string()
    }
}

/// One stay of a statement.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct StayLine {
    pub villa_id: Uuid,
    pub reservation_id: Uuid,
    pub pms_id: i64,
    pub listing_name: String,
    pub guest_name: Option<String>,
    pub channel: String,
    pub check_in: NaiveDate,
    pub check_out: NaiveDate,
    pub currency: Option<String>,
    /// Inside the month.
    pub nights: i32,
    pub stay_nights: i32,
    pub total_amount: Decimal,
    pub channel_commission: Decimal,
}

impl StayLine {
    /// `amount` spread over the stay's nights: the month's share, exact.
    fn share(&self, amount: Decimal) -> Decimal {
        if self.nights == self.stay_nights || self.stay_nights <= 0 {
            return amount;
        }
        amount * Decimal::from(self.nights) / Decimal::from(self.stay_nights)
    }
}

/// A stay's money in the statement, to the cent ([`allocate`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StayMoney {
    pub gross: Decimal,
    pub commission: Decimal,
}

impl StayMoney {
    pub fn net(&self) -> Decimal {
        self.gross - self.commission
    }
}

/// Rounds `exact` amounts to cents so that they add up to their sum rounded once (half away from
/// zero), as the dashboard rounds its revenue: each is cut down to the cent, and the cents left
/// go one each to the amounts that lost the most (the earliest first on a tie).
pub fn allocate(exact: &[Decimal]) -> Vec<Decimal> {
    let cent = Decimal::new(1, 2);
    let floors: Vec<Decimal> = exact.iter().map(|x| (x / cent).floor() * cent).collect();
    let target = round2(exact.iter().copied().sum());
    let left = ((target - floors.iter().copied().sum::<Decimal>()) / cent)
        .round()
        .to_string()
        .parse::<usize>()
        .unwrap_or(0)
        .min(exact.len());
    let mut order: Vec<usize> = (0..exact.len()).collect();
    order.sort_by(|&a, &b| {
        (exact[b] - floors[b])
            .cmp(&(exact[a] - floors[a]))
            .then(a.cmp(&b))
    });
    let mut out = floors;
    for &i in order.iter().take(left) {
        out[i] += cent;
    }
    out
}

/// One owner-billed cost of a statement.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct CostLine {
    pub villa_id: Uuid,
    pub work_order_id: Uuid,
    pub title: String,
    pub completed_on: NaiveDate,
    pub kind: String,
    pub description: String,
    pub amount: Decimal,
    pub currency: String,
}

/// The sums of one currency (a villa's or the owner's).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Totals {
    pub nights: i64,
    pub gross: Decimal,
    pub commission: Decimal,
    pub net: Decimal,
    pub management_fee: Decimal,
    pub costs: Decimal,
}

impl Totals {
    pub fn balance(&self) -> Decimal {
        self.net - self.management_fee - self.costs
    }

    fn add(&mut self, other: &Totals) {
        self.nights += other.nights;
        self.gross += other.gross;
        self.commission += other.commission;
        self.net += other.net;
        self.management_fee += other.management_fee;
        self.costs += other.costs;
    }

    fn json(&self, currency: &str) -> Value {
        json!({
            "currency": currency,
            "nights": self.nights,
            "gross": number(self.gross),
            "channelCommission": number(self.commission),
            "net": number(self.net),
            "managementFee": number(self.management_fee),
            "ownerCosts": number(self.costs),
            "balance": number(self.balance()),
        })
    }
}

/// One villa of a statement.
#[derive(Debug, Clone)]
pub struct VillaStatement {
    pub id: Uuid,
    pub name: String,
    /// Each stay with its money (zero for a stay without a currency).
    pub stays: Vec<(StayLine, StayMoney)>,
    pub costs: Vec<CostLine>,
    /// Per currency.
    pub totals: BTreeMap<String, Totals>,
}

/// An owner's statement of a month.
#[derive(Debug, Clone)]
pub struct Statement {
    pub owner_id: Uuid,
    pub owner_name: String,
    pub month: Month,
    pub fee_percent: Option<Decimal>,
    pub villas: Vec<VillaStatement>,
    /// Per currency: the sums of the villas'.
    pub totals: BTreeMap<String, Totals>,
}

/// The statement of `owner` for `month` (404 `OWNER_NOT_FOUND`), the work orders' completion
/// days being the company's (`zone`).
pub async fn statement(
    conn: &mut PgConnection,
    owner: Uuid,
    month: Month,
    zone: crate::clock::BusinessZone,
) -> Result<Statement> {
    let found: Option<(String, Option<Decimal>)> = sqlx::query_as(
        "SELECT coalesce(nullif(trim(coalesce(company_name, '')), ''),
                         nullif(concat_ws(' ', first_name, last_name), ''), 'Owner'),
                management_fee_percent
         FROM owners WHERE id = $1",
    )
    .bind(owner)
    .fetch_optional(&mut *conn)
    .await?;
    let (owner_name, fee_percent) = found.ok_or(Error::NotFound("owner"))?;
    let villas: Vec<(Uuid, String)> = sqlx::query_as(
        "SELECT id, villa_name FROM villas WHERE owner_id = $1 ORDER BY villa_name, id",
    )
    .bind(owner)
    .fetch_all(&mut *conn)
    .await?;
    let stays: Vec<StayLine> = sqlx::query_as(
        "SELECT v.id AS villa_id, r.id AS reservation_id, r.pms_id, l.name AS listing_name, r.guest_name,
                r.channel, r.check_in, r.check_out, r.currency,
                least(r.check_out, $3::date) - greatest(r.check_in, $2::date) AS nights,
                r.check_out - r.check_in AS stay_nights, r.total_amount, r.channel_commission
         FROM villas v JOIN pms_listings l ON l.villa_id = v.id
         JOIN pms_reservations r ON r.listing_pms_id = l.pms_id
         WHERE v.owner_id = $1 AND r.status = 'CONFIRMED' AND r.check_out > r.check_in
           AND r.check_out > $2::date AND r.check_in < $3::date
         ORDER BY r.check_in, r.pms_id",
    )
    .bind(owner)
    .bind(month.first)
    .bind(month.next)
    .fetch_all(&mut *conn)
    .await?;
    let costs: Vec<CostLine> = sqlx::query_as(
        "SELECT w.villa_id, w.id AS work_order_id, w.title,
                (w.completed_at AT TIME ZONE $4::text)::date AS completed_on,
                c.kind, c.description, c.amount, c.currency
         FROM villas v JOIN work_orders w ON w.villa_id = v.id
         JOIN work_order_costs c ON c.work_order_id = w.id
         WHERE v.owner_id = $1 AND w.status = 'COMPLETED' AND c.bill_to = 'OWNER' AND NOT c.estimate
           AND w.completed_at >= $2::date::timestamp AT TIME ZONE $4::text
           AND w.completed_at < $3::date::timestamp AT TIME ZONE $4::text
         ORDER BY w.completed_at, w.id, c.created_at, c.id",
    )
    .bind(owner)
    .bind(month.first)
    .bind(month.next)
    .bind(zone.name())
    .fetch_all(&mut *conn)
    .await?;
    // Each currency's stays' shares, to the cent so that the owner's total is the exact sum
    // rounded once (the dashboard's revenue of the owner's listings).
    let mut money = vec![StayMoney::default(); stays.len()];
    let currencies: std::collections::BTreeSet<&String> =
        stays.iter().filter_map(|s| s.currency.as_ref()).collect();
    for currency in currencies {
        let of: Vec<usize> = (0..stays.len())
            .filter(|&i| stays[i].currency.as_ref() == Some(currency))
            .collect();
        let gross = allocate(
            &of.iter()
                .map(|&i| stays[i].share(stays[i].total_amount))
                .collect::<Vec<_>>(),
        );
        let commission = allocate(
            &of.iter()
                .map(|&i| stays[i].share(stays[i].channel_commission))
                .collect::<Vec<_>>(),
        );
        for (k, &i) in of.iter().enumerate() {
            money[i] = StayMoney {
                gross: gross[k],
                commission: commission[k],
            };
        }
    }
    let stays: Vec<(StayLine, StayMoney)> = stays.into_iter().zip(money).collect();
    let fee = fee_percent.unwrap_or_default();
    let mut totals: BTreeMap<String, Totals> = BTreeMap::new();
    let villas = villas
        .into_iter()
        .map(|(id, name)| {
            let stays: Vec<(StayLine, StayMoney)> = stays
                .iter()
                .filter(|(s, _)| s.villa_id == id)
                .cloned()
                .collect();
            let costs: Vec<CostLine> = costs.iter().filter(|c| c.villa_id == id).cloned().collect();
            let mut own: BTreeMap<String, Totals> = BTreeMap::new();
            for (stay, m) in &stays {
                let Some(currency) = &stay.currency else {
                    continue;
                };
                let t = own.entry(currency.clone()).or_default();
                t.nights += i64::from(stay.nights);
                t.gross += m.gross;
                t.commission += m.commission;
                t.net += m.net();
            }
            for cost in &costs {
                own.entry(cost.currency.clone()).or_default().costs += cost.amount;
            }
            for t in own.values_mut() {
                t.management_fee = round2(t.net * fee / Decimal::ONE_HUNDRED);
            }
            for (currency, t) in &own {
                totals.entry(currency.clone()).or_default().add(t);
            }
            VillaStatement {
                id,
                name,
                stays,
                costs,
                totals: own,
            }
        })
        .collect();
    Ok(Statement {
        owner_id: owner,
        owner_name,
        month,
        fee_percent,
        villas,
        totals,
    })
}

impl Statement {
    /// The statement as `GET /reporting/owner-statements` answers it.
    pub fn to_json(&self) -> Value {
        let totals = |t: &BTreeMap<String, Totals>| -> Vec<Value> {
            t.iter().map(|(c, t)| t.json(c)).collect()
        };
        json!({
            "owner": {"id": self.owner_id, "name": self.owner_name},
            "month": self.month.label(),
            "from": self.month.first,
            "to": self.month.last_day(),
            "managementFeePercent": self.fee_percent.map(number),
            "villas": self.villas.iter().map(|v| json!({
                "villa": {"id": v.id, "name": v.name},
                "stays": v.stays.iter().map(|(s, m)| json!({
                    "reservationId": s.reservation_id,
                    "pmsId": s.pms_id,
                    "listing": s.listing_name,
                    "guestName": s.guest_name,
                    "channel": s.channel,
                    "checkIn": s.check_in,
                    "checkOut": s.check_out,
                    "nights": s.nights,
                    "currency": s.currency,
                    // A stay without a currency counts for nights only.
                    "gross": s.currency.as_ref().map(|_| number(m.gross)),
                    "channelCommission": s.currency.as_ref().map(|_| number(m.commission)),
                    "net": s.currency.as_ref().map(|_| number(m.net())),
                })).collect::<Vec<_>>(),
                "ownerCosts": v.costs.iter().map(|c| json!({
                    "workOrderId": c.work_order_id,
                    "title": c.title,
                    "completedOn": c.completed_on,
                    "kind": c.kind,
                    "description": c.description,
                    "amount": number(c.amount),
                    "currency": c.currency,
                })).collect::<Vec<_>>(),
                "totals": totals(&v.totals),
            })).collect::<Vec<_>>(),
            "totals": totals(&self.totals),
            "definitions": DEFINITIONS,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn months_parse_and_border_their_days() {
        let m = Month::parse("2026-02").unwrap();
        assert_eq!(m.first, "2026-02-01".parse().unwrap());
        assert_eq!(m.next, "2026-03-01".parse().unwrap());
        assert_eq!(m.last_day(), "2026-02-28".parse::<NaiveDate>().unwrap());
        assert_eq!(m.label(), "2026-02");
        for bad in [
            "2026-13",
            "2026-2",
            "26-02",
            "2026/02",
            "1899-12",
            "",
            "2026-02-01",
        ] {
            assert_eq!(Month::parse(bad), None, "{bad}");
        }
        let before = Month::before("2026-01-15".parse().unwrap()).unwrap();
        assert_eq!(before.label(), "2025-12");
    }

    #[test]
    fn a_stay_across_the_month_counts_its_nights_inside() {
        let stay = StayLine {
            villa_id: Uuid::nil(),
            reservation_id: Uuid::nil(),
            pms_id: 1,
            listing_name: "L".into(),
            guest_name: None,
            channel: "AIRBNB".into(),
            check_in: "2026-01-30".parse().unwrap(),
            check_out: "2026-02-02".parse().unwrap(),
            currency: Some("USD".into()),
            nights: 1,
            stay_nights: 3,
            total_amount: "100".parse().unwrap(),
            channel_commission: "15".parse().unwrap(),
        };
        assert_eq!(
            round2(stay.share(stay.total_amount)),
            "33.33".parse().unwrap()
        );
        assert_eq!(stay.share(stay.channel_commission), "5".parse().unwrap());
    }

    #[test]
    fn cents_add_up_to_the_sum_rounded_once() {
        let third: Decimal = Decimal::from(100) / Decimal::from(3);
        let out = allocate(&[third, third, third]);
        assert_eq!(
            out,
            ["33.34", "33.33", "33.33"].map(|s| s.parse::<Decimal>().unwrap())
        );
        assert_eq!(out.iter().copied().sum::<Decimal>(), Decimal::from(100));
        let exact = ["10.005", "20.004", "0.001"].map(|s| s.parse::<Decimal>().unwrap());
        let out = allocate(&exact);
        assert_eq!(
            out.iter().copied().sum::<Decimal>(),
            round2("30.010".parse().unwrap())
        );
        assert_eq!(allocate(&[]), Vec::<Decimal>::new());
    }
}
