//! Stock alerts: how near an expiry date raises an alert (`EXPIRY_ALERT_DAYS`), and how far ahead
//! the supplies forecast raises one (`FORECAST_ALERT_DAYS`, `FORECAST_CRITICAL_DAYS`).

use super::env::Env;

/// Stock alerts: how near an expiry date raises an alert, and the forecast's windows. (How often
/// the scheduler evaluates every item, `ALERT_EVALUATION_INTERVAL_SECS`, is declared beside the
/// job: `jobs::Periodic`.)
#[derive(Debug, Clone)]
pub struct StockAlertSettings {
    /// `EXPIRY_ALERT_DAYS` (default 30): an item expiring within this many days has an alert.
    pub expiry_days: u32,
    /// `FORECAST_ALERT_DAYS` (default 14, 1 to 120): an item whose projected balance falls below
    /// its minimum within this many days has a FORECAST_SHORTAGE alert (WARNING).
    pub forecast_alert_days: u32,
    /// `FORECAST_CRITICAL_DAYS` (default 3, 0 to `FORECAST_ALERT_DAYS`): CRITICAL when the
    /// projected run-out is within this many days.
    pub forecast_critical_days: u32,
}

impl StockAlertSettings {
    /// The forecast's windows, as the evaluation reads them.
    pub fn forecast_windows(&self) -> crate::inventory::forecast::AlertWindows {
        crate::inventory::forecast::AlertWindows {
            alert_days: self.forecast_alert_days,
            critical_days: self.forecast_critical_days,
        }
    }
}

/// `EXPIRY_ALERT_DAYS` and the forecast's days; problems go to `env` like every other setting's.
/// Their bounds are checked by [`check_stock_alerts`].
pub(super) fn stock_alert_settings(env: &mut Env<'_>) -> StockAlertSettings {
    StockAlertSettings {
        expiry_days: env.parsed("EXPIRY_ALERT_DAYS", 30u32, "a whole number of days"),
        forecast_alert_days: env.parsed("FORECAST_ALERT_DAYS", 14u32, "a whole number of days"),
        forecast_critical_days: env.parsed(
            "FORECAST_CRITICAL_DAYS",
            3u32,
            "a whole number of days",
        ),
    }
}

/// The day counts' bounds: expiry at most 3660 days; the forecast's alert window 1 to 120 days
/// (the report's longest horizon), its critical window at most the alert window.
pub(super) fn check_stock_alerts(env: &mut Env<'_>, settings: &StockAlertSettings) {
    env.days_at_most("EXPIRY_ALERT_DAYS", settings.expiry_days, 3660);
    if !(1..=crate::inventory::forecast::MAX_DAYS).contains(&settings.forecast_alert_days) {
        env.problems.push(format!(
            "FORECAST_ALERT_DAYS must be from 1 to {} days, got {}",
            crate::inventory::forecast::MAX_DAYS,
            settings.forecast_alert_days
        ));
    }
    if settings.forecast_critical_days > settings.forecast_alert_days {
        env.problems.push(format!(
            "FORECAST_CRITICAL_DAYS must be at most FORECAST_ALERT_DAYS ({}), got {}",
            settings.forecast_alert_days, settings.forecast_critical_days
        ));
    }
}
