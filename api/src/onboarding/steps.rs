//! What each wizard step stores, shared by every route that saves steps (`save-step-N`,
//! `save-steps-1-5`, `step/:n`, `autosave`, the legacy segment routes): parse a step's data
//! (reporting every bad field), then write it, then mark the step, all in one transaction.
//!
//! Step data: 1 the villa's fields; 2 the owner's; 3 the contract's; 4 the bank's; 5
//! `{credentials: [...]}`; 7 `{staff: [...]}`; 8 `{facilities: [...]}`. Steps 6, 9 and 10 store
//! nothing of their own (their files go through the upload routes). For steps 5, 7 and 8 the
//! list is optional: without it the stored list is left as it is.

use domain::{
    Problems,
    management::staff,
    onboarding::{
        Progress, Step, facilities, progress,
        records::{self, OtaCredentialInput},
    },
    record::Patch,
};
use serde_json::Value;
use uuid::Uuid;

use crate::extract::Object;
use crate::{
    error::{AppError, retry_transient},
    state::AppState,
};

/// A step's checked data.
pub enum StepData {
    Villa(Patch),
    Owner(Patch),
    Contract(Patch),
    Bank(Patch),
    Ota(Option<Vec<OtaCredentialInput>>),
    Team(Option<Vec<staff::TeamMember>>),
    Checklist(Option<Vec<facilities::FacilityItem>>),
    Nothing,
}

impl StepData {
    /// The names of what the request set (the fields of a record, or the list it replaced).
    pub fn saved_fields(&self) -> Vec<String> {
        match self {
            StepData::Villa(p) | StepData::Owner(p) | StepData::Contract(p) | StepData::Bank(p) => {
                p.saved_fields.clone()
            }
            StepData::Ota(Some(_)) => vec!["credentials".into()],
            StepData::Team(Some(_)) => vec!["staff".into()],
            StepData::Checklist(Some(_)) => vec!["facilities".into()],
            _ => Vec::new(),
        }
    }
}

/// Checks `data` as the data of `step`; bad fields are recorded as `<prefix><field>`.
pub fn parse(
    state: &AppState,
    step: Step,
    data: &Object,
    prefix: &str,
    problems: &mut Problems,
) -> StepData {
    let cipher = &state.cipher;
    let list = |key: &str| data.get(key).filter(|v| !v.is_null());
    match step {
        Step::BasicInfo => {
            StepData::Villa(records::parse_villa(data, prefix, false, cipher, problems))
        }
        Step::OwnerDetails => StepData::Owner(records::parse_owner(data, prefix, cipher, problems)),
        Step::ContractDetails => {
            StepData::Contract(records::parse_contract(data, prefix, cipher, problems))
        }
        Step::BankDetails => StepData::Bank(records::parse_bank(data, prefix, cipher, problems)),
        Step::OtaCredentials => StepData::Ota(
            list("credentials")
                .and_then(|v| records::parse_ota_credentials(Some(v), prefix, cipher, problems)),
        ),
        Step::StaffConfiguration => {
            StepData::Team(list("staff").and_then(|v| staff::parse_team(Some(v), prefix, problems)))
        }
        Step::Facilities => StepData::Checklist(
            list("facilities").and_then(|v| facilities::parse_checklist(Some(v), prefix, problems)),
        ),
        Step::Documents | Step::Photos | Step::Review => StepData::Nothing,
    }
}

/// Writes a step's data for the villa inside the caller's transaction.
pub async fn write(
    conn: &mut sqlx::PgConnection,
    villa_id: Uuid,
    data: &StepData,
) -> Result<(), AppError> {
    match data {
        StepData::Villa(p) => records::update_villa(conn, villa_id, p).await?,
        StepData::Owner(p) => {
            records::upsert_owner(conn, villa_id, p).await?;
        }
        StepData::Contract(p) => records::upsert_contract(conn, villa_id, p).await?,
        StepData::Bank(p) => records::upsert_bank(conn, villa_id, p).await?,
        StepData::Ota(Some(list)) => records::replace_ota_credentials(conn, villa_id, list).await?,
        StepData::Team(Some(team)) => staff::replace_team(conn, villa_id, team).await?,
        StepData::Checklist(Some(items)) => {
            facilities::replace_checklist(conn, villa_id, items).await?
        }
        StepData::Ota(None)
        | StepData::Team(None)
        | StepData::Checklist(None)
        | StepData::Nothing => {}
    }
    Ok(())
}

/// What a save did: the step and the fields it saved.
pub struct Saved {
    pub step: Step,
    pub saved_fields: Vec<String>,
}

/// Saves steps in one transaction after checking `If-Match`; `complete` marks each step done
/// (`Some(false)` marks it back in progress, `None` leaves its status). Returns the new
/// progress. A transaction Postgres refused because of a concurrent save is run again.
pub async fn save(
    state: &AppState,
    villa_id: Uuid,
    if_match: Option<i32>,
    steps: Vec<(Step, StepData)>,
    complete: Option<bool>,
    by: &str,
) -> Result<(Vec<Saved>, Progress), AppError> {
    let steps = &steps;
    retry_transient(|| async move {
        let mut tx = state.pool.begin().await?;
        progress::begin_write(&mut tx, villa_id, if_match).await?;
        let mut saved = Vec::new();
        for (step, data) in steps {
            write(&mut tx, villa_id, data).await?;
            if let Some(done) = complete {
                progress::set_step(&mut tx, villa_id, *step, done, by).await?;
            }
            saved.push(Saved {
                step: *step,
                saved_fields: data.saved_fields(),
            });
        }
        let progress = progress::get(&mut tx, villa_id).await?;
        tx.commit().await?;
        Ok((saved, progress))
    })
    .await
}

/// Saves one step (see [`save`]) and answers `{success, villaId, step, stepName, savedFields,
/// progress, message, timestamp}` with the new progress `ETag`.
pub async fn save_one(
    state: &AppState,
    villa_id: Uuid,
    if_match: Option<i32>,
    step: (Step, StepData),
    complete: Option<bool>,
    by: &str,
    message: &str,
) -> Result<super::Reply, AppError> {
    let (mut saved, progress) = save(state, villa_id, if_match, vec![step], complete, by).await?;
    let saved = saved.remove(0);
    let etag = progress.etag();
    Ok(super::Reply::of(super::bodies::StepSaved {
        villa_id,
        step: saved.step.number(),
        step_name: saved.step.summary_name(),
        saved_fields: saved.saved_fields,
        progress,
        message: message.to_owned(),
    })
    .etag(etag))
}

/// Reads a step number from a body or path value (1 to 10).
pub fn step_number(raw: Option<&Value>, field: &str, problems: &mut Problems) -> Option<Step> {
    let n = match raw {
        None | Some(Value::Null) => {
            problems.push(field, "required", format!("{field} is required (1 to 10)"));
            return None;
        }
        Some(Value::Number(n)) => n.as_i64(),
        Some(Value::String(s)) => s.trim().parse().ok(),
        Some(_) => None,
    };
    let step = n.and_then(Step::from_number);
    if step.is_none() {
        problems.push(
            field,
            "out_of_range",
            format!("{field} must be a whole number from 1 to 10"),
        );
    }
    step
}

/// The step's data from the body's `data` member (an object; absent means no data), checked as
/// `step`'s, with its fields reported as `data.<field>`.
pub fn parse_data_member(
    state: &AppState,
    step: Option<Step>,
    body: &Object,
    problems: &mut Problems,
) -> Option<(Step, StepData)> {
    let empty = Object::new();
    let data = match body.get("data") {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(m)) => m,
        Some(_) => {
            problems.push("data", "invalid_type", "data must be an object");
            &empty
        }
    };
    step.map(|s| (s, parse(state, s, data, "data.", problems)))
}
