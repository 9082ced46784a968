//! Settings of the HTTP API only: its port, how tokens are verified (`AUTH_*`), the origins
//! allowed (`CORS_ORIGINS`) and the limits of a request.

use std::time::Duration;

use super::env::{Env, Lookup, SettingsError, process_env};

/// Settings of the HTTP API only.
#[derive(Debug, Clone)]
pub struct ApiSettings {
    pub port: u16,
    pub auth: AuthSettings,
    /// `None` means any origin (`*`), allowed only in development.
    pub cors_origins: Option<Vec<String>>,
    pub body_limit_bytes: usize,
    pub request_timeout: Duration,
    /// Largest file accepted by the upload routes, decoded (`UPLOAD_MAX_BYTES`, default 25 MB).
    pub upload_max_bytes: usize,
    /// Requests slower than this are kept in the monitoring's slow list (`SLOW_REQUEST_MS`,
    /// default 1000).
    pub slow_request: Duration,
}

#[derive(Debug, Clone)]
pub struct AuthSettings {
    pub jwks_url: String,
    pub issuer: String,
    pub audience: String,
    pub roles_claim: String,
}

pub const DEV_ISSUER: &str = "villa-dev";
pub const DEV_AUDIENCE: &str = "villa-platform";

impl ApiSettings {
    pub fn from_env() -> Result<Self, SettingsError> {
        Self::from_lookup(&process_env)
    }

    pub fn from_lookup(lookup: Lookup<'_>) -> Result<Self, SettingsError> {
        let (_, mut env) = Env::open(lookup)?;
        let api = Self::read(&mut env);
        env.finish()?;
        Ok(api)
    }

    /// Reads every variable, in a fixed order: the order the problems are named in.
    pub(super) fn read(env: &mut Env<'_>) -> Self {
        let port = env.parsed("PORT", 8080u16, "a port number");
        let auth = AuthSettings {
            // Development verifies tokens against the API's own development key (served at
            // /dev/jwks.json, minted by `villa-api mint-token`); production names its provider.
            jwks_url: env.required("AUTH_JWKS_URL", || {
                format!("http://127.0.0.1:{port}/dev/jwks.json")
            }),
            issuer: env.required("AUTH_ISSUER", || DEV_ISSUER.to_owned()),
            audience: env.required("AUTH_AUDIENCE", || DEV_AUDIENCE.to_owned()),
            roles_claim: env.parsed("AUTH_ROLES_CLAIM", "roles".to_owned(), "a claim name"),
        };
        if env.production && !auth.jwks_url.is_empty() && !auth.jwks_url.starts_with("http") {
            env.problems
                .push("AUTH_JWKS_URL must be an http(s) address".into());
        }
        let cors_origins = match env.raw("CORS_ORIGINS") {
            Some(v) if v == "*" && env.production => {
                env.problems
                    .push("CORS_ORIGINS may not be * in production; list the origins".into());
                None
            }
            Some(v) if v == "*" => None,
            Some(v) => Some(
                v.split(',')
                    .map(|o| o.trim().trim_end_matches('/').to_owned())
                    .filter(|o| !o.is_empty())
                    .collect(),
            ),
            None if env.production => {
                env.problems
                    .push("CORS_ORIGINS is required in production".into());
                None
            }
            None => None,
        };
        // 25 MB files arrive base64-encoded inside JSON: 4/3 of the size plus the other fields.
        let body_limit_bytes = env.parsed(
            "BODY_LIMIT_BYTES",
            40 * 1024 * 1024usize,
            "a number of bytes",
        );
        let request_timeout = Duration::from_secs(env.parsed(
            "REQUEST_TIMEOUT_SECS",
            60u64,
            "a whole number of seconds",
        ));
        let upload_max_bytes = env.parsed(
            "UPLOAD_MAX_BYTES",
            25 * 1024 * 1024usize,
            "a number of bytes",
        );
        let slow_request = Duration::from_millis(env.parsed(
            "SLOW_REQUEST_MS",
            1000u64,
            "a whole number of milliseconds",
        ));
        Self {
            port,
            auth,
            cors_origins,
            body_limit_bytes,
            request_timeout,
            upload_max_bytes,
            slow_request,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ApiSettings;
    use crate::settings::{
        AppEnv, CoreSettings,
        test_support::{KEY, lookup},
    };

    #[test]
    fn development_has_defaults_and_allows_any_origin() {
        let env = lookup(&[("DATA_ENCRYPTION_KEY", KEY)]);
        let core = CoreSettings::from_lookup(&env).unwrap();
        assert_eq!(core.app_env, AppEnv::Development);
        let api = ApiSettings::from_lookup(&env).unwrap();
        assert!(api.cors_origins.is_none());
        assert_eq!(api.auth.jwks_url, "http://127.0.0.1:8080/dev/jwks.json");
    }
}
