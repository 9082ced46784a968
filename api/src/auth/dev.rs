//! Development sign-in without an identity provider. The API, when `APP_ENV=development`,
//! serves the JWKS of a local Ed25519 key at `/dev/jwks.json` (the default `AUTH_JWKS_URL` in
//! development) and `villa-api mint-token --role admin` signs tokens with that key. In production
//! the route is not mounted and the command refuses to run.

use std::path::PathBuf;

use anyhow::Context as _;
use base64::Engine as _;
use ed25519_dalek::{
    SigningKey,
    pkcs8::{DecodePrivateKey, EncodePrivateKey, spki::der::pem::LineEnding},
};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

pub const DEV_KID: &str = "villa-dev-1";

fn key_path() -> PathBuf {
    domain::settings::dev_dir().join("jwt-dev-key.pem")
}

/// The development signing key, created on first use in `.dev/` (git-ignored).
pub fn signing_key() -> anyhow::Result<SigningKey> {
    let path = key_path();
    if let Ok(pem) = std::fs::read_to_string(&path) {
        return SigningKey::from_pkcs8_pem(&pem)
            .context("the development key in .dev/ is corrupt; delete it");
    }
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed)?;
    let key = SigningKey::from_bytes(&seed);
    std::fs::create_dir_all(domain::settings::dev_dir())?;
    let pem = key
        .to_pkcs8_pem(LineEnding::LF)
        .context("encoding the development key")?;
    std::fs::write(&path, pem.as_bytes())?;
    Ok(key)
}

pub fn jwks(key: &SigningKey) -> Value {
    let x = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(key.verifying_key().as_bytes());
    json!({"keys": [{"kty": "OKP", "crv": "Ed25519", "x": x, "kid": DEV_KID, "alg": "EdDSA", "use": "sig"}]})
}

/// Signs a development token for `roles`, valid `ttl_secs`.
pub fn mint(
    key: &SigningKey,
    issuer: &str,
    audience: &str,
    roles_claim: &str,
    subject: &str,
    roles: &[String],
    ttl_secs: i64,
) -> anyhow::Result<String> {
    let now = chrono::Utc::now().timestamp();
    let mut claims =
        json!({"iss": issuer, "aud": audience, "sub": subject, "iat": now, "exp": now + ttl_secs});
    claims[roles_claim] = json!(roles);
    let pem = key.to_pkcs8_pem(LineEnding::LF)?;
    let encoding = EncodingKey::from_ed_pem(pem.as_bytes())?;
    let mut header = Header::new(Algorithm::EdDSA);
    header.kid = Some(DEV_KID.to_owned());
    Ok(jsonwebtoken::encode(&header, &claims, &encoding)?)
}
