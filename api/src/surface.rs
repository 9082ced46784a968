//! The five API surfaces (ARCHITECTURE.md, "API surfaces") and the platform's own routes. A
//! response's surface is decided by its path prefix, so every failure, including the framework's
//! own (unknown route, wrong method, body too large), is rendered in the caller's shape.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    /// `/management`: `{error: {code, message, details: [{field, message}]}}`
    Management,
    /// `/api`: `{statusCode, statusMessage, data: {errors: [{field, message, code}]}}`
    Onboarding,
    /// `/maintenance`: `{error: {code, message, statusCode}}`
    Maintenance,
    /// `/inventory`: `{error: {code, message, details: {}}}`
    Inventory,
    /// `/reporting`: `{error: {code, message, retryAfter}}`
    Reporting,
    /// Health checks, `/admin`, `/openapi.json`, `/dev`: rendered like management.
    Platform,
}

impl Surface {
    pub fn of_path(path: &str) -> Surface {
        let first = path.trim_start_matches('/').split('/').next().unwrap_or("");
        match first {
            "management" => Surface::Management,
            "api" => Surface::Onboarding,
            "maintenance" => Surface::Maintenance,
            "inventory" => Surface::Inventory,
            "reporting" => Surface::Reporting,
            _ => Surface::Platform,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes() {
        assert_eq!(Surface::of_path("/management/villas"), Surface::Management);
        assert_eq!(Surface::of_path("/api/health"), Surface::Onboarding);
        assert_eq!(Surface::of_path("/apis"), Surface::Platform);
        assert_eq!(Surface::of_path("/inventory"), Surface::Inventory);
        assert_eq!(Surface::of_path("/"), Surface::Platform);
    }
}
