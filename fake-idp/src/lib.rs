//! A loopback stand-in for an OpenID Connect identity provider, for the web console's sign-in in
//! development and in its browser tests. It follows the public specifications a real provider
//! (Keycloak, Auth0, Entra ID) implements for a single-page app:
//!
//! - OpenID Connect Discovery 1.0: `GET /.well-known/openid-configuration`;
//! - OAuth 2.0 authorization code (RFC 6749 §4.1) for one public client, with PKCE S256 required
//!   (RFC 7636): `GET /authorize` shows a sign-in page (pick a user; there are no passwords),
//!   `POST /authorize` sends the browser back with a one-time code, `POST /token` exchanges it;
//! - the signing key as a JWKS (RFC 7517): `GET /jwks`, which the API's `AUTH_JWKS_URL` names.
//!
//! Access tokens are EdDSA JWTs with the issuer, audience and roles claim the API checks. Never
//! part of a deployment: production names its real provider (`CONSOLE_OIDC_ISSUER`).

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use axum::{
    Form, Json, Router,
    extract::{Query, State},
    http::{HeaderValue, StatusCode, header},
    response::{Html, IntoResponse, Redirect, Response},
    routing::get,
};
use base64::Engine as _;
use ed25519_dalek::{SigningKey, pkcs8::EncodePrivateKey, pkcs8::spki::der::pem::LineEnding};
use serde::Deserialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The people who can sign in: (subject, name, role).
pub const USERS: [(&str, &str, &str); 4] = [
    ("idp-admin", "Ayu (admin)", "admin"),
    ("idp-manager", "Made (manager)", "manager"),
    ("idp-staff", "Ketut (staff)", "staff"),
    ("idp-viewer", "Wayan (viewer)", "viewer"),
];

/// A code is good for one exchange within this time (RFC 6749 §4.1.2 advises at most 10 minutes).
const CODE_TTL: Duration = Duration::from_secs(60);
/// Codes waiting for their exchange at most: a browser that never comes back costs nothing more.
const MAX_PENDING_CODES: usize = 10_000;

#[derive(Debug, Clone)]
pub struct Settings {
    /// This server's own address, the tokens' `iss` (`http://127.0.0.1:<port>`).
    pub issuer: String,
    pub client_id: String,
    /// The only redirect URIs accepted, compared exactly (RFC 6749 §3.1.2.3).
    pub redirect_uris: Vec<String>,
    /// The tokens' `aud`: the API's `AUTH_AUDIENCE`.
    pub audience: String,
    /// The claim holding the roles: the API's `AUTH_ROLES_CLAIM`.
    pub roles_claim: String,
    pub token_ttl: Duration,
}

struct Pending {
    redirect_uri: String,
    challenge: String,
    subject: &'static str,
    role: &'static str,
    issued: Instant,
}

struct Provider {
    settings: Settings,
    key: SigningKey,
    codes: Mutex<HashMap<String, Pending>>,
}

fn random_token() -> String {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).expect("the system's random source");
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// `base64url(SHA-256(verifier))`, RFC 7636 §4.2.
pub fn s256(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// Discovery and the token endpoint are called by the console's JavaScript from another origin.
fn cors(mut response: Response) -> Response {
    response.headers_mut().insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    response
}

async fn discovery(State(idp): State<Arc<Provider>>) -> Response {
    let issuer = &idp.settings.issuer;
    cors(
        Json(json!({
            "issuer": issuer,
            "authorization_endpoint": format!("{issuer}/authorize"),
            "token_endpoint": format!("{issuer}/token"),
            "jwks_uri": format!("{issuer}/jwks"),
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["EdDSA"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
            "scopes_supported": ["openid", "profile"],
        }))
        .into_response(),
    )
}

async fn jwks(State(idp): State<Arc<Provider>>) -> Response {
    let x =
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(idp.key.verifying_key().as_bytes());
    cors(
        Json(json!({"keys": [{"kty": "OKP", "crv": "Ed25519", "x": x, "kid": "fake-idp-1", "alg": "EdDSA", "use": "sig"}]}))
            .into_response(),
    )
}

#[derive(Deserialize, Default)]
struct AuthorizeRequest {
    response_type: Option<String>,
    client_id: Option<String>,
    redirect_uri: Option<String>,
    state: Option<String>,
    code_challenge: Option<String>,
    code_challenge_method: Option<String>,
    scope: Option<String>,
    /// Only in the sign-in form's answer: the user picked.
    user: Option<String>,
}

/// A page saying what is wrong, for errors that must not be sent to an unchecked redirect URI
/// (RFC 6749 §4.1.2.1).
fn refuse(message: &str) -> Response {
    (
        StatusCode::BAD_REQUEST,
        Html(format!(
            "<!doctype html><html lang=en><title>Sign-in refused</title><h1>Sign-in refused</h1><p>{}</p></html>",
            escape(message)
        )),
    )
        .into_response()
}

/// Checks a request at the authorization endpoint: `Err` is the answer to give instead.
fn check(idp: &Provider, req: &AuthorizeRequest) -> Result<(String, String), Box<Response>> {
    if req.client_id.as_deref() != Some(idp.settings.client_id.as_str()) {
        return Err(Box::new(refuse("unknown client_id")));
    }
    let redirect = req.redirect_uri.clone().unwrap_or_default();
    if !idp.settings.redirect_uris.contains(&redirect) {
        return Err(Box::new(refuse(
            "redirect_uri is not registered for this client",
        )));
    }
    let back_with = |error: &str, description: &str| {
        let mut url = format!(
            "{}error={error}&error_description={}",
            with_query(&redirect),
            urlencode(description)
        );
        if let Some(state) = &req.state {
            url.push_str(&format!("&state={}", urlencode(state)));
        }
        Box::new(Redirect::to(&url).into_response())
    };
    if req.response_type.as_deref() != Some("code") {
        return Err(back_with(
            "unsupported_response_type",
            "only the code flow is supported",
        ));
    }
    let challenge = req.code_challenge.clone().unwrap_or_default();
    let challenge_ok = challenge.len() == 43
        && challenge
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if req.code_challenge_method.as_deref() != Some("S256") || !challenge_ok {
        return Err(back_with(
            "invalid_request",
            "PKCE with code_challenge_method S256 is required",
        ));
    }
    Ok((redirect, challenge))
}

/// The redirect URI ready for one more query parameter: a registered URI may have a query of its
/// own, which is kept (RFC 6749 §3.1.2).
fn with_query(uri: &str) -> String {
    match uri.contains('?') {
        true => format!("{uri}&"),
        false => format!("{uri}?"),
    }
}

/// A code verifier as RFC 7636 §4.1 defines it: 43 to 128 unreserved characters.
fn verifier_ok(verifier: &str) -> bool {
    (43..=128).contains(&verifier.len())
        && verifier
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

async fn authorize_page(
    State(idp): State<Arc<Provider>>,
    Query(req): Query<AuthorizeRequest>,
) -> Response {
    if let Err(answer) = check(&idp, &req) {
        return *answer;
    }
    let hidden: String = [
        ("response_type", &req.response_type),
        ("client_id", &req.client_id),
        ("redirect_uri", &req.redirect_uri),
        ("state", &req.state),
        ("code_challenge", &req.code_challenge),
        ("code_challenge_method", &req.code_challenge_method),
        ("scope", &req.scope),
    ]
    .iter()
    .filter_map(|(name, value)| {
        value.as_ref().map(|v| {
            format!(
                r#"<input type="hidden" name="{name}" value="{}">"#,
                escape(v)
            )
        })
    })
    .collect();
    let options: String = USERS
        .iter()
        .map(|(subject, name, _)| format!(r#"<option value="{subject}">{name}</option>"#))
        .collect();
    Html(format!(
        r#"<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Sign in · Fake identity provider</title></head>
<body><main><h1>Fake identity provider</h1><p>Signing in to {client}.</p>
<form method="post" action="/authorize">{hidden}
<label for="user">User</label> <select id="user" name="user">{options}</select>
<button type="submit">Continue</button></form></main></body></html>"#,
        client = escape(&idp.settings.client_id),
    ))
    .into_response()
}

async fn authorize_submit(
    State(idp): State<Arc<Provider>>,
    Form(req): Form<AuthorizeRequest>,
) -> Response {
    let (redirect, challenge) = match check(&idp, &req) {
        Ok(checked) => checked,
        Err(answer) => return *answer,
    };
    let Some(&(subject, _, role)) = USERS
        .iter()
        .find(|(subject, _, _)| Some(*subject) == req.user.as_deref())
    else {
        return refuse("unknown user");
    };
    let code = random_token();
    {
        let mut codes = idp.codes.lock().expect("codes lock");
        codes.retain(|_, pending| pending.issued.elapsed() < CODE_TTL);
        if codes.len() >= MAX_PENDING_CODES {
            return refuse("too many sign-ins in progress; try again in a minute");
        }
        codes.insert(
            code.clone(),
            Pending {
                redirect_uri: redirect.clone(),
                challenge,
                subject,
                role,
                issued: Instant::now(),
            },
        );
    }
    let mut url = format!("{}code={code}", with_query(&redirect));
    if let Some(state) = &req.state {
        url.push_str(&format!("&state={}", urlencode(state)));
    }
    // 303: the browser follows with a GET (RFC 9110 §15.4.4).
    Redirect::to(&url).into_response()
}

#[derive(Deserialize)]
struct TokenRequest {
    grant_type: Option<String>,
    code: Option<String>,
    redirect_uri: Option<String>,
    client_id: Option<String>,
    code_verifier: Option<String>,
}

/// RFC 6749 §5.2's error answer.
fn token_error(error: &str, description: &str) -> Response {
    let mut response = (
        StatusCode::BAD_REQUEST,
        Json(json!({"error": error, "error_description": description})),
    )
        .into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    cors(response)
}

async fn token(State(idp): State<Arc<Provider>>, Form(req): Form<TokenRequest>) -> Response {
    if req.grant_type.as_deref() != Some("authorization_code") {
        return token_error(
            "unsupported_grant_type",
            "only authorization_code is supported",
        );
    }
    if req.client_id.as_deref() != Some(idp.settings.client_id.as_str()) {
        return token_error("invalid_client", "unknown client_id");
    }
    // A code is used once, whatever the outcome (RFC 6749 §4.1.2).
    let pending = req
        .code
        .as_deref()
        .and_then(|code| idp.codes.lock().expect("codes lock").remove(code));
    let Some(pending) = pending.filter(|p| p.issued.elapsed() < CODE_TTL) else {
        return token_error("invalid_grant", "the code is unknown, used or expired");
    };
    if req.redirect_uri.as_deref() != Some(pending.redirect_uri.as_str()) {
        return token_error(
            "invalid_grant",
            "redirect_uri differs from the authorization request's",
        );
    }
    let verifier = req.code_verifier.unwrap_or_default();
    if !verifier_ok(&verifier) {
        return token_error(
            "invalid_request",
            "code_verifier must be 43 to 128 unreserved characters",
        );
    }
    if s256(&verifier) != pending.challenge {
        return token_error(
            "invalid_grant",
            "code_verifier does not match the code_challenge",
        );
    }
    let settings = &idp.settings;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let ttl = settings.token_ttl.as_secs();
    let mut access = json!({
        "iss": settings.issuer, "aud": settings.audience, "sub": pending.subject,
        "azp": settings.client_id, "iat": now, "exp": now + ttl,
    });
    access[&settings.roles_claim] = json!([pending.role]);
    let id = json!({
        "iss": settings.issuer, "aud": settings.client_id, "sub": pending.subject,
        "iat": now, "exp": now + ttl,
    });
    let (Ok(access_token), Ok(id_token)) = (sign(&idp.key, &access), sign(&idp.key, &id)) else {
        return token_error("server_error", "signing failed");
    };
    let mut response = Json(json!({
        "access_token": access_token, "id_token": id_token, "token_type": "Bearer",
        "expires_in": ttl, "scope": "openid profile",
    }))
    .into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    cors(response)
}

fn sign(key: &SigningKey, claims: &Value) -> Result<String, Box<dyn std::error::Error>> {
    let pem = key.to_pkcs8_pem(LineEnding::LF)?;
    let encoding = jsonwebtoken::EncodingKey::from_ed_pem(pem.as_bytes())?;
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::EdDSA);
    header.kid = Some("fake-idp-1".to_owned());
    Ok(jsonwebtoken::encode(&header, claims, &encoding)?)
}

/// The provider's routes, with a fresh signing key.
pub fn router(settings: Settings) -> Router {
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).expect("the system's random source");
    let idp = Arc::new(Provider {
        settings,
        key: SigningKey::from_bytes(&seed),
        codes: Mutex::new(HashMap::new()),
    });
    Router::new()
        .route("/.well-known/openid-configuration", get(discovery))
        .route("/jwks", get(jwks))
        .route("/authorize", get(authorize_page).post(authorize_submit))
        .route("/token", axum::routing::post(token))
        .with_state(idp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s256_is_rfc_7636s_example() {
        assert_eq!(
            s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn verifiers_are_checked_and_redirects_keep_their_query() {
        assert!(verifier_ok(&"a".repeat(43)));
        assert!(!verifier_ok(&"a".repeat(42)));
        assert!(!verifier_ok(&"a".repeat(129)));
        assert!(!verifier_ok(&format!("{}+", "a".repeat(43))));
        assert_eq!(with_query("https://x/cb"), "https://x/cb?");
        assert_eq!(
            with_query("https://x/cb?tenant=1"),
            "https://x/cb?tenant=1&"
        );
    }

    #[test]
    fn markup_and_query_text_is_escaped() {
        assert_eq!(escape(r#""><script>"#), "&quot;&gt;&lt;script&gt;");
        assert_eq!(urlencode("a b&c=d"), "a%20b%26c%3Dd");
    }
}
