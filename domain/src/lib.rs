//! What every process of the platform shares: settings, the database pool and migrations, the
//! entities and their SQL, field encryption, and the error type those return. No HTTP framework
//! and no queue library here: `api` and `workers` build on this.
//!
//! The surfaces' records and their SQL, one folder per surface, as `api/src/<surface>/`:
//! [`onboarding`] (the wizard, its dashboard and facilities checklist), [`management`] (the villa
//! register every other surface hangs its records on: villas, owners, staff, photos, documents),
//! [`maintenance`], [`inventory`] and [`reporting`].
//!
//! What the surfaces share: [`record`] (partial records described by field tables),
//! [`pagination`], [`error`], [`uploads`] and [`media`] (what an upload must be), [`storage`] (the
//! document store), [`job_store`] (the job rows every queue runs from), [`settings`], [`db`],
//! [`crypto`], [`clock`] (the company's day), [`batch`] (request batching), [`remote`] (clients of
//! services that are not ours), [`metrics`], [`trace`] and [`process`].

// The surfaces.
pub mod inventory;
pub mod maintenance;
pub mod management;
pub mod onboarding;
pub mod reporting;

// What they share.
pub mod batch;
pub mod clock;
pub mod crypto;
pub mod db;
pub mod error;
pub mod job_store;
pub mod media;
pub mod metrics;
pub mod pagination;
pub mod process;
pub mod record;
pub mod remote;
pub mod settings;
pub mod storage;
pub mod trace;
pub mod uploads;

pub use db::MIGRATOR;
pub use error::{Error, FieldError, Problems, Refusal, Result, on_refusal, on_unique_violation};
