//! The onboarding record of a villa: ten steps with stable names, the completion rule, and the
//! version that makes concurrent edits of one onboarding detectable (`ETag` / `If-Match`).

use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use crate::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Step {
    BasicInfo,
    OwnerDetails,
    ContractDetails,
    BankDetails,
    OtaCredentials,
    Documents,
    StaffConfiguration,
    Facilities,
    Photos,
    Review,
}

pub const TOTAL_STEPS: u8 = 10;

impl Step {
    pub const ALL: [Step; 10] = [
        Step::BasicInfo,
        Step::OwnerDetails,
        Step::ContractDetails,
        Step::BankDetails,
        Step::OtaCredentials,
        Step::Documents,
        Step::StaffConfiguration,
        Step::Facilities,
        Step::Photos,
        Step::Review,
    ];

    /// 1 to 10.
    pub fn number(self) -> u8 {
        Self::ALL.iter().position(|s| *s == self).unwrap_or(0) as u8 + 1
    }

    pub fn from_number(n: i64) -> Option<Step> {
        usize::try_from(n)
            .ok()
            .and_then(|n| n.checked_sub(1))
            .and_then(|i| Self::ALL.get(i).copied())
    }

    /// The stored name (ARCHITECTURE.md, "One data model").
    pub fn as_str(self) -> &'static str {
        match self {
            Step::BasicInfo => "BASIC_INFO",
            Step::OwnerDetails => "OWNER_DETAILS",
            Step::ContractDetails => "CONTRACT_DETAILS",
            Step::BankDetails => "BANK_DETAILS",
            Step::OtaCredentials => "OTA_CREDENTIALS",
            Step::Documents => "DOCUMENTS",
            Step::StaffConfiguration => "STAFF_CONFIGURATION",
            Step::Facilities => "FACILITIES",
            Step::Photos => "PHOTOS",
            Step::Review => "REVIEW",
        }
    }

    /// The name in the summary (`villaInfo`, `ownerDetails`, ...).
    pub fn summary_name(self) -> &'static str {
        match self {
            Step::BasicInfo => "villaInfo",
            Step::OwnerDetails => "ownerDetails",
            Step::ContractDetails => "contractualDetails",
            Step::BankDetails => "bankDetails",
            Step::OtaCredentials => "otaCredentials",
            Step::Documents => "documents",
            Step::StaffConfiguration => "staffConfiguration",
            Step::Facilities => "facilitiesChecklist",
            Step::Photos => "photos",
            Step::Review => "review",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Step::BasicInfo => "Villa Information",
            Step::OwnerDetails => "Owner Details",
            Step::ContractDetails => "Contractual Details",
            Step::BankDetails => "Bank Details",
            Step::OtaCredentials => "OTA Credentials",
            Step::Documents => "Documents",
            Step::StaffConfiguration => "Staff Configuration",
            Step::Facilities => "Facilities Checklist",
            Step::Photos => "Photo Upload",
            Step::Review => "Review",
        }
    }
}

/// The booleans the progress record shows, one per step, in step order.
#[derive(Debug, Clone, Copy, Default, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StepFlags {
    pub villa_info_completed: bool,
    pub owner_details_completed: bool,
    pub contractual_details_completed: bool,
    pub bank_details_completed: bool,
    pub ota_credentials_completed: bool,
    pub documents_uploaded: bool,
    pub staff_config_completed: bool,
    pub facilities_completed: bool,
    pub photos_uploaded: bool,
    pub review_completed: bool,
}

impl From<&Vec<bool>> for StepFlags {
    fn from(done: &Vec<bool>) -> Self {
        let at = |i: usize| done.get(i).copied().unwrap_or(false);
        StepFlags {
            villa_info_completed: at(0),
            owner_details_completed: at(1),
            contractual_details_completed: at(2),
            bank_details_completed: at(3),
            ota_credentials_completed: at(4),
            documents_uploaded: at(5),
            staff_config_completed: at(6),
            facilities_completed: at(7),
            photos_uploaded: at(8),
            review_completed: at(9),
        }
    }
}

/// The progress of one villa's onboarding as the wizard shows it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Progress {
    pub villa_id: Uuid,
    /// 10 per completed step.
    pub completion_percentage: u8,
    /// NOT_STARTED (a villa created outside the wizard), IN_PROGRESS or COMPLETED.
    pub status: String,
    /// The first step not completed; 10 when all are.
    pub current_step: u8,
    pub total_steps: u8,
    /// Position n-1 is step n.
    pub steps_completed: Vec<bool>,
    /// One flag per step, as the wizard names them.
    #[serde(flatten)]
    pub flags: StepFlags,
    pub started_at: Option<DateTime<Utc>>,
    pub completed_at: Option<DateTime<Utc>>,
    pub completed_by: Option<String>,
    pub updated_at: Option<DateTime<Utc>>,
    /// The value behind the `ETag` header; send it back as `If-Match`.
    pub version: i32,
}

impl Progress {
    pub fn etag(&self) -> String {
        format!("\"progress-{}-{}\"", self.villa_id, self.version)
    }

    pub fn missing_steps(&self) -> Vec<Step> {
        Step::ALL
            .into_iter()
            .zip(&self.steps_completed)
            .filter(|(_, done)| !**done)
            .map(|(s, _)| s)
            .collect()
    }

    fn new(villa_id: Uuid, row: Option<ProgressRow>, completed: &[String]) -> Progress {
        let steps_completed: Vec<bool> = Step::ALL
            .iter()
            .map(|s| completed.iter().any(|c| c == s.as_str()))
            .collect();
        let done = steps_completed.iter().filter(|d| **d).count() as u8;
        let current_step = steps_completed
            .iter()
            .position(|d| !d)
            .map_or(TOTAL_STEPS, |i| i as u8 + 1);
        let flags = StepFlags::from(&steps_completed);
        let row = row.unwrap_or(ProgressRow {
            status: "NOT_STARTED".into(),
            started_at: None,
            completed_at: None,
            completed_by: None,
            updated_at: None,
            version: 0,
        });
        Progress {
            villa_id,
            completion_percentage: done * 10,
            status: row.status,
            current_step,
            total_steps: TOTAL_STEPS,
            steps_completed,
            flags,
            started_at: row.started_at,
            completed_at: row.completed_at,
            completed_by: row.completed_by,
            updated_at: row.updated_at,
            version: row.version,
        }
    }
}

#[derive(sqlx::FromRow)]
struct ProgressRow {
    status: String,
    started_at: Option<DateTime<Utc>>,
    completed_at: Option<DateTime<Utc>>,
    completed_by: Option<String>,
    updated_at: Option<DateTime<Utc>>,
    version: i32,
}

/// The villa's progress; a villa whose onboarding never started shows NOT_STARTED at 0 %.
pub async fn get(conn: &mut PgConnection, villa_id: Uuid) -> Result<Progress> {
    let exists: Option<bool> = sqlx::query_scalar("SELECT true FROM villas WHERE id = $1")
        .bind(villa_id)
        .fetch_optional(&mut *conn)
        .await?;
    if exists.is_none() {
        return Err(Error::NotFound("villa"));
    }
    let row: Option<ProgressRow> = sqlx::query_as(
        "SELECT status, started_at, completed_at, completed_by, updated_at, version
         FROM onboarding_progress WHERE villa_id = $1",
    )
    .bind(villa_id)
    .fetch_optional(&mut *conn)
    .await?;
    let completed: Vec<String> = sqlx::query_scalar(
        "SELECT step FROM onboarding_steps WHERE villa_id = $1 AND status = 'COMPLETED'",
    )
    .bind(villa_id)
    .fetch_all(&mut *conn)
    .await?;
    Ok(Progress::new(villa_id, row, &completed))
}

pub async fn get_pooled(pool: &PgPool, villa_id: Uuid) -> Result<Progress> {
    let mut conn = pool.acquire().await?;
    get(&mut conn, villa_id).await
}

/// Creates the progress record (IN_PROGRESS, every step PENDING) if the villa has none.
pub async fn start(conn: &mut PgConnection, villa_id: Uuid) -> Result<()> {
    sqlx::query(
        "INSERT INTO onboarding_progress (villa_id) SELECT id FROM villas WHERE id = $1
         ON CONFLICT (villa_id) DO NOTHING",
    )
    .bind(villa_id)
    .execute(&mut *conn)
    .await?;
    sqlx::query(
        "INSERT INTO onboarding_steps (villa_id, step)
         SELECT $1, s FROM unnest($2::text[]) s WHERE EXISTS (SELECT 1 FROM onboarding_progress WHERE villa_id = $1)
         ON CONFLICT DO NOTHING",
    )
    .bind(villa_id)
    .bind(Step::ALL.map(Step::as_str).to_vec())
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Opens a write to the villa's onboarding inside the caller's transaction: checks that the
/// villa exists, starts its onboarding if needed, and, when `if_match` is given, that the
/// record is still at that version; bumps the version.
///
/// The villa's row is locked first (`FOR NO KEY UPDATE`, which plain reads, uploads and
/// foreign-key checks do not wait for), and held until the transaction ends: one lock per
/// villa, always taken before the progress, the steps, the owner or anything else a step
/// writes, so concurrent saves of one villa run one after the other and never wait on each other
/// in opposite orders. (Taking only a key-share lock here and the villa's row lock later, in
/// step 2's owner upsert, deadlocked two saves that each held the one the other wanted.)
pub async fn begin_write(
    conn: &mut PgConnection,
    villa_id: Uuid,
    if_match: Option<i32>,
) -> Result<i32> {
    let exists: Option<bool> =
        sqlx::query_scalar("SELECT true FROM villas WHERE id = $1 FOR NO KEY UPDATE")
            .bind(villa_id)
            .fetch_optional(&mut *conn)
            .await?;
    if exists.is_none() {
        return Err(Error::NotFound("villa"));
    }
    start(conn, villa_id).await?;
    let version: Option<i32> = sqlx::query_scalar(
        "UPDATE onboarding_progress SET version = version + 1, updated_at = now()
         WHERE villa_id = $1 AND ($2::int IS NULL OR version = $2) RETURNING version",
    )
    .bind(villa_id)
    .bind(if_match)
    .fetch_optional(&mut *conn)
    .await?;
    version.ok_or(Error::PreconditionFailed)
}

/// Marks a step COMPLETED (or back to IN_PROGRESS when `completed` is false).
pub async fn set_step(
    conn: &mut PgConnection,
    villa_id: Uuid,
    step: Step,
    completed: bool,
    by: &str,
) -> Result<()> {
    sqlx::query(
        "UPDATE onboarding_steps SET status = $3, updated_at = now(), updated_by = $4
         WHERE villa_id = $1 AND step = $2",
    )
    .bind(villa_id)
    .bind(step.as_str())
    .bind(if completed {
        "COMPLETED"
    } else {
        "IN_PROGRESS"
    })
    .bind(by)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// What the reviewer confirms when completing.
#[derive(Debug, Clone)]
pub struct Completion {
    pub review_notes: Option<String>,
    pub submission_notes: Option<String>,
    pub completed_by: String,
    pub skipped_fields: Vec<String>,
}

/// Completes the onboarding: progress COMPLETED, villa APPROVED and active. The caller has
/// checked that every step is complete (inside the same transaction, after [`begin_write`]).
pub async fn complete(conn: &mut PgConnection, villa_id: Uuid, c: &Completion) -> Result<()> {
    sqlx::query(
        "UPDATE onboarding_progress SET status = 'COMPLETED', agreed_to_terms = true, data_accuracy_confirmed = true,
             review_notes = $2, submission_notes = $3, completed_at = now(), completed_by = $4, skipped_fields = $5,
             updated_at = now()
         WHERE villa_id = $1",
    )
    .bind(villa_id)
    .bind(&c.review_notes)
    .bind(&c.submission_notes)
    .bind(&c.completed_by)
    .bind(&c.skipped_fields)
    .execute(&mut *conn)
    .await?;
    sqlx::query(
        "UPDATE villas SET status = 'APPROVED', is_active = true, version = version + 1, updated_at = now()
         WHERE id = $1",
    )
    .bind(villa_id)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// The status of one step in the stored record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepStatus {
    Pending,
    InProgress,
    Completed,
    Skipped,
}

impl StepStatus {
    pub const ALL: [StepStatus; 4] = [
        Self::Pending,
        Self::InProgress,
        Self::Completed,
        Self::Skipped,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "PENDING",
            Self::InProgress => "IN_PROGRESS",
            Self::Completed => "COMPLETED",
            Self::Skipped => "SKIPPED",
        }
    }

    /// Any letter case.
    pub fn parse(field: &str, raw: &str) -> Result<Self> {
        crate::error::one_of(field, &raw.trim().to_uppercase(), &Self::ALL, Self::as_str)
    }
}

impl Step {
    /// A step by its stable name (`BASIC_INFO`, any letter case).
    pub fn parse(field: &str, raw: &str) -> Result<Self> {
        crate::error::one_of(field, &raw.trim().to_uppercase(), &Self::ALL, Self::as_str)
    }
}

/// One step as the management surface shows it.
#[derive(Debug, Clone, Serialize, sqlx::FromRow, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StepState {
    pub step: String,
    /// PENDING, IN_PROGRESS, COMPLETED or SKIPPED.
    pub status: String,
    pub updated_at: Option<DateTime<Utc>>,
    pub updated_by: Option<String>,
}

/// The onboarding record seen through the ten step names (management's
/// `/villas/:id/onboarding`); the same record as the wizard's progress.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Overview {
    pub villa_id: Uuid,
    /// NOT_STARTED, IN_PROGRESS or COMPLETED.
    pub overall_status: String,
    /// 10 per COMPLETED step, as the wizard counts.
    pub completion_percentage: u8,
    /// The first step not completed (1 to 10).
    pub current_step: u8,
    /// The ten steps in order; PENDING for each when the onboarding has not started.
    pub steps: Vec<StepState>,
    pub started_at: Option<DateTime<Utc>>,
    pub completed_at: Option<DateTime<Utc>>,
}

pub async fn overview(conn: &mut PgConnection, villa_id: Uuid) -> Result<Overview> {
    let progress = get(conn, villa_id).await?;
    let stored: Vec<StepState> = sqlx::query_as(
        "SELECT step, status, updated_at, updated_by FROM onboarding_steps WHERE villa_id = $1",
    )
    .bind(villa_id)
    .fetch_all(&mut *conn)
    .await?;
    let steps = Step::ALL
        .iter()
        .map(|s| {
            stored
                .iter()
                .find(|st| st.step == s.as_str())
                .cloned()
                .unwrap_or(StepState {
                    step: s.as_str().to_owned(),
                    status: StepStatus::Pending.as_str().to_owned(),
                    updated_at: None,
                    updated_by: None,
                })
        })
        .collect();
    Ok(Overview {
        villa_id,
        overall_status: progress.status,
        completion_percentage: progress.completion_percentage,
        current_step: progress.current_step,
        steps,
        started_at: progress.started_at,
        completed_at: progress.completed_at,
    })
}

/// Sets one step's status (management's step update), starting the onboarding if needed. A
/// completed onboarding is closed: its steps no longer change.
pub async fn set_step_status(
    conn: &mut PgConnection,
    villa_id: Uuid,
    step: Step,
    status: StepStatus,
    by: &str,
) -> Result<()> {
    begin_write(conn, villa_id, None).await?;
    let overall: String =
        sqlx::query_scalar("SELECT status FROM onboarding_progress WHERE villa_id = $1")
            .bind(villa_id)
            .fetch_one(&mut *conn)
            .await?;
    if overall == "COMPLETED" {
        return Err(Error::invalid(
            "status",
            "invalid_transition",
            "the villa's onboarding is completed; its steps can no longer change",
        ));
    }
    sqlx::query(
        "UPDATE onboarding_steps SET status = $3, updated_at = now(), updated_by = $4
         WHERE villa_id = $1 AND step = $2",
    )
    .bind(villa_id)
    .bind(step.as_str())
    .bind(status.as_str())
    .bind(by)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentage_and_current_step() {
        let id = Uuid::nil();
        let p = Progress::new(id, None, &[]);
        assert_eq!((p.completion_percentage, p.current_step), (0, 1));
        let p = Progress::new(id, None, &["BASIC_INFO".into(), "OWNER_DETAILS".into()]);
        assert_eq!((p.completion_percentage, p.current_step), (20, 3));
        let all: Vec<String> = Step::ALL.iter().map(|s| s.as_str().to_owned()).collect();
        let p = Progress::new(id, None, &all);
        assert_eq!((p.completion_percentage, p.current_step), (100, 10));
        assert!(p.missing_steps().is_empty());
        assert_eq!(Step::from_number(10), Some(Step::Review));
        assert_eq!(Step::from_number(0), None);
        assert_eq!(Step::from_number(11), None);
    }
}
