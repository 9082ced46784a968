//! Black-box integration tests against real Postgres and Redis. One binary (faster to link);
//! one module per concern.

mod admin_jobs;
mod auth;
mod bounded_input;
mod checklists;
mod document_jobs;
mod health;
mod http_errors;
mod inventory;
mod inventory_alerts;
mod maintenance;
mod management_files;
mod management_onboarding;
mod management_people;
mod management_villas;
mod metrics;
mod onboarding;
mod pipeline;
mod planned_maintenance;
mod reporting_dashboard;
mod reporting_exports;
mod reporting_reads;
mod reporting_sync;
mod storage_contract;
mod task_rules;
mod turnovers;
mod uploads;
