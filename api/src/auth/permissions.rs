//! The one permission table. [`requirement`] says what a route needs, from its method and
//! matched path; [`grants`] says which role has it. Change access here and nowhere else.

use axum::http::Method;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    Admin,
    Manager,
    Staff,
    Viewer,
}

impl Role {
    pub const ALL: [Role; 4] = [Role::Admin, Role::Manager, Role::Staff, Role::Viewer];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Admin => "admin",
            Role::Manager => "manager",
            Role::Staff => "staff",
            Role::Viewer => "viewer",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        Self::ALL
            .into_iter()
            .find(|r| r.as_str().eq_ignore_ascii_case(s))
    }
}

/// What the data behind a route is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Area {
    /// Villas, owners, staff, documents, photos, OTA credentials (management surface).
    Villas,
    /// The onboarding wizard and its uploads (`/api`).
    Onboarding,
    Maintenance,
    Inventory,
    Reporting,
    /// Operators' routes: job queues, monitoring, internal docs.
    Platform,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
    Delete,
    /// Decisions above field work: cancelling work orders, adding maintenance templates, rating
    /// vendors, deciding what the storeroom holds (items, categories, locations). Managers and
    /// admins.
    Manage,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Requirement {
    /// Open to anyone: health checks, public photo bytes, the API description.
    Public,
    /// Any valid token.
    Authenticated,
    Permission(Area, Access),
}

impl Requirement {
    pub fn describe(self) -> String {
        match self {
            Requirement::Public | Requirement::Authenticated => "this route".into(),
            Requirement::Permission(area, access) => {
                format!("{access:?} access to {area:?}").to_lowercase()
            }
        }
    }
}

/// Who may do what. Staff are the people in the field (technicians, storekeepers): they record
/// maintenance and stock work but only read villas and reports.
pub fn grants(role: Role, area: Area, access: Access) -> bool {
    use Access::*;
    use Area::*;
    match role {
        Role::Admin => true,
        Role::Manager => area != Platform,
        Role::Staff => match area {
            Maintenance | Inventory => matches!(access, Read | Write),
            Villas | Onboarding | Reporting => access == Read,
            Platform => false,
        },
        Role::Viewer => area != Platform && access == Read,
    }
}

pub fn allows(roles: &[Role], requirement: Requirement) -> bool {
    match requirement {
        Requirement::Public | Requirement::Authenticated => true,
        Requirement::Permission(area, access) => roles.iter().any(|&r| grants(r, area, access)),
    }
}

/// Routes whose writes are management decisions ([`Access::Manage`]) rather than field work.
const MANAGED: &[(&str, &str)] = &[
    ("POST", "/maintenance/pmp/templates"),
    ("POST", "/maintenance/vendors/{id}/ratings"),
    // What work the calendar generates, for which villas and drawing what stock, is decided by
    // managers; staff carry out the work orders the rules make.
    ("POST", "/maintenance/task-rules"),
    ("PATCH", "/maintenance/task-rules/{id}"),
    ("POST", "/maintenance/task-rules/{id}/archive"),
    // Asking the owner for money, and speaking for the owner, are managers' calls.
    ("POST", "/maintenance/work-orders/{id}/approval-requests"),
    ("POST", "/maintenance/work-orders/{id}/approval"),
    // What the storeroom holds is decided by managers; staff record what happens to it
    // (movements, transfers, alerts).
    ("POST", "/inventory/items"),
    ("PATCH", "/inventory/items/{id}"),
    ("DELETE", "/inventory/items/{id}"),
    ("POST", "/inventory/categories"),
    ("POST", "/inventory/locations"),
];

/// POST routes that only read: what they start is made of data the caller may already read, so
/// read access is enough (a viewer may export what a viewer sees).
const READS: &[(&str, &str)] = &[
    // An export is a file of the reporting rows and figures the caller may read through the GET
    // routes; the only thing it writes is the job that builds the file, and the file expires.
    ("POST", "/reporting/export"),
];

/// Whether `roles` may cancel a work order (a status change through the update route, so the
/// route alone cannot say).
pub fn may_cancel_work_orders(roles: &[Role]) -> bool {
    allows(
        roles,
        Requirement::Permission(Area::Maintenance, Access::Manage),
    )
}

/// Routes open without a user's token (matched paths as registered). `/metrics` checks its
/// own (`METRICS_TOKEN`, `domain::metrics::check_token`): Prometheus holds no user's JWT.
const PUBLIC: &[&str] = &[
    "/api/health",
    "/healthz",
    "/readyz",
    "/metrics",
    "/openapi.json",
    "/dev/jwks.json",
    // Development sign-in (mounted only with APP_ENV=development): it is how a token is got.
    "/dev/token",
    "/api/photos-enhanced/public/{id}",
    "/api/photos-enhanced/thumbnail/{id}",
    "/reporting/health",
    // Hostaway's webhooks: HTTP Basic credentials of their own (`reporting::webhooks`).
    "/reporting/webhooks/hostaway",
    // The owner's approval page: the signed token in the path is the credential (`approvals`).
    "/approvals/{token}",
    "/approvals/{token}/photos/{photoId}",
];

/// Routes open to any valid token, whatever its roles.
const ANY_USER: &[&str] = &["/me"];

/// What the route `path` (as registered, e.g. `/management/villas/{id}`) needs for `method`.
pub fn requirement(method: &Method, path: &str) -> Requirement {
    if ANY_USER.contains(&path) {
        return Requirement::Authenticated;
    }
    if PUBLIC.contains(&path)
        || path.starts_with("/swagger-ui")
        || crate::console::is_console_route(path)
    {
        return Requirement::Public;
    }
    let access = if MANAGED.contains(&(method.as_str(), path)) {
        Access::Manage
    } else if READS.contains(&(method.as_str(), path)) {
        Access::Read
    } else if *method == Method::DELETE {
        Access::Delete
    } else if matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS) {
        Access::Read
    } else {
        Access::Write
    };
    let first = path.trim_start_matches('/').split('/').next().unwrap_or("");
    let area = match first {
        // The onboarding surface's internal routes are for operators only.
        "api" if path.starts_with("/api/docs/") || path.starts_with("/api/debug/") => {
            Area::Platform
        }
        "api" => Area::Onboarding,
        "management" => Area::Villas,
        "maintenance" => Area::Maintenance,
        "inventory" => Area::Inventory,
        "reporting" => Area::Reporting,
        _ => Area::Platform,
    };
    // Operators' routes need admin whatever the method.
    let access = if area == Area::Platform {
        Access::Write
    } else {
        access
    };
    Requirement::Permission(area, access)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table() {
        let get = Method::GET;
        let post = Method::POST;
        assert_eq!(requirement(&get, "/api/health"), Requirement::Public);
        assert_eq!(requirement(&get, "/metrics"), Requirement::Public);
        assert_eq!(
            requirement(&get, "/management/villas"),
            Requirement::Permission(Area::Villas, Access::Read)
        );
        assert_eq!(
            requirement(&Method::DELETE, "/management/villas/{id}"),
            Requirement::Permission(Area::Villas, Access::Delete)
        );
        assert_eq!(
            requirement(&get, "/api/docs/monitoring"),
            Requirement::Permission(Area::Platform, Access::Write)
        );
        assert!(allows(
            &[Role::Viewer],
            requirement(&get, "/management/villas")
        ));
        assert!(!allows(
            &[Role::Viewer],
            requirement(&post, "/management/villas")
        ));
        assert!(!allows(&[Role::Manager], requirement(&get, "/admin/jobs")));
        assert!(allows(&[Role::Admin], requirement(&get, "/admin/jobs")));
        assert!(allows(
            &[Role::Staff],
            requirement(&post, "/inventory/movements")
        ));
        assert!(!allows(
            &[Role::Staff],
            requirement(&post, "/management/villas")
        ));
        assert!(!allows(&[], requirement(&get, "/management/villas")));
    }

    /// Exporting reads: a viewer may export what it may read, and still not trigger a sync.
    #[test]
    fn posts_that_only_read() {
        let post = Method::POST;
        assert_eq!(
            requirement(&post, "/reporting/export"),
            Requirement::Permission(Area::Reporting, Access::Read)
        );
        assert_eq!(
            requirement(&post, "/reporting/sync/trigger"),
            Requirement::Permission(Area::Reporting, Access::Write)
        );
        for role in [Role::Viewer, Role::Staff, Role::Manager, Role::Admin] {
            assert!(
                allows(&[role], requirement(&post, "/reporting/export")),
                "{role:?}"
            );
            assert!(allows(
                &[role],
                requirement(&Method::GET, "/reporting/export/{exportId}/download")
            ));
        }
        assert!(!allows(
            &[Role::Viewer],
            requirement(&post, "/reporting/sync/trigger")
        ));
        assert!(!allows(&[], requirement(&post, "/reporting/export")));
        // Only the route named: any other POST of the surface stays a write.
        assert_eq!(
            requirement(&post, "/reporting/export/{exportId}"),
            Requirement::Permission(Area::Reporting, Access::Write)
        );
    }

    /// Task rules are read by every role and decided by managers and admins.
    #[test]
    fn task_rules_are_managed() {
        let writes = [
            (Method::POST, "/maintenance/task-rules"),
            (Method::PATCH, "/maintenance/task-rules/{id}"),
            (Method::POST, "/maintenance/task-rules/{id}/archive"),
        ];
        for (method, path) in &writes {
            let needed = requirement(method, path);
            assert_eq!(
                needed,
                Requirement::Permission(Area::Maintenance, Access::Manage),
                "{method} {path}"
            );
            assert!(!allows(&[Role::Staff], needed), "{method} {path}");
            assert!(!allows(&[Role::Viewer], needed), "{method} {path}");
            assert!(allows(&[Role::Manager], needed), "{method} {path}");
            assert!(allows(&[Role::Admin], needed), "{method} {path}");
        }
        for path in ["/maintenance/task-rules", "/maintenance/task-rules/{id}"] {
            for role in Role::ALL {
                assert!(allows(&[role], requirement(&Method::GET, path)), "{role:?}");
            }
        }
    }
}
