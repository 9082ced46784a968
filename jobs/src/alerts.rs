//! Queue `alerts`: stock alert evaluation (`domain::inventory::alerts::evaluate`). Every change of
//! an item's stock, condition, minimum or expiry enqueues the evaluation of that item,
//! de-duplicated while one waits; the scheduler enqueues the evaluation of every item every
//! `ALERT_EVALUATION_INTERVAL_SECS`, which also catches expiry dates coming near. A change of the
//! calendar (a stay booked, moved or cancelled, a task rule changed: what the turnover generation
//! runs after) enqueues the evaluation of every item, for the supplies forecast's alerts.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::{Job, JobContext, JobError, Queue};

/// Opens the alerts whose cause is present and resolves those whose cause is gone, for one item
/// or for all. Running it twice changes nothing more: one open alert per item and type is a
/// unique index.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct EvaluateStockAlerts {
    /// Only this item (the run a change enqueues); every item when absent.
    #[serde(default)]
    pub item_id: Option<Uuid>,
    /// The scheduler tick of a full evaluation (one job per tick, however many schedulers fire).
    #[serde(default)]
    pub tick: Option<String>,
    /// A full evaluation after the calendar changed (one waits at a time).
    #[serde(default)]
    pub calendar: bool,
}

impl EvaluateStockAlerts {
    pub fn item(item_id: Uuid) -> Self {
        Self {
            item_id: Some(item_id),
            ..Self::default()
        }
    }

    /// Every item, because the stays or the task rules changed what the forecast expects.
    pub fn after_calendar_change() -> Self {
        Self {
            calendar: true,
            ..Self::default()
        }
    }
}

/// The scheduler evaluates every item every `ALERT_EVALUATION_INTERVAL_SECS`.
impl crate::Periodic for EvaluateStockAlerts {
    const INTERVAL_SETTING: &'static str = "ALERT_EVALUATION_INTERVAL_SECS";
    const DEFAULT_INTERVAL: std::time::Duration = std::time::Duration::from_secs(900);

    fn for_tick(tick: String) -> Self {
        Self {
            tick: Some(tick),
            ..Self::default()
        }
    }
}

impl Job for EvaluateStockAlerts {
    const KIND: &'static str = "alerts.evaluate_stock";
    const QUEUE: Queue = Queue::Alerts;

    fn dedupe_key(&self) -> Option<String> {
        match (&self.tick, self.item_id) {
            (Some(tick), _) => Some(format!("{}:tick:{tick}", Self::KIND)),
            // Only while queued: a change made while the evaluation runs gets its own.
            (None, Some(item)) => Some(format!(
                "{}{}:item:{item}",
                domain::job_store::DEDUPE_WHILE_QUEUED,
                Self::KIND
            )),
            (None, None) if self.calendar => Some(format!(
                "{}{}:calendar",
                domain::job_store::DEDUPE_WHILE_QUEUED,
                Self::KIND
            )),
            (None, None) => None,
        }
    }

    async fn run(self, ctx: JobContext) -> Result<Value, JobError> {
        let mut conn = ctx.pool.acquire().await?;
        let started = std::time::Instant::now();
        // Expiry is measured against the company's day, not the database session's.
        let done = domain::inventory::alerts::evaluate(
            &mut conn,
            self.item_id,
            ctx.services.expiry_alert_days,
            ctx.services.forecast_windows,
            ctx.services.business_time_zone.today(),
        )
        .await?;
        Ok(json!({
            "opened": done.opened,
            "resolved": done.resolved,
            "released": done.released,
            "itemId": self.item_id,
            "millis": u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        }))
    }
}
