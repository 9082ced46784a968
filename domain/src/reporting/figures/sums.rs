//! The sums over a range of nights, and the figures made of them: the ratios, the rounding to 2
//! decimals, the change from the previous period, and their JSON numbers.

use rust_decimal::{Decimal, RoundingStrategy};
use serde_json::Value;

/// The sums over a range of nights, before any division or rounding.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Figures {
    /// Exact (numeric, 10 decimals).
    pub revenue: Decimal,
    pub booked_nights: i64,
    /// Booked nights of the stays in the answer's currency (ADR's divisor).
    pub priced_nights: i64,
    pub owner_nights: i64,
    /// Listings × the range's nights.
    pub nights: i64,
    pub bookings: i64,
}

impl Figures {
    /// Nights less owner nights.
    pub fn available_nights(&self) -> i64 {
        (self.nights - self.owner_nights).max(0)
    }

    pub fn revenue_rounded(&self) -> Decimal {
        round2(self.revenue)
    }

    /// Booked / available × 100, rounded to 2 decimals; 0 without available nights.
    pub fn occupancy(&self) -> Decimal {
        ratio(
            Decimal::from(self.booked_nights) * Decimal::ONE_HUNDRED,
            self.available_nights(),
        )
    }

    /// Revenue / priced nights, rounded to 2 decimals; 0 without priced nights.
    pub fn adr(&self) -> Decimal {
        ratio(self.revenue, self.priced_nights)
    }

    /// Revenue / available nights, rounded to 2 decimals; 0 without available nights.
    pub fn revpar(&self) -> Decimal {
        ratio(self.revenue, self.available_nights())
    }
}

/// `numerator / denominator` rounded to 2 decimals, 0 when the denominator is 0.
fn ratio(numerator: Decimal, denominator: i64) -> Decimal {
    if denominator == 0 {
        return Decimal::ZERO;
    }
    numerator
        .checked_div(Decimal::from(denominator))
        .map(round2)
        .unwrap_or_default()
}

/// 2 decimals, half away from zero (0.005 → 0.01).
pub fn round2(d: Decimal) -> Decimal {
    d.round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero)
}

/// (value − previous) / previous × 100 of the figures rounded to 2 decimals (as they are shown:
/// [`DEFINITIONS`]), rounded to 2 decimals; `None` when the rounded previous is 0 (0.00). The
/// figures may be given rounded or not: they are rounded here first.
///
/// [`DEFINITIONS`]: super::DEFINITIONS
pub fn change(value: Decimal, previous: Decimal) -> Option<Decimal> {
    let (value, previous) = (round2(value), round2(previous));
    if previous.is_zero() {
        return None;
    }
    (value - previous)
        .checked_mul(Decimal::ONE_HUNDRED)
        .and_then(|d| d.checked_div(previous))
        .map(round2)
}

/// The JSON number of a (2-decimal) figure.
pub fn number(d: Decimal) -> Value {
    // Through the decimal text: the f64 nearest to 73.33 prints as 73.33.
    Value::from(d.to_string().parse::<f64>().unwrap_or_default())
}

/// [`change`] as JSON: a number, or `null`.
pub(super) fn change_json(value: Decimal, previous: Decimal) -> Value {
    change(value, previous).map_or(Value::Null, number)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::tests::dec;
    use super::*;

    #[test]
    fn figures_round_at_the_end_and_divide_by_zero_to_zero() {
        let f = Figures {
            revenue: dec("1000.0000000000") / Decimal::from(3),
            booked_nights: 11,
            priced_nights: 7,
            owner_nights: 3,
            nights: 33,
            bookings: 2,
        };
        assert_eq!(f.available_nights(), 30);
        assert_eq!(f.revenue_rounded(), dec("333.33"));
        // 11 / 30 = 36.666…
        assert_eq!(f.occupancy(), dec("36.67"));
        // 333.333… / 7 = 47.619…: from the exact revenue, not from 333.33.
        assert_eq!(f.adr(), dec("47.62"));
        // 333.333… / 30 = 11.111…
        assert_eq!(f.revpar(), dec("11.11"));
        let none = Figures::default();
        assert_eq!(none.occupancy(), Decimal::ZERO);
        assert_eq!(none.adr(), Decimal::ZERO);
        assert_eq!(none.revpar(), Decimal::ZERO);
        // Owner stays blocking more than the nights leave none available, never fewer.
        let blocked = Figures {
            booked_nights: 2,
            owner_nights: 40,
            nights: 31,
            ..Figures::default()
        };
        assert_eq!(blocked.available_nights(), 0);
        assert_eq!(blocked.occupancy(), Decimal::ZERO);
        assert_eq!(round2(dec("0.005")), dec("0.01"));
        assert_eq!(round2(dec("-0.005")), dec("-0.01"));
        assert_eq!(round2(dec("2.675")), dec("2.68"));
        assert_eq!(round2(dec("2.6749999")), dec("2.67"));
    }

    #[test]
    fn change_is_null_when_previous_is_zero() {
        assert_eq!(change(dec("150"), dec("100")), Some(dec("50")));
        assert_eq!(change(dec("50"), dec("100")), Some(dec("-50")));
        assert_eq!(change(dec("0"), dec("100")), Some(dec("-100")));
        assert_eq!(change(dec("100"), dec("0")), None);
        assert_eq!(change(dec("0"), dec("0")), None);
        // 2 / 3 − 1 = −33.333…
        assert_eq!(change(dec("2"), dec("3")), Some(dec("-33.33")));
        assert_eq!(change(dec("73.33"), dec("64.52")), Some(dec("13.65")));
        assert_eq!(change_json(dec("1"), dec("0")), Value::Null);
        assert_eq!(number(dec("73.33")), json!(73.33));
        assert_eq!(number(dec("0")), json!(0.0));
    }

    #[test]
    fn change_is_computed_from_the_figures_as_shown() {
        // RevPAR 15,166.666… / 88 = 172.348… shown 172.35, beside 7,500 / 93 = 80.645… shown
        // 80.65: (172.35 − 80.65) / 80.65 × 100 = 113.7011… → 113.70, what a reader gets from the
        // two numbers (the unrounded ones would give 113.7121… → 113.71).
        let revenue = dec("15166.6666666667");
        assert_eq!(
            change(revenue / Decimal::from(88), dec("7500") / Decimal::from(93)),
            Some(dec("113.70"))
        );
        // Both shown as 100.00: no change (the unrounded 0.008 % would show as 0.01).
        assert_eq!(change(dec("100.004"), dec("99.996")), Some(Decimal::ZERO));
        // A previous shown as 0.00 is 0: null, not (100 − 0.004) / 0.004 × 100 = 2,499,900.
        assert_eq!(change(dec("100"), dec("0.004")), None);
        assert_eq!(change_json(dec("100"), dec("0.0049999")), Value::Null);
        assert_eq!(change(dec("100"), dec("-0.004")), None);
        // 0.005 is shown as 0.01: (100 − 0.01) / 0.01 × 100.
        assert_eq!(change(dec("100"), dec("0.005")), Some(dec("999900")));
    }
}
