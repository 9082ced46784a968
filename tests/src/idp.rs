//! A loopback identity provider: serves a JWKS of Ed25519 keys it can rotate, and signs tokens
//! (including deliberately bad ones) the way a provider following RFC 7517/7519 would.

use std::sync::{Arc, Mutex};

use axum::{Json, Router, routing::get};
use base64::Engine as _;
use ed25519_dalek::{
    SigningKey,
    pkcs8::{EncodePrivateKey, spki::der::pem::LineEnding},
};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

pub const ISSUER: &str = "https://idp.test.local/";
pub const AUDIENCE: &str = "villa-platform";

#[derive(Clone)]
pub struct TestIdp {
    pub jwks_url: String,
    keys: Arc<Mutex<Vec<(String, SigningKey)>>>,
}

fn new_key() -> SigningKey {
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).unwrap();
    SigningKey::from_bytes(&seed)
}

fn jwk(kid: &str, key: &SigningKey) -> Value {
    let x = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(key.verifying_key().as_bytes());
    json!({"kty": "OKP", "crv": "Ed25519", "x": x, "kid": kid, "alg": "EdDSA", "use": "sig"})
}

impl TestIdp {
    pub async fn start() -> TestIdp {
        let keys = Arc::new(Mutex::new(vec![("k1".to_owned(), new_key())]));
        let served = keys.clone();
        let app = Router::new().route(
            "/.well-known/jwks.json",
            get(move || {
                let keys = served.clone();
                async move {
                    let set: Vec<Value> = keys
                        .lock()
                        .unwrap()
                        .iter()
                        .map(|(kid, k)| jwk(kid, k))
                        .collect();
                    Json(json!({ "keys": set }))
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        TestIdp {
            jwks_url: format!("http://{addr}/.well-known/jwks.json"),
            keys,
        }
    }

    /// Adds a new signing key `kid` (a rotation); tokens signed with it are valid from now on.
    pub fn rotate(&self, kid: &str) {
        self.keys.lock().unwrap().push((kid.to_owned(), new_key()));
    }

    pub fn claims(&self, roles: &[&str]) -> Value {
        let now = chrono::Utc::now().timestamp();
        json!({"iss": ISSUER, "aud": AUDIENCE, "sub": "user-1", "iat": now, "exp": now + 3600, "roles": roles})
    }

    /// A valid token for `roles`, signed with the first key.
    pub fn token(&self, roles: &[&str]) -> String {
        self.sign("k1", &self.claims(roles))
    }

    /// Signs `claims` with key `kid` (EdDSA).
    pub fn sign(&self, kid: &str, claims: &Value) -> String {
        let keys = self.keys.lock().unwrap();
        let key = &keys.iter().find(|(k, _)| k == kid).expect("no such kid").1;
        Self::sign_with(key, kid, claims)
    }

    /// Signs with a key the provider never published (a forged token).
    pub fn sign_with_unpublished_key(&self, kid: &str, claims: &Value) -> String {
        Self::sign_with(&new_key(), kid, claims)
    }

    fn sign_with(key: &SigningKey, kid: &str, claims: &Value) -> String {
        let pem = key.to_pkcs8_pem(LineEnding::LF).unwrap();
        let enc = EncodingKey::from_ed_pem(pem.as_bytes()).unwrap();
        let mut header = Header::new(Algorithm::EdDSA);
        header.kid = Some(kid.to_owned());
        jsonwebtoken::encode(&header, claims, &enc).unwrap()
    }

    /// The public key bytes of `kid`, as an attacker would use them for an HS256 "signature".
    pub fn public_key_bytes(&self, kid: &str) -> Vec<u8> {
        let keys = self.keys.lock().unwrap();
        keys.iter()
            .find(|(k, _)| k == kid)
            .unwrap()
            .1
            .verifying_key()
            .as_bytes()
            .to_vec()
    }
}

/// An unsigned token (`alg: none`).
pub fn unsigned_token(claims: &Value, kid: &str) -> String {
    let b64 = |v: &Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
    format!(
        "{}.{}.",
        b64(&json!({"alg": "none", "typ": "JWT", "kid": kid})),
        b64(claims)
    )
}

/// An HS256 token keyed with `secret` (the algorithm-confusion attack when `secret` is the
/// provider's public key).
pub fn hs256_token(claims: &Value, kid: &str, secret: &[u8]) -> String {
    let mut header = Header::new(Algorithm::HS256);
    header.kid = Some(kid.to_owned());
    jsonwebtoken::encode(&header, claims, &EncodingKey::from_secret(secret)).unwrap()
}
