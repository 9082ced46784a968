//! The reporting figures and exports (`REPORTING_CURRENCY`, `EXPORT_RETENTION_DAYS`).

use std::time::Duration;

use super::env::Env;

/// The reporting figures and exports. (How often the scheduler removes expired exports,
/// `EXPORT_EXPIRY_INTERVAL_SECS`, is declared beside the job: `jobs::Periodic`.)
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportingSettings {
    /// `REPORTING_CURRENCY` (ISO 4217, default `THB`): the currency of money figures when a
    /// request names none.
    pub currency: crate::reporting::figures::Currency,
    /// `EXPORT_RETENTION_DAYS` (whole days, 1 to 3660, default 7): how long an export's file is
    /// kept for download.
    pub export_retention: Duration,
}

impl ReportingSettings {
    pub const DEFAULT_RETENTION_DAYS: u64 = 7;
    pub const MAX_RETENTION_DAYS: u64 = 3660;
}

/// The defaults above.
impl Default for ReportingSettings {
    fn default() -> Self {
        Self {
            currency: crate::reporting::figures::Currency::default(),
            export_retention: Duration::from_secs(Self::DEFAULT_RETENTION_DAYS * 86_400),
        }
    }
}

/// `REPORTING_CURRENCY` and `EXPORT_RETENTION_DAYS`; problems go to `env` like every other
/// setting's.
pub(super) fn reporting_settings(env: &mut Env<'_>) -> ReportingSettings {
    let defaults = ReportingSettings::default();
    env.record("REPORTING_CURRENCY", &defaults.currency);
    let currency = match env.raw("REPORTING_CURRENCY") {
        None => defaults.currency,
        Some(raw) => crate::reporting::figures::Currency::new_setting(&raw).unwrap_or_else(|| {
            env.problems.push(format!(
                "REPORTING_CURRENCY must be a 3-letter ISO 4217 currency code such as THB, got {raw:?}"
            ));
            defaults.currency
        }),
    };
    let days = env.parsed(
        "EXPORT_RETENTION_DAYS",
        ReportingSettings::DEFAULT_RETENTION_DAYS,
        "a whole number of days",
    );
    // Bounded: a typo of 0 would expire every export as it completes, and a huge one would push
    // the expiry past what Postgres keeps.
    if !(1..=ReportingSettings::MAX_RETENTION_DAYS).contains(&days) {
        env.problems.push(format!(
            "EXPORT_RETENTION_DAYS must be from 1 to {} days, got {days}",
            ReportingSettings::MAX_RETENTION_DAYS
        ));
    }
    let days = days.clamp(1, ReportingSettings::MAX_RETENTION_DAYS);
    ReportingSettings {
        currency,
        export_retention: Duration::from_secs(days * 86_400),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::ReportingSettings;
    use crate::settings::{
        CoreSettings,
        test_support::{KEY, lookup},
    };

    #[test]
    fn the_reporting_settings_have_defaults() {
        let core = CoreSettings::from_lookup(&lookup(&[("DATA_ENCRYPTION_KEY", KEY)])).unwrap();
        assert_eq!(core.reporting, ReportingSettings::default());
        assert_eq!(core.reporting.currency.as_str(), "THB");
        assert_eq!(
            core.reporting.export_retention,
            Duration::from_secs(7 * 86_400)
        );
        // Empty values, as compose passes an unset variable, are not set.
        let core = CoreSettings::from_lookup(&lookup(&[
            ("DATA_ENCRYPTION_KEY", KEY),
            ("REPORTING_CURRENCY", " "),
            ("EXPORT_RETENTION_DAYS", ""),
        ]))
        .unwrap();
        assert_eq!(core.reporting, ReportingSettings::default());
    }

    #[test]
    fn the_reporting_settings_are_read() {
        let core = CoreSettings::from_lookup(&lookup(&[
            ("DATA_ENCRYPTION_KEY", KEY),
            ("REPORTING_CURRENCY", " usd "),
            ("EXPORT_RETENTION_DAYS", "30"),
        ]))
        .unwrap();
        assert_eq!(core.reporting.currency.as_str(), "USD");
        assert_eq!(
            core.reporting.export_retention,
            Duration::from_secs(30 * 86_400)
        );
        let longest = CoreSettings::from_lookup(&lookup(&[
            ("DATA_ENCRYPTION_KEY", KEY),
            ("EXPORT_RETENTION_DAYS", "3660"),
        ]))
        .unwrap();
        assert_eq!(
            longest.reporting.export_retention,
            Duration::from_secs(3660 * 86_400)
        );
        assert!(format!("{core:?}").contains("USD"));
    }

    #[test]
    fn reporting_problems_name_their_variables() {
        fn err(vars: &[(&str, &str)]) -> String {
            let mut all: Vec<(&str, &str)> = vec![("DATA_ENCRYPTION_KEY", KEY)];
            all.extend_from_slice(vars);
            CoreSettings::from_lookup(&lookup(&all))
                .unwrap_err()
                .to_string()
        }
        let malformed = err(&[
            ("REPORTING_CURRENCY", "baht"),
            ("EXPORT_RETENTION_DAYS", "1w"),
        ]);
        for expected in [
            "REPORTING_CURRENCY must be a 3-letter ISO 4217 currency code",
            "EXPORT_RETENTION_DAYS must be a whole number of days",
        ] {
            assert!(
                malformed.contains(expected),
                "{expected:?} not in: {malformed}"
            );
        }
        for days in ["0", "3661", "-1"] {
            let message = err(&[("EXPORT_RETENTION_DAYS", days)]);
            assert!(
                message.contains("EXPORT_RETENTION_DAYS must be"),
                "{message}"
            );
        }
        assert!(err(&[("REPORTING_CURRENCY", "TH")]).contains("REPORTING_CURRENCY"));
    }
}
