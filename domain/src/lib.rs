//! What every process of the platform shares: settings, the database pool and migrations, the
//! entities and their SQL, field encryption, and the error type those return. No HTTP framework
//! and no queue library here: `api` and `workers` build on this.

pub mod batch;
pub mod clock;
pub mod crypto;
pub mod dashboard;
pub mod db;
pub mod documents;
pub mod error;
pub mod facilities;
pub mod inventory;
pub mod job_store;
pub mod maintenance;
pub mod media;
pub mod metrics;
pub mod onboarding;
pub mod owners;
pub mod pagination;
pub mod photos;
pub mod process;
pub mod record;
pub mod remote;
pub mod reporting;
pub mod settings;
pub mod staff;
pub mod storage;
pub mod trace;
pub mod uploads;
pub mod villas;

pub use db::MIGRATOR;
pub use error::{Error, FieldError, Problems, Refusal, Result, on_refusal, on_unique_violation};
