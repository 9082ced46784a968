//! Queue `maintenance`: the generation of planned-maintenance work orders
//! (`domain::maintenance::pmp::generate`), enqueued by the scheduler every
//! `PM_GENERATE_INTERVAL_SECS` and at once when a schedule is created; and of turnover work
//! orders (`domain::maintenance::turnovers::generate`), every `TURNOVER_INTERVAL_SECS`, and at
//! once when a task rule changes and when a PMS sync that stored a change completes.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::{Job, JobContext, JobError, Queue};
use domain::job_store::DEDUPE_WHILE_QUEUED;

/// Creates the work order of every occurrence due within the lead time that has none. Running it
/// twice, at once or after a restart, creates nothing more: one work order per schedule and
/// occurrence is a unique index.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct GeneratePlannedWork {
    /// The scheduler tick this run belongs to (one job per tick, however many schedulers fire).
    #[serde(default)]
    pub tick: Option<String>,
    /// Only this schedule's occurrences (the run a new schedule enqueues).
    #[serde(default)]
    pub schedule_id: Option<Uuid>,
}

/// The scheduler runs the generation of every schedule every `PM_GENERATE_INTERVAL_SECS`.
impl crate::Periodic for GeneratePlannedWork {
    const INTERVAL_SETTING: &'static str = "PM_GENERATE_INTERVAL_SECS";
    const DEFAULT_INTERVAL: std::time::Duration = std::time::Duration::from_secs(900);

    fn for_tick(tick: String) -> Self {
        Self {
            tick: Some(tick),
            schedule_id: None,
        }
    }
}

impl Job for GeneratePlannedWork {
    const KIND: &'static str = "maintenance.generate_planned_work";
    const QUEUE: Queue = Queue::Maintenance;

    fn dedupe_key(&self) -> Option<String> {
        match (&self.tick, self.schedule_id) {
            (Some(tick), _) => Some(format!("{}:tick:{tick}", Self::KIND)),
            (None, Some(schedule)) => Some(format!("{}:schedule:{schedule}", Self::KIND)),
            (None, None) => None,
        }
    }

    async fn run(self, ctx: JobContext) -> Result<Value, JobError> {
        // The company's day, not UTC's: in Bali a schedule is due from Bali's midnight. Missed
        // occurrences older than PM_CATCH_UP_DAYS get no work order.
        let window = domain::maintenance::pmp::Window::new(
            ctx.services.business_time_zone.today(),
            ctx.services.pm_catch_up_days,
            ctx.services.pm_lead_days,
        );
        let mut conn = ctx.pool.acquire().await?;
        let created =
            domain::maintenance::pmp::generate(&mut conn, window, self.schedule_id).await?;
        Ok(json!({ "created": created, "from": window.from, "until": window.until }))
    }
}

/// Keeps the turnover work orders in step with the stays and the task rules: creates what the
/// occurrences inside `TURNOVER_HORIZON_DAYS` lack, moves, cancels, restores and flags what the
/// stays' changes imply. Runs at once are safe (one work order per rule, stay and occurrence is a
/// unique index); while one run waits in the queue another enqueue adds nothing (its dedupe key
/// holds only while queued), and one enqueued while a run works runs after it, on what changed.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct GenerateTurnovers {
    /// The scheduler tick this run belongs to (one job per tick, however many schedulers fire).
    #[serde(default)]
    pub tick: Option<String>,
}

/// The scheduler runs the generation every `TURNOVER_INTERVAL_SECS`, so that today's horizon
/// moves on even when nothing changes.
impl crate::Periodic for GenerateTurnovers {
    const INTERVAL_SETTING: &'static str = "TURNOVER_INTERVAL_SECS";
    const DEFAULT_INTERVAL: std::time::Duration = std::time::Duration::from_secs(900);

    fn for_tick(tick: String) -> Self {
        Self { tick: Some(tick) }
    }
}

impl Job for GenerateTurnovers {
    const KIND: &'static str = "maintenance.generate_turnovers";
    const QUEUE: Queue = Queue::Maintenance;

    fn dedupe_key(&self) -> Option<String> {
        Some(match &self.tick {
            Some(tick) => format!("{}:tick:{tick}", Self::KIND),
            None => format!("{DEDUPE_WHILE_QUEUED}{}", Self::KIND),
        })
    }

    async fn run(self, ctx: JobContext) -> Result<Value, JobError> {
        let horizon = domain::maintenance::turnovers::Horizon::new(
            ctx.services.business_time_zone.today(),
            ctx.services.turnover_horizon_days,
        );
        let mut conn = ctx.pool.acquire().await?;
        let generated = domain::maintenance::turnovers::generate(&mut conn, horizon).await?;
        // A run for a change (not a tick) follows a stay or a rule that changed: the supplies
        // forecast's alerts follow too (a tick's are the periodic evaluation's).
        if self.tick.is_none() {
            let evaluation = crate::alerts::EvaluateStockAlerts::after_calendar_change()
                .enqueue(&mut conn)
                .await?;
            ctx.services.queues.push(&[evaluation]).await;
        }
        Ok(json!({"generated": generated, "from": horizon.today, "until": horizon.until}))
    }
}
