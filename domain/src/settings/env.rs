//! The reader of the environment, which every concern's parsing uses: [`Env`] reads one variable
//! at a time and collects every problem, so one start names all of them; and the settings read
//! outside [`CoreSettings`](super::CoreSettings): a periodic job's interval
//! ([`seconds_setting`]) and development's folder ([`dev_dir`]).

use std::{fmt, path::PathBuf, str::FromStr, time::Duration};

/// `APP_ENV`: development has local defaults for what production requires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppEnv {
    Development,
    Production,
}

impl AppEnv {
    pub fn is_development(self) -> bool {
        self == AppEnv::Development
    }
}

/// Reads variables and collects every problem, so one start names all of them.
pub(super) struct Env<'a> {
    lookup: Lookup<'a>,
    pub(super) production: bool,
    pub(super) problems: Vec<String>,
    /// Every setting's default, `(name, default)`, as the settings are read: kept only when
    /// [`defaults`](super::defaults) lists them (`None` otherwise).
    pub(super) recorded: Option<Vec<(String, String)>>,
}

/// Where settings are read from: the process environment, or a map in tests.
pub type Lookup<'a> = &'a dyn Fn(&str) -> Option<String>;

pub(super) fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

impl<'a> Env<'a> {
    pub(super) fn open(lookup: Lookup<'a>) -> Result<(AppEnv, Self), SettingsError> {
        let app_env = app_env(lookup)?;
        let env = Env {
            lookup,
            production: app_env == AppEnv::Production,
            problems: Vec::new(),
            recorded: None,
        };
        Ok((app_env, env))
    }

    pub(super) fn raw(&self, name: &str) -> Option<String> {
        (self.lookup)(name)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    }

    /// A required setting: in development `dev_default` is used when it is absent.
    pub(super) fn required(&mut self, name: &str, dev_default: impl FnOnce() -> String) -> String {
        match self.raw(name) {
            Some(v) => {
                if self.recorded.is_some() {
                    self.record(name, dev_default());
                }
                v
            }
            None if !self.production => {
                let v = dev_default();
                self.record(name, &v);
                v
            }
            None => {
                self.problems
                    .push(format!("{name} is required in production"));
                String::new()
            }
        }
    }

    /// A setting with a default that holds in every environment.
    pub(super) fn parsed<T: FromStr + fmt::Display>(
        &mut self,
        name: &str,
        default: T,
        what: &str,
    ) -> T {
        self.record(name, &default);
        match self.raw(name) {
            None => default,
            Some(v) => v.parse().unwrap_or_else(|_| {
                self.problems
                    .push(format!("{name} must be {what}, got {v:?}"));
                default
            }),
        }
    }

    /// Notes `default` as the default of `name` when [`defaults`](super::defaults) lists them
    /// (nothing otherwise): [`required`](Self::required) and [`parsed`](Self::parsed) note
    /// theirs; a setting read with [`raw`](Self::raw) whose default is one plain value calls this.
    pub(super) fn record(&mut self, name: &str, default: impl fmt::Display) {
        if let Some(recorded) = &mut self.recorded {
            recorded.push((name.to_owned(), default.to_string()));
        }
    }

    /// A day count that reaches into date arithmetic, bounded so that a typo cannot push a date
    /// past what Postgres keeps (every tick would fail) or enumerate years of occurrences.
    pub(super) fn days_at_most(&mut self, name: &str, days: u32, max: u32) {
        if days > max {
            self.problems
                .push(format!("{name} must be at most {max} days, got {days}"));
        }
    }

    pub(super) fn finish(self) -> Result<(), SettingsError> {
        if self.problems.is_empty() {
            Ok(())
        } else {
            Err(SettingsError(self.problems))
        }
    }
}

#[derive(Debug)]
pub struct SettingsError(pub Vec<String>);

impl fmt::Display for SettingsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid configuration: {}", self.0.join("; "))
    }
}

impl std::error::Error for SettingsError {}

/// `APP_ENV` when it is not set.
pub(super) const DEFAULT_APP_ENV: &str = "development";

pub(super) fn app_env(lookup: Lookup<'_>) -> Result<AppEnv, SettingsError> {
    match lookup("APP_ENV")
        .as_deref()
        .map_or(DEFAULT_APP_ENV, str::trim)
    {
        "development" => Ok(AppEnv::Development),
        "production" => Ok(AppEnv::Production),
        other => Err(SettingsError(vec![format!(
            "APP_ENV must be development or production, got {other:?}"
        )])),
    }
}

/// A duration in whole seconds from the variable `name` (`default` when it is not set, at least
/// one second), for a setting declared beside the code that uses it rather than in
/// [`CoreSettings`](super::CoreSettings): a periodic job's interval (`jobs::Periodic`). A
/// malformed value is an error naming the variable, in every environment, as for every other
/// setting.
pub fn seconds_setting(
    lookup: Lookup<'_>,
    name: &str,
    default: Duration,
) -> Result<Duration, SettingsError> {
    let (_, mut env) = Env::open(lookup)?;
    let secs = env.parsed(name, default.as_secs(), "a whole number of seconds");
    env.finish()?;
    Ok(Duration::from_secs(secs.max(1)))
}

/// `DEV_DIR` when it is not set.
pub(super) const DEFAULT_DEV_DIR: &str = ".dev";

/// Where development keeps what it generates (keys, stored files): `.dev/` in the working folder.
pub fn dev_dir() -> PathBuf {
    PathBuf::from(process_env("DEV_DIR").unwrap_or_else(|| DEFAULT_DEV_DIR.to_owned()))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{SettingsError, seconds_setting};
    use crate::settings::test_support::lookup;

    fn read_seconds(vars: &[(&str, &str)]) -> Result<Duration, SettingsError> {
        seconds_setting(
            &lookup(vars),
            "PM_GENERATE_INTERVAL_SECS",
            Duration::from_secs(900),
        )
    }

    #[test]
    fn a_setting_in_seconds_names_its_variable_when_malformed() {
        assert_eq!(read_seconds(&[]).unwrap(), Duration::from_secs(900));
        assert_eq!(
            read_seconds(&[("PM_GENERATE_INTERVAL_SECS", " 60 ")]).unwrap(),
            Duration::from_secs(60)
        );
        assert_eq!(
            read_seconds(&[("PM_GENERATE_INTERVAL_SECS", "0")]).unwrap(),
            Duration::from_secs(1)
        );
        let err = read_seconds(&[
            ("APP_ENV", "production"),
            ("PM_GENERATE_INTERVAL_SECS", "15m"),
        ])
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("PM_GENERATE_INTERVAL_SECS must be a whole number of seconds"),
            "{err}"
        );
    }
}
