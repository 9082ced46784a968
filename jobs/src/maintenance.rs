//! Queue `maintenance`: the generation of planned-maintenance work orders
//! (`domain::maintenance::pmp::generate`), enqueued by the scheduler every
//! `PM_GENERATE_INTERVAL_SECS` and at once when a schedule is created.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::{Job, JobContext, JobError, Queue};

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
