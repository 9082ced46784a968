//! Stock alerts: how near an expiry date raises an alert (`EXPIRY_ALERT_DAYS`).

use super::env::Env;

/// Stock alerts: how near an expiry date raises an alert. (How often the scheduler evaluates
/// every item, `ALERT_EVALUATION_INTERVAL_SECS`, is declared beside the job: `jobs::Periodic`.)
#[derive(Debug, Clone)]
pub struct StockAlertSettings {
    /// `EXPIRY_ALERT_DAYS` (default 30): an item expiring within this many days has an alert.
    pub expiry_days: u32,
}

/// `EXPIRY_ALERT_DAYS`; problems go to `env` like every other setting's. Its bound is checked by
/// [`check_stock_alerts`].
pub(super) fn stock_alert_settings(env: &mut Env<'_>) -> StockAlertSettings {
    StockAlertSettings {
        expiry_days: env.parsed("EXPIRY_ALERT_DAYS", 30u32, "a whole number of days"),
    }
}

/// The day count's bound ([`Env::days_at_most`]): at most 3660 days.
pub(super) fn check_stock_alerts(env: &mut Env<'_>, settings: &StockAlertSettings) {
    env.days_at_most("EXPIRY_ALERT_DAYS", settings.expiry_days, 3660);
}
