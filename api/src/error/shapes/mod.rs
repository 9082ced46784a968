//! The error body of each surface (ARCHITECTURE.md table), one module per shape, with the
//! schema the OpenAPI document gives it (`openapi::finish`: every error status of an operation
//! answers its surface's schema).

mod inventory;
mod maintenance;
mod management;
mod onboarding;
mod reporting;

use serde_json::Value;

use super::ErrorInfo;
use crate::surface::Surface;

/// The error body of `surface`, with the error's extra members where the shape keeps them.
pub fn body_for(surface: Surface, info: &ErrorInfo) -> Value {
    let mut body = match surface {
        Surface::Management | Surface::Platform => management::body(surface, info),
        Surface::Onboarding => onboarding::body(info),
        Surface::Maintenance => maintenance::body(info),
        Surface::Inventory => inventory::body(info),
        Surface::Reporting => reporting::body(info),
    };
    if let Some(Value::Object(extra)) = &info.extra {
        let target = match surface {
            Surface::Onboarding => &mut body["data"],
            Surface::Inventory => &mut body["error"]["details"],
            _ => &mut body["error"],
        };
        if let Value::Object(map) = target {
            map.extend(extra.clone());
        }
    }
    body
}

/// The error bodies as [`body_for`] writes them, for the OpenAPI document.
pub mod schema {
    pub use super::inventory::{InventoryError, InventoryErrorBody, InventoryErrorDetails};
    pub use super::maintenance::{MaintenanceError, MaintenanceErrorBody};
    pub use super::management::{FieldProblem, ManagementError, ManagementErrorBody};
    pub use super::onboarding::{OnboardingError, OnboardingErrorData, OnboardingFieldProblem};
    pub use super::reporting::{ReportingError, ReportingErrorBody};
}
