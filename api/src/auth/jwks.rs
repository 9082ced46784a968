//! Token verification against the identity provider's JWKS.
//!
//! - The algorithm comes from the key (its `alg`, or its type and curve), never from the token
//!   alone: a token whose header names another algorithm is rejected, so `alg: none` and the
//!   HS256-with-the-public-key confusion cannot pass. Symmetric (`oct`) keys are never used.
//! - Keys are cached; a token with an unknown `kid` triggers one refresh (concurrent callers
//!   share it, and refreshes are at least [`MIN_REFRESH_INTERVAL`] apart), which is how a key
//!   rotation at the provider is picked up. The cache is also refreshed after [`MAX_KEY_AGE`].
//! - A verified token is remembered (by its exact text) until it expires, but at most
//!   [`VERIFIED_TTL`]: a client sends the same token on every call, and checking its signature
//!   each time was a fifth of the API's CPU on the read path. A key withdrawn from the JWKS is
//!   therefore honoured at most [`VERIFIED_TTL`] longer.

use std::{
    collections::HashMap,
    time::{Duration, Instant},
};

use domain::settings::AuthSettings;
use jsonwebtoken::{
    Algorithm, DecodingKey, Validation,
    jwk::{AlgorithmParameters, EllipticCurve, JwkSet, KeyAlgorithm},
};
use serde_json::Value;
use tokio::sync::{Mutex, RwLock};

use super::{CurrentUser, Role};

const MIN_REFRESH_INTERVAL: Duration = Duration::from_secs(1);
const MAX_KEY_AGE: Duration = Duration::from_secs(600);
const LEEWAY_SECS: u64 = 30;
const VERIFIED_TTL: Duration = Duration::from_secs(60);
/// Bound of the verified-token cache; past it, expired entries are dropped, then all.
const VERIFIED_MAX: usize = 10_000;

#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("the token is not a well-formed JWT")]
    Malformed,
    #[error("the token's signing key is unknown")]
    UnknownKey,
    #[error("the token's algorithm does not match its key")]
    AlgorithmMismatch,
    #[error("the token has expired")]
    Expired,
    #[error("the token is not valid: {0}")]
    Invalid(String),
    #[error("the identity provider's keys could not be fetched")]
    KeysUnavailable,
}

struct VerifyKey {
    key: DecodingKey,
    algorithm: Algorithm,
}

#[derive(Default)]
struct KeyCache {
    keys: HashMap<String, VerifyKey>,
    fetched_at: Option<Instant>,
}

pub struct JwksVerifier {
    settings: AuthSettings,
    http: reqwest::Client,
    cache: RwLock<KeyCache>,
    /// Held while fetching, so concurrent misses share one fetch; holds the last attempt.
    refresh: Mutex<Option<Instant>>,
    /// Tokens already verified, with the instant they stop being trusted.
    verified: std::sync::Mutex<HashMap<String, (CurrentUser, Instant)>>,
}

impl JwksVerifier {
    pub fn new(settings: AuthSettings) -> Self {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(5))
            .build()
            .unwrap_or_default();
        Self {
            settings,
            http,
            cache: RwLock::new(KeyCache::default()),
            refresh: Mutex::new(None),
            verified: std::sync::Mutex::new(HashMap::new()),
        }
    }

    pub async fn verify(&self, token: &str) -> Result<CurrentUser, AuthError> {
        let now = Instant::now();
        if let Some((user, until)) = self
            .verified
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(token)
            && *until > now
        {
            return Ok(user.clone());
        }
        let (user, expires_at) = self.verify_signature(token).await?;
        let seconds_left =
            u64::try_from(expires_at - chrono::Utc::now().timestamp()).unwrap_or(0) + LEEWAY_SECS;
        let until = now + VERIFIED_TTL.min(Duration::from_secs(seconds_left));
        let mut verified = self.verified.lock().unwrap_or_else(|p| p.into_inner());
        if verified.len() >= VERIFIED_MAX {
            verified.retain(|_, (_, t)| *t > now);
            if verified.len() >= VERIFIED_MAX {
                verified.clear();
            }
        }
        verified.insert(token.to_owned(), (user.clone(), until));
        Ok(user)
    }

    /// Full verification: key, algorithm, signature and claims. Returns the user and `exp`.
    async fn verify_signature(&self, token: &str) -> Result<(CurrentUser, i64), AuthError> {
        let header = jsonwebtoken::decode_header(token).map_err(|_| AuthError::Malformed)?;
        let kid = header.kid.clone().unwrap_or_default();
        let needs_refresh = {
            let cache = self.cache.read().await;
            cache.fetched_at.is_none_or(|t| t.elapsed() > MAX_KEY_AGE)
                || !cache.keys.contains_key(&kid)
        };
        if needs_refresh {
            self.refresh_keys(&kid).await;
        }
        let cache = self.cache.read().await;
        if cache.fetched_at.is_none() {
            return Err(AuthError::KeysUnavailable);
        }
        let key = cache.keys.get(&kid).ok_or(AuthError::UnknownKey)?;
        if header.alg != key.algorithm {
            return Err(AuthError::AlgorithmMismatch);
        }
        let mut validation = Validation::new(key.algorithm);
        validation.set_issuer(&[&self.settings.issuer]);
        validation.set_audience(&[&self.settings.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.leeway = LEEWAY_SECS;
        let data = jsonwebtoken::decode::<Value>(token, &key.key, &validation).map_err(|e| {
            use jsonwebtoken::errors::ErrorKind;
            match e.kind() {
                ErrorKind::ExpiredSignature => AuthError::Expired,
                ErrorKind::InvalidIssuer => AuthError::Invalid("wrong issuer".into()),
                ErrorKind::InvalidAudience => AuthError::Invalid("wrong audience".into()),
                ErrorKind::InvalidSignature => AuthError::Invalid("bad signature".into()),
                ErrorKind::MissingRequiredClaim(c) => {
                    AuthError::Invalid(format!("missing claim {c}"))
                }
                _ => AuthError::Invalid(e.to_string()),
            }
        })?;
        let claims = data.claims;
        let user = CurrentUser {
            subject: claims
                .get("sub")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            roles: roles_from(&claims, &self.settings.roles_claim),
        };
        let exp = claims
            .get("exp")
            .and_then(Value::as_i64)
            .unwrap_or_default();
        Ok((user, exp))
    }

    /// Fetches the JWKS, unless a caller that held the lock before us already brought `kid`.
    /// Fetches are at least [`MIN_REFRESH_INTERVAL`] apart: a caller inside that window waits
    /// for its end rather than being refused, so a key published a moment after the last fetch
    /// is still accepted. Failures keep the previous keys.
    async fn refresh_keys(&self, kid: &str) {
        let mut last = self.refresh.lock().await;
        {
            let cache = self.cache.read().await;
            let fresh = cache.fetched_at.is_some_and(|t| t.elapsed() <= MAX_KEY_AGE);
            if fresh && cache.keys.contains_key(kid) {
                return;
            }
        }
        if let Some(t) = *last
            && let Some(wait) = MIN_REFRESH_INTERVAL.checked_sub(t.elapsed())
        {
            tokio::time::sleep(wait).await;
        }
        *last = Some(Instant::now());
        match self.fetch().await {
            Ok(keys) => {
                let mut cache = self.cache.write().await;
                cache.keys = keys;
                cache.fetched_at = Some(Instant::now());
            }
            Err(error) => {
                tracing::warn!(url = %self.settings.jwks_url, %error, "JWKS fetch failed")
            }
        }
    }

    async fn fetch(&self) -> anyhow::Result<HashMap<String, VerifyKey>> {
        let set: JwkSet = self
            .http
            .get(&self.settings.jwks_url)
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        let mut keys = HashMap::new();
        for jwk in &set.keys {
            let Some(algorithm) = algorithm_of(jwk) else {
                continue;
            };
            let Ok(key) = DecodingKey::from_jwk(jwk) else {
                continue;
            };
            keys.insert(
                jwk.common.key_id.clone().unwrap_or_default(),
                VerifyKey { key, algorithm },
            );
        }
        Ok(keys)
    }
}

/// The algorithm a key verifies: its declared `alg`, or the one its type implies. `None` for
/// symmetric keys and anything unsupported, which are then ignored.
fn algorithm_of(jwk: &jsonwebtoken::jwk::Jwk) -> Option<Algorithm> {
    let declared = jwk.common.key_algorithm.and_then(|a| match a {
        KeyAlgorithm::RS256 => Some(Algorithm::RS256),
        KeyAlgorithm::RS384 => Some(Algorithm::RS384),
        KeyAlgorithm::RS512 => Some(Algorithm::RS512),
        KeyAlgorithm::PS256 => Some(Algorithm::PS256),
        KeyAlgorithm::PS384 => Some(Algorithm::PS384),
        KeyAlgorithm::PS512 => Some(Algorithm::PS512),
        KeyAlgorithm::ES256 => Some(Algorithm::ES256),
        KeyAlgorithm::ES384 => Some(Algorithm::ES384),
        KeyAlgorithm::EdDSA => Some(Algorithm::EdDSA),
        _ => None,
    });
    let implied = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => Some(Algorithm::RS256),
        AlgorithmParameters::EllipticCurve(p) => match p.curve {
            EllipticCurve::P256 => Some(Algorithm::ES256),
            EllipticCurve::P384 => Some(Algorithm::ES384),
            _ => None,
        },
        AlgorithmParameters::OctetKeyPair(p) if p.curve == EllipticCurve::Ed25519 => {
            Some(Algorithm::EdDSA)
        }
        _ => None,
    }?;
    // A declared algorithm must belong to the key's family.
    match declared {
        None => Some(implied),
        Some(alg) if family(alg) == family(implied) => Some(alg),
        Some(_) => None,
    }
}

fn family(alg: Algorithm) -> u8 {
    match alg {
        Algorithm::RS256
        | Algorithm::RS384
        | Algorithm::RS512
        | Algorithm::PS256
        | Algorithm::PS384
        | Algorithm::PS512 => 1,
        Algorithm::ES256 | Algorithm::ES384 => 2,
        Algorithm::EdDSA => 3,
        _ => 0,
    }
}

/// Roles from the configured claim: an array of strings or one space-separated string; a dotted
/// name reaches into objects (`realm_access.roles`). Unknown role names are ignored.
fn roles_from(claims: &Value, claim: &str) -> Vec<Role> {
    let mut node = claims;
    for part in claim.split('.') {
        match node.get(part) {
            Some(v) => node = v,
            None => return Vec::new(),
        }
    }
    let names: Vec<&str> = match node {
        Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
        Value::String(s) => s.split_whitespace().collect(),
        _ => Vec::new(),
    };
    let mut roles: Vec<Role> = names.into_iter().filter_map(Role::parse).collect();
    roles.dedup();
    roles
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn roles_claim_shapes() {
        assert_eq!(
            roles_from(&json!({"roles": ["admin", "x"]}), "roles"),
            vec![Role::Admin]
        );
        assert_eq!(
            roles_from(&json!({"roles": "viewer staff"}), "roles"),
            vec![Role::Viewer, Role::Staff]
        );
        assert_eq!(
            roles_from(
                &json!({"realm_access": {"roles": ["manager"]}}),
                "realm_access.roles"
            ),
            vec![Role::Manager]
        );
        assert!(roles_from(&json!({}), "roles").is_empty());
    }
}
