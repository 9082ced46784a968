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
    pub console: ConsoleSettings,
}

/// The web console the API serves at `/console` (`console/`, built by `scripts/console-build`).
#[derive(Debug, Clone)]
pub struct ConsoleSettings {
    /// The built console (`CONSOLE_DIR`, default `console/dist`, relative to the working
    /// directory: the repository's root under `scripts/run` and the Procfile).
    pub dir: std::path::PathBuf,
    /// Sign-in through the identity provider (`CONSOLE_OIDC_ISSUER` and
    /// `CONSOLE_OIDC_CLIENT_ID`, both or neither). Without it, development signs in by role and
    /// production asks for a token.
    pub oidc: Option<ConsoleOidc>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsoleOidc {
    /// The issuer as the provider names it: discovery reads
    /// `{issuer less a trailing /}/.well-known/openid-configuration`.
    pub issuer: String,
    pub client_id: String,
}

impl ConsoleOidc {
    /// The issuer's origin (scheme, host and port), which the console's Content-Security-Policy
    /// lets it fetch from (discovery and the token endpoint) and send its sign-in form to.
    pub fn origin(&self) -> &str {
        let after_scheme = self.issuer.find("://").map_or(0, |i| i + 3);
        let end = self.issuer[after_scheme..]
            .find('/')
            .map_or(self.issuer.len(), |i| after_scheme + i);
        &self.issuer[..end]
    }
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
        let console = ConsoleSettings {
            dir: env
                .parsed("CONSOLE_DIR", "console/dist".to_owned(), "a folder")
                .into(),
            oidc: console_oidc(env),
        };
        Self {
            port,
            auth,
            cors_origins,
            body_limit_bytes,
            request_timeout,
            upload_max_bytes,
            slow_request,
            console,
        }
    }
}

/// `CONSOLE_OIDC_ISSUER` and `CONSOLE_OIDC_CLIENT_ID`: both or neither; the issuer an http(s)
/// address whose text can go into a Content-Security-Policy (no spaces, quotes or `;`).
fn console_oidc(env: &mut Env<'_>) -> Option<ConsoleOidc> {
    let issuer = env.raw("CONSOLE_OIDC_ISSUER");
    let client_id = env.raw("CONSOLE_OIDC_CLIENT_ID");
    match (issuer, client_id) {
        (None, None) => None,
        (Some(issuer), Some(client_id)) => {
            // Kept as written: the discovery document's `issuer` must equal it exactly (Auth0's
            // ends with `/`), and discovery is read from it less a trailing `/`.
            let issuer = issuer.to_owned();
            let plain = issuer
                .chars()
                .all(|c| c.is_ascii_graphic() && !matches!(c, '\'' | '"' | ';' | ',' | '@'));
            let scheme = issuer.starts_with("https://") || issuer.starts_with("http://");
            // Tokens travel from it: plain http only to this machine, or in development.
            let loopback = ["http://127.0.0.1", "http://localhost", "http://[::1]"]
                .iter()
                .any(|prefix| {
                    issuer
                        .strip_prefix(prefix)
                        .is_some_and(|rest| rest.is_empty() || rest.starts_with([':', '/']))
                });
            if env.production && !issuer.starts_with("https://") && !loopback {
                env.problems.push(format!(
                    "CONSOLE_OIDC_ISSUER must be an https address in production (http only on loopback), got {issuer:?}"
                ));
                return None;
            }
            if !scheme || !plain || issuer.len() > 2048 {
                env.problems.push(format!(
                    "CONSOLE_OIDC_ISSUER must be an http(s) address without spaces, quotes, `;`, `,` or `@`, got {issuer:?}"
                ));
                return None;
            }
            if client_id.len() > 256 || client_id.chars().any(|c| c.is_control()) {
                env.problems.push(
                    "CONSOLE_OIDC_CLIENT_ID must be at most 256 characters, without control characters"
                        .into(),
                );
                return None;
            }
            Some(ConsoleOidc { issuer, client_id })
        }
        _ => {
            env.problems.push(
                "CONSOLE_OIDC_ISSUER and CONSOLE_OIDC_CLIENT_ID go together: set both or neither"
                    .into(),
            );
            None
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
        assert!(api.console.oidc.is_none());
        assert_eq!(api.console.dir, std::path::Path::new("console/dist"));
    }

    #[test]
    fn console_sign_in_needs_issuer_and_client_together() {
        let only_issuer = lookup(&[
            ("DATA_ENCRYPTION_KEY", KEY),
            (
                "CONSOLE_OIDC_ISSUER",
                "https://id.example.com/realms/villa/",
            ),
        ]);
        let problem = ApiSettings::from_lookup(&only_issuer)
            .unwrap_err()
            .to_string();
        assert!(problem.contains("set both or neither"), "{problem}");

        let both = lookup(&[
            ("DATA_ENCRYPTION_KEY", KEY),
            (
                "CONSOLE_OIDC_ISSUER",
                "https://id.example.com:8443/realms/villa/",
            ),
            ("CONSOLE_OIDC_CLIENT_ID", "villa-console"),
        ]);
        let oidc = ApiSettings::from_lookup(&both)
            .unwrap()
            .console
            .oidc
            .unwrap();
        assert_eq!(oidc.issuer, "https://id.example.com:8443/realms/villa/");
        assert_eq!(oidc.origin(), "https://id.example.com:8443");

        let injected = lookup(&[
            ("DATA_ENCRYPTION_KEY", KEY),
            (
                "CONSOLE_OIDC_ISSUER",
                "https://id.example.com; script-src *",
            ),
            ("CONSOLE_OIDC_CLIENT_ID", "villa-console"),
        ]);
        let problem = ApiSettings::from_lookup(&injected).unwrap_err().to_string();
        assert!(problem.contains("CONSOLE_OIDC_ISSUER must be"), "{problem}");

        // Production: https, or plain http to this machine only.
        let production = |issuer: &'static str| {
            ApiSettings::from_lookup(&lookup(&[
                ("APP_ENV", "production"),
                ("AUTH_JWKS_URL", "https://idp/jwks"),
                ("AUTH_ISSUER", "i"),
                ("AUTH_AUDIENCE", "a"),
                ("CORS_ORIGINS", "https://ops.example.com"),
                ("CONSOLE_OIDC_ISSUER", issuer),
                ("CONSOLE_OIDC_CLIENT_ID", "villa-console"),
            ]))
        };
        let problem = production("http://id.example.com").unwrap_err().to_string();
        assert!(problem.contains("must be an https address"), "{problem}");
        for fine in [
            "https://id.example.com",
            "http://127.0.0.1:8098",
            "http://localhost/realms/x",
        ] {
            let oidc = production(fine).unwrap().console.oidc;
            assert_eq!(oidc.unwrap().issuer, fine);
        }
        let problem = production("http://localhost.evil.com")
            .unwrap_err()
            .to_string();
        assert!(problem.contains("must be an https address"), "{problem}");
        let problem = production("http://localhost:1@evil.example")
            .unwrap_err()
            .to_string();
        assert!(problem.contains("CONSOLE_OIDC_ISSUER must be"), "{problem}");
    }
}
