//! Why an attempt stopped ([`Failure`]), and what that makes of the job: failed at once, or tried
//! again with its backoff.

use crate::{JobError, pms::client::PmsError};

/// Why an attempt stopped.
#[derive(Debug, thiserror::Error)]
pub(super) enum Failure {
    #[error(transparent)]
    Pms(#[from] PmsError),
    #[error(transparent)]
    Domain(#[from] domain::Error),
    /// The run is no longer this attempt's: another attempt took it over (this one's lease
    /// lapsed), or it finished. Nothing of the page at hand was kept.
    #[error("another worker took over this run")]
    TakenOver,
    /// Every page is stored but the reporting cache still holds answers from before the sync:
    /// the run must not read COMPLETED yet (a client seeing it would then read older data).
    #[error("the reporting cache was not invalidated: {0}")]
    CacheNotInvalidated(String),
    /// A task of the attempt (a page's request or its transaction) panicked or was stopped.
    #[error("a task of the sync stopped: {0}")]
    Task(#[from] tokio::task::JoinError),
    /// The page sent before this one was not stored, so this one was not either (it may not
    /// pass it). The failure of that page is the one reported.
    #[error("the page before this one was not stored")]
    PageBeforeLost,
}

impl From<sqlx::Error> for Failure {
    fn from(e: sqlx::Error) -> Self {
        Failure::Domain(e.into())
    }
}

impl Failure {
    /// Refused credentials fail the run at once (no attempt can succeed until someone changes
    /// them); the PMS or the database being away is tried again with the job's backoff.
    pub(super) fn into_job_error(self) -> JobError {
        match self {
            Failure::Pms(e @ (PmsError::Unauthorized(_) | PmsError::NotConfigured)) => {
                JobError::fatal(e.to_string())
            }
            Failure::Pms(e) => JobError::retry(e.to_string()),
            Failure::Domain(e) => JobError::from(e),
            Failure::TakenOver => JobError::retry(Failure::TakenOver.to_string()),
            Failure::CacheNotInvalidated(_) | Failure::Task(_) | Failure::PageBeforeLost => {
                JobError::retry(self.to_string())
            }
        }
    }
}
