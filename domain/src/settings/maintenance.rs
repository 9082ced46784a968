//! The work orders generated for the maintenance surface: planned maintenance's (`PM_*`) and the
//! turnovers' (`TURNOVER_HORIZON_DAYS`).

use super::env::Env;

/// Planned maintenance: how far ahead and how far back work orders are generated. (How often the
/// scheduler runs the generation, `PM_GENERATE_INTERVAL_SECS`, is declared beside the job:
/// `jobs::Periodic`.)
#[derive(Debug, Clone)]
pub struct PlannedMaintenanceSettings {
    /// `PM_LEAD_DAYS` (default 7): an occurrence gets its work order this many days ahead.
    pub lead_days: u32,
    /// `PM_CATCH_UP_DAYS` (default 31): occurrences missed longer ago than this (a schedule
    /// created with an old start, a platform stopped for weeks) get no work order.
    pub catch_up_days: u32,
}

/// `PM_LEAD_DAYS` and `PM_CATCH_UP_DAYS`; problems go to `env` like every other setting's. Their
/// bounds are checked by [`check_planned_maintenance`].
pub(super) fn planned_maintenance_settings(env: &mut Env<'_>) -> PlannedMaintenanceSettings {
    PlannedMaintenanceSettings {
        lead_days: env.parsed("PM_LEAD_DAYS", 7u32, "a whole number of days"),
        catch_up_days: env.parsed("PM_CATCH_UP_DAYS", 31u32, "a whole number of days"),
    }
}

/// The day counts' bounds ([`Env::days_at_most`]): at most 366 days each.
pub(super) fn check_planned_maintenance(env: &mut Env<'_>, settings: &PlannedMaintenanceSettings) {
    env.days_at_most("PM_LEAD_DAYS", settings.lead_days, 366);
    env.days_at_most("PM_CATCH_UP_DAYS", settings.catch_up_days, 366);
}

/// Turnovers: how far ahead the stays on the books get their work orders (task rules). (How often
/// the scheduler runs the generation, `TURNOVER_INTERVAL_SECS`, is declared beside the job:
/// `jobs::Periodic`.)
#[derive(Debug, Clone)]
pub struct TurnoverSettings {
    /// `TURNOVER_HORIZON_DAYS` (default 60, 1 to 366): occurrences from today to this many days
    /// ahead get their work order.
    pub horizon_days: u32,
}

/// `TURNOVER_HORIZON_DAYS`; problems go to `env` like every other setting's.
pub(super) fn turnover_settings(env: &mut Env<'_>) -> TurnoverSettings {
    TurnoverSettings {
        horizon_days: env.parsed("TURNOVER_HORIZON_DAYS", 60u32, "a whole number of days"),
    }
}

/// At least a day, at most 366: a longer horizon would enumerate a year of stays on every run.
pub(super) fn check_turnovers(env: &mut Env<'_>, settings: &TurnoverSettings) {
    env.days_at_most("TURNOVER_HORIZON_DAYS", settings.horizon_days, 366);
    if settings.horizon_days == 0 {
        env.problems
            .push("TURNOVER_HORIZON_DAYS must be at least 1 day".into());
    }
}

/// The owner's approval of repair costs: where the links point and how long they last.
#[derive(Debug, Clone)]
pub struct ApprovalSettings {
    /// `PUBLIC_BASE_URL` (unset by default): the platform's address as owners reach it, e.g.
    /// `https://ops.example.com`. Unset, a link points at the address the request came to.
    pub public_base_url: Option<String>,
    /// `APPROVAL_LINK_DAYS` (default 7, 1 to 90): how long an approval link stays valid.
    pub link_days: u32,
}

/// `PUBLIC_BASE_URL` and `APPROVAL_LINK_DAYS`; problems go to `env`.
pub(super) fn approval_settings(env: &mut Env<'_>) -> ApprovalSettings {
    let public_base_url = env.raw("PUBLIC_BASE_URL").map(|url| {
        if !crate::record::is_http_url(&url) {
            env.problems.push(format!(
                "PUBLIC_BASE_URL must be an http:// or https:// address, got {url:?}"
            ));
        }
        url.trim_end_matches('/').to_owned()
    });
    let link_days = env.parsed("APPROVAL_LINK_DAYS", 7u32, "a whole number of days");
    if !(1..=90).contains(&link_days) {
        env.problems.push(format!(
            "APPROVAL_LINK_DAYS must be from 1 to 90 days, got {link_days}"
        ));
    }
    ApprovalSettings {
        public_base_url,
        link_days,
    }
}
