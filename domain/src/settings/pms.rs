//! The property-management system the reporting sync reads (`PMS_*`).

use std::{fmt, time::Duration};

use super::env::Env;

/// The property-management system: Hostaway's public API v1, or anything that speaks it (the
/// development fake). Without credentials the PMS is not configured: the reporting health says
/// so, a sync trigger is refused and the scheduler enqueues no sync. (How often the scheduler
/// syncs, `PMS_SYNC_INTERVAL_SECS`, is declared beside the job: `jobs::Periodic`.)
#[derive(Debug, Clone)]
pub struct PmsSettings {
    /// `PMS_BASE_URL` (default `https://api.hostaway.com/v1`), without a trailing `/`.
    pub base_url: String,
    /// `PMS_CLIENT_ID` (the account id) and `PMS_CLIENT_SECRET` (the API key): both or neither.
    pub credentials: Option<PmsCredentials>,
    /// `PMS_RATE_LIMIT` (default 15): requests per window that every worker together may send;
    /// 0 lifts the limit (a test PMS without one).
    pub rate_limit: u32,
    /// `PMS_RATE_WINDOW_SECS` (default 10): the window of `rate_limit`.
    pub rate_window: Duration,
    /// `PMS_PAGE_SIZE` (default 100, 1 to 1000): records asked for per request.
    pub page_size: u32,
    /// `PMS_SYNC_MARGIN_SECS` (default 3600): an incremental sync asks for the activity since the
    /// last completed sync started, less this much, so that clocks that disagree lose nothing.
    pub sync_margin: Duration,
    /// `PMS_MAX_RETRIES` (default 5): retries of one request after a 429, a 5xx or a network
    /// failure before the sync's attempt fails.
    pub max_retries: u32,
    /// `PMS_RETRY_BASE_MS` (default 1000): the first backoff; each retry doubles it.
    pub retry_base: Duration,
    /// `PMS_TIMEOUT_SECS` (default 30): the longest one request may take.
    pub request_timeout: Duration,
    /// `PMS_WEBHOOK_USER` and `PMS_WEBHOOK_PASSWORD`: the HTTP Basic credentials the PMS's
    /// webhooks send (both or neither). Without them `POST /reporting/webhooks/hostaway` is
    /// absent (404).
    pub webhook: Option<WebhookCredentials>,
}

/// What a webhook delivery must authenticate with.
#[derive(Clone, PartialEq, Eq)]
pub struct WebhookCredentials {
    pub user: String,
    pub password: String,
}

/// The password never appears in a log line or a message.
impl std::fmt::Debug for WebhookCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookCredentials")
            .field("user", &self.user)
            .finish_non_exhaustive()
    }
}

impl PmsSettings {
    pub const DEFAULT_BASE_URL: &'static str = "https://api.hostaway.com/v1";

    pub fn is_configured(&self) -> bool {
        self.credentials.is_some()
    }
}

/// Not configured, with the defaults above.
impl Default for PmsSettings {
    fn default() -> Self {
        Self {
            base_url: Self::DEFAULT_BASE_URL.to_owned(),
            credentials: None,
            webhook: None,
            rate_limit: 15,
            rate_window: Duration::from_secs(10),
            page_size: 100,
            sync_margin: Duration::from_secs(3600),
            max_retries: 5,
            retry_base: Duration::from_millis(1000),
            request_timeout: Duration::from_secs(30),
        }
    }
}

/// The account the platform reads the PMS as.
#[derive(Clone, PartialEq, Eq)]
pub struct PmsCredentials {
    /// Hostaway's account id.
    pub client_id: String,
    /// The API key: never logged.
    pub client_secret: String,
}

impl fmt::Debug for PmsCredentials {
    // Written by hand so that the secret can never reach a log line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PmsCredentials")
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

/// The `PMS_*` settings; problems go to `env` like every other setting's.
pub(super) fn pms_settings(env: &mut Env<'_>) -> PmsSettings {
    let defaults = PmsSettings::default();
    env.record("PMS_BASE_URL", &defaults.base_url);
    let base_url = match env.raw("PMS_BASE_URL") {
        None => defaults.base_url,
        Some(url) => {
            if !(url.starts_with("https://") || url.starts_with("http://")) {
                env.problems.push(format!(
                    "PMS_BASE_URL must be an http(s) address such as {}, got {url:?}",
                    PmsSettings::DEFAULT_BASE_URL
                ));
            }
            url.trim_end_matches('/').to_owned()
        }
    };
    // The secret's value is never repeated in a message.
    let credentials = match (env.raw("PMS_CLIENT_ID"), env.raw("PMS_CLIENT_SECRET")) {
        (Some(client_id), Some(client_secret)) => Some(PmsCredentials {
            client_id,
            client_secret,
        }),
        (None, None) => None,
        (Some(_), None) => {
            env.problems
                .push("PMS_CLIENT_SECRET is required when PMS_CLIENT_ID is set".into());
            None
        }
        (None, Some(_)) => {
            env.problems
                .push("PMS_CLIENT_ID is required when PMS_CLIENT_SECRET is set".into());
            None
        }
    };
    let rate_limit = env.parsed(
        "PMS_RATE_LIMIT",
        defaults.rate_limit,
        "a whole number of requests (0 for no limit)",
    );
    let rate_window_secs = env.parsed(
        "PMS_RATE_WINDOW_SECS",
        defaults.rate_window.as_secs(),
        "a whole number of seconds",
    );
    let page_size = env.parsed("PMS_PAGE_SIZE", defaults.page_size, "a whole number");
    let sync_margin_secs = env.parsed(
        "PMS_SYNC_MARGIN_SECS",
        defaults.sync_margin.as_secs(),
        "a whole number of seconds",
    );
    let max_retries = env.parsed("PMS_MAX_RETRIES", defaults.max_retries, "a whole number");
    let retry_base_ms = env.parsed(
        "PMS_RETRY_BASE_MS",
        u64::try_from(defaults.retry_base.as_millis()).unwrap_or(1000),
        "a whole number of milliseconds",
    );
    let timeout_secs = env.parsed(
        "PMS_TIMEOUT_SECS",
        defaults.request_timeout.as_secs(),
        "a whole number of seconds",
    );
    if rate_window_secs == 0 {
        env.problems
            .push("PMS_RATE_WINDOW_SECS must be at least 1".into());
    }
    if !(1..=1000).contains(&page_size) {
        env.problems.push(format!(
            "PMS_PAGE_SIZE must be from 1 to 1000, got {page_size}"
        ));
    }
    if timeout_secs == 0 {
        env.problems
            .push("PMS_TIMEOUT_SECS must be at least 1".into());
    }
    // The password's value is never repeated in a message.
    let webhook = match (env.raw("PMS_WEBHOOK_USER"), env.raw("PMS_WEBHOOK_PASSWORD")) {
        (Some(user), Some(password)) => {
            if credentials.is_none() {
                env.problems.push(
                    "PMS_WEBHOOK_USER needs PMS_CLIENT_ID: a delivery must name that account"
                        .into(),
                );
            }
            if password.chars().count() < 12 {
                env.problems
                    .push("PMS_WEBHOOK_PASSWORD must be at least 12 characters".into());
            }
            Some(WebhookCredentials { user, password })
        }
        (None, None) => None,
        (Some(_), None) => {
            env.problems
                .push("PMS_WEBHOOK_PASSWORD is required when PMS_WEBHOOK_USER is set".into());
            None
        }
        (None, Some(_)) => {
            env.problems
                .push("PMS_WEBHOOK_USER is required when PMS_WEBHOOK_PASSWORD is set".into());
            None
        }
    };
    // Retries wait up to 30 s each: more than this many would hold a sync for hours.
    if max_retries > 100 {
        env.problems.push(format!(
            "PMS_MAX_RETRIES must be at most 100, got {max_retries}"
        ));
    }
    PmsSettings {
        base_url,
        credentials,
        rate_limit,
        rate_window: Duration::from_secs(rate_window_secs),
        page_size,
        sync_margin: Duration::from_secs(sync_margin_secs),
        max_retries,
        retry_base: Duration::from_millis(retry_base_ms),
        request_timeout: Duration::from_secs(timeout_secs),
        webhook,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::PmsCredentials;
    use crate::settings::{
        CoreSettings,
        test_support::{KEY, lookup},
    };

    #[test]
    fn the_pms_is_not_configured_by_default() {
        let core = CoreSettings::from_lookup(&lookup(&[("DATA_ENCRYPTION_KEY", KEY)])).unwrap();
        let pms = &core.pms;
        assert!(!pms.is_configured());
        assert_eq!(pms.base_url, "https://api.hostaway.com/v1");
        assert_eq!(pms.rate_limit, 15);
        assert_eq!(pms.rate_window, Duration::from_secs(10));
        assert_eq!(pms.page_size, 100);
        assert_eq!(pms.sync_margin, Duration::from_secs(3600));
        assert_eq!(pms.max_retries, 5);
        assert_eq!(pms.retry_base, Duration::from_millis(1000));
        assert_eq!(pms.request_timeout, Duration::from_secs(30));
        // Empty values, as compose passes an unset variable, are not set.
        let core = CoreSettings::from_lookup(&lookup(&[
            ("DATA_ENCRYPTION_KEY", KEY),
            ("PMS_CLIENT_ID", ""),
            ("PMS_CLIENT_SECRET", " "),
        ]))
        .unwrap();
        assert!(core.pms.credentials.is_none());
    }

    #[test]
    fn the_pms_settings_are_read_and_the_secret_never_shown() {
        let core = CoreSettings::from_lookup(&lookup(&[
            ("DATA_ENCRYPTION_KEY", KEY),
            ("PMS_BASE_URL", "http://127.0.0.1:8099/v1/"),
            ("PMS_CLIENT_ID", " 10450 "),
            ("PMS_CLIENT_SECRET", "s3cret-api-key"),
            ("PMS_RATE_LIMIT", "0"),
            ("PMS_RATE_WINDOW_SECS", "1"),
            ("PMS_PAGE_SIZE", "1000"),
            ("PMS_SYNC_MARGIN_SECS", "60"),
            ("PMS_MAX_RETRIES", "2"),
            ("PMS_RETRY_BASE_MS", "20"),
            ("PMS_TIMEOUT_SECS", "5"),
        ]))
        .unwrap();
        let pms = &core.pms;
        assert_eq!(pms.base_url, "http://127.0.0.1:8099/v1");
        assert_eq!(
            pms.credentials,
            Some(PmsCredentials {
                client_id: "10450".to_owned(),
                client_secret: "s3cret-api-key".to_owned(),
            })
        );
        assert_eq!(pms.rate_limit, 0);
        assert_eq!(pms.rate_window, Duration::from_secs(1));
        assert_eq!(pms.page_size, 1000);
        assert_eq!(pms.sync_margin, Duration::from_secs(60));
        assert_eq!(pms.max_retries, 2);
        assert_eq!(pms.retry_base, Duration::from_millis(20));
        assert_eq!(pms.request_timeout, Duration::from_secs(5));
        let shown = format!("{core:?} {pms:?}");
        assert!(shown.contains("10450"), "{shown}");
        assert!(!shown.contains("s3cret"), "{shown}");
    }

    #[test]
    fn pms_problems_name_their_variables() {
        fn err(vars: &[(&str, &str)]) -> String {
            let mut all: Vec<(&str, &str)> = vec![("DATA_ENCRYPTION_KEY", KEY)];
            all.extend_from_slice(vars);
            CoreSettings::from_lookup(&lookup(&all))
                .unwrap_err()
                .to_string()
        }
        let only_id = err(&[("PMS_CLIENT_ID", "10450")]);
        assert!(
            only_id.contains("PMS_CLIENT_SECRET is required when PMS_CLIENT_ID is set"),
            "{only_id}"
        );
        let only_secret = err(&[("PMS_CLIENT_SECRET", "s3cret-api-key")]);
        assert!(
            only_secret.contains("PMS_CLIENT_ID is required when PMS_CLIENT_SECRET is set"),
            "{only_secret}"
        );
        assert!(!only_secret.contains("s3cret"), "{only_secret}");
        let malformed = err(&[
            ("PMS_BASE_URL", "api.hostaway.com/v1"),
            ("PMS_RATE_LIMIT", "fast"),
            ("PMS_RATE_WINDOW_SECS", "0"),
            ("PMS_PAGE_SIZE", "1001"),
            ("PMS_SYNC_MARGIN_SECS", "1h"),
            ("PMS_MAX_RETRIES", "-1"),
            ("PMS_RETRY_BASE_MS", "1s"),
            ("PMS_TIMEOUT_SECS", "0"),
        ]);
        for expected in [
            "PMS_BASE_URL must be an http(s) address",
            "PMS_RATE_LIMIT must be a whole number of requests",
            "PMS_RATE_WINDOW_SECS must be at least 1",
            "PMS_PAGE_SIZE must be from 1 to 1000, got 1001",
            "PMS_SYNC_MARGIN_SECS must be a whole number of seconds",
            "PMS_MAX_RETRIES must be a whole number",
            "PMS_RETRY_BASE_MS must be a whole number of milliseconds",
            "PMS_TIMEOUT_SECS must be at least 1",
        ] {
            assert!(
                malformed.contains(expected),
                "{expected:?} not in: {malformed}"
            );
        }
        assert!(err(&[("PMS_PAGE_SIZE", "0")]).contains("PMS_PAGE_SIZE must be from 1 to 1000"));
    }
}
