//! Prometheus metrics of a process (`METRICS_*`).

use std::{fmt, time::Duration};

use super::env::Env;

/// Prometheus metrics of a process (docs/operations.md).
#[derive(Clone, PartialEq, Eq)]
pub struct MetricsSettings {
    /// `METRICS_ENABLED` (default true): off, nothing is recorded and no `/metrics` answers.
    pub enabled: bool,
    /// `METRICS_PORT`: where a worker or the scheduler serves `/metrics` (unset: nowhere; the
    /// API serves it on its own port).
    pub port: Option<u16>,
    /// `METRICS_TOKEN`: the bearer token a scraper must send. Without it `/metrics` is open in
    /// development and closed in production.
    pub token: Option<String>,
    /// `METRICS_QUEUE_REFRESH_SECS` (1 to 300, default 10): how long the queue gauges read from
    /// Postgres are kept, whatever the number of scrapers.
    pub queue_refresh: Duration,
}

impl MetricsSettings {
    pub const DEFAULT_QUEUE_REFRESH_SECS: u64 = 10;
}

impl Default for MetricsSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            port: None,
            token: None,
            queue_refresh: Duration::from_secs(Self::DEFAULT_QUEUE_REFRESH_SECS),
        }
    }
}

/// The token never appears in a log line or a message.
impl fmt::Debug for MetricsSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MetricsSettings")
            .field("enabled", &self.enabled)
            .field("port", &self.port)
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .field("queue_refresh", &self.queue_refresh)
            .finish()
    }
}

/// `METRICS_*`; problems go to `env` like every other setting's.
pub(super) fn metrics_settings(env: &mut Env<'_>) -> MetricsSettings {
    let default = MetricsSettings::default();
    env.record("METRICS_ENABLED", default.enabled);
    let enabled = match env.raw("METRICS_ENABLED").as_deref() {
        None => default.enabled,
        Some("true" | "1" | "yes") => true,
        Some("false" | "0" | "no") => false,
        Some(other) => {
            env.problems.push(format!(
                "METRICS_ENABLED must be true or false, got {other:?}"
            ));
            true
        }
    };
    let port = env
        .raw("METRICS_PORT")
        .and_then(|raw| match raw.parse::<u16>() {
            Ok(port) if port > 0 => Some(port),
            _ => {
                env.problems.push(format!(
                    "METRICS_PORT must be a port number (1 to 65535), got {raw:?}"
                ));
                None
            }
        });
    // The token's value is never repeated in a message.
    let token = env.raw("METRICS_TOKEN");
    if token.as_ref().is_some_and(|t| t.len() < 16) {
        env.problems
            .push("METRICS_TOKEN must be at least 16 characters".into());
    }
    let secs = env.parsed(
        "METRICS_QUEUE_REFRESH_SECS",
        MetricsSettings::DEFAULT_QUEUE_REFRESH_SECS,
        "a whole number of seconds",
    );
    if !(1..=300).contains(&secs) {
        env.problems.push(format!(
            "METRICS_QUEUE_REFRESH_SECS must be 1 to 300 seconds, got {secs}"
        ));
    }
    MetricsSettings {
        enabled,
        port,
        token,
        queue_refresh: Duration::from_secs(secs.clamp(1, 300)),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::MetricsSettings;
    use crate::settings::test_support::core_with;

    #[test]
    fn metrics_settings_are_read_and_the_token_never_shown() {
        let core = core_with(&[]).unwrap();
        assert_eq!(core.metrics, MetricsSettings::default());
        let core = core_with(&[
            ("METRICS_ENABLED", "false"),
            ("METRICS_PORT", "9464"),
            ("METRICS_TOKEN", "s3cret-metrics-token"),
            ("METRICS_QUEUE_REFRESH_SECS", "30"),
        ])
        .unwrap();
        assert!(!core.metrics.enabled);
        assert_eq!(core.metrics.port, Some(9464));
        assert_eq!(core.metrics.queue_refresh, Duration::from_secs(30));
        assert!(!format!("{core:?}").contains("s3cret"));
        let refused = core_with(&[
            ("METRICS_ENABLED", "maybe"),
            ("METRICS_PORT", "0"),
            ("METRICS_TOKEN", "short"),
            ("METRICS_QUEUE_REFRESH_SECS", "0"),
        ])
        .unwrap_err();
        for expected in [
            "METRICS_ENABLED must be true or false",
            "METRICS_PORT must be a port number",
            "METRICS_TOKEN must be at least 16 characters",
            "METRICS_QUEUE_REFRESH_SECS must be 1 to 300 seconds",
        ] {
            assert!(refused.contains(expected), "{expected:?} not in: {refused}");
        }
        assert!(!refused.contains("short"), "{refused}");
    }
}
