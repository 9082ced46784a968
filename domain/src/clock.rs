//! The company's day. "Today" (the latest date a timesheet may carry, when planned maintenance
//! is due, when stock expires, a report's default period) is the date in `BUSINESS_TIME_ZONE`,
//! not UTC's: a Bali technician logs this morning's hours at 07:00 local time, which is still
//! yesterday in UTC. SQL never asks Postgres for `current_date` (the session's zone); the date is
//! computed here and bound.

use std::{fmt, str::FromStr};

use chrono::{NaiveDate, Utc};

/// An IANA time zone (`Asia/Makassar`), parsed once from the settings.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct BusinessZone(chrono_tz::Tz);

impl BusinessZone {
    /// Today's date in this zone.
    pub fn today(self) -> NaiveDate {
        Utc::now().with_timezone(&self.0).date_naive()
    }

    pub fn name(self) -> &'static str {
        self.0.name()
    }
}

impl FromStr for BusinessZone {
    type Err = chrono_tz::ParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.parse().map(BusinessZone)
    }
}

impl fmt::Debug for BusinessZone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The IANA name (`Asia/Makassar`; `UTC` by default).
impl fmt::Display for BusinessZone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zone_east_of_utc_is_a_day_ahead_late_in_the_utc_day() {
        let zone: BusinessZone = "Pacific/Kiritimati".parse().unwrap(); // UTC+14
        let utc_today = Utc::now().date_naive();
        let local = zone.today();
        assert!(local == utc_today || local == utc_today.succ_opt().unwrap());
        assert_eq!(BusinessZone::default().today(), Utc::now().date_naive());
        assert!("Mars/Olympus".parse::<BusinessZone>().is_err());
        assert_eq!(zone.name(), "Pacific/Kiritimati");
    }
}
