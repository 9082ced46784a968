//! Secrets: field encryption at rest (AES-256-GCM with `DATA_ENCRYPTION_KEY`; a stored value is
//! `nonce (12 bytes) || ciphertext || tag`, every encryption drawing a fresh random nonce), and
//! the tokens requests carry.

use aes_gcm::aead::{Aead, KeyInit};
use aes_gcm::{Aes256Gcm, Key, Nonce};

const NONCE_LEN: usize = 12;

#[derive(Clone)]
pub struct FieldCipher {
    cipher: Aes256Gcm,
}

impl std::fmt::Debug for FieldCipher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FieldCipher(..)")
    }
}

#[derive(Debug, thiserror::Error)]
#[error("stored secret could not be decrypted (wrong key or corrupted value)")]
pub struct DecryptError;

impl FieldCipher {
    pub fn new(key: &[u8; 32]) -> Self {
        let key = Key::<Aes256Gcm>::from(*key);
        Self {
            cipher: Aes256Gcm::new(&key),
        }
    }

    pub fn encrypt(&self, plaintext: &str) -> Vec<u8> {
        let mut nonce = [0u8; NONCE_LEN];
        getrandom::fill(&mut nonce).expect("the operating system's random source failed");
        let sealed = self
            .cipher
            .encrypt(&Nonce::from(nonce), plaintext.as_bytes())
            .expect("AES-GCM encryption of an in-memory buffer cannot fail");
        let mut out = Vec::with_capacity(NONCE_LEN + sealed.len());
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&sealed);
        out
    }

    pub fn decrypt(&self, stored: &[u8]) -> Result<String, DecryptError> {
        if stored.len() < NONCE_LEN {
            return Err(DecryptError);
        }
        let (nonce, sealed) = stored.split_at(NONCE_LEN);
        let nonce: [u8; NONCE_LEN] = nonce.try_into().map_err(|_| DecryptError)?;
        let plain = self
            .cipher
            .decrypt(&Nonce::from(nonce), sealed)
            .map_err(|_| DecryptError)?;
        String::from_utf8(plain).map_err(|_| DecryptError)
    }
}

/// The last four characters of a secret, for the masked form shown to users.
pub fn last4(secret: &str) -> String {
    let chars: Vec<char> = secret.chars().filter(|c| !c.is_whitespace()).collect();
    chars[chars.len().saturating_sub(4)..].iter().collect()
}

/// `****1234`: what the API returns in place of an account number.
pub fn masked(last4: &str) -> String {
    format!("****{last4}")
}

/// The token of an `Authorization: Bearer <token>` header value (the scheme as `Bearer` or
/// `bearer`); none for another scheme or an empty token.
pub fn bearer_token(authorization: &str) -> Option<&str> {
    authorization
        .strip_prefix("Bearer ")
        .or_else(|| authorization.strip_prefix("bearer "))
        .map(str::trim)
        .filter(|token| !token.is_empty())
}

/// Compares two secrets in a time that does not depend on where they differ.
pub fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_tokens_and_secrets() {
        assert_eq!(bearer_token("Bearer abc.def"), Some("abc.def"));
        assert_eq!(bearer_token("bearer  abc "), Some("abc"));
        assert_eq!(bearer_token("Basic abc"), None);
        assert_eq!(bearer_token("Bearer "), None);
        assert_eq!(bearer_token("Bearerabc"), None);
        assert!(same_secret(b"a-long-token", b"a-long-token"));
        assert!(!same_secret(b"a-long-token", b"a-long-tokeN"));
        assert!(!same_secret(b"a-long-token", b"a-long-token-"));
    }

    #[test]
    fn round_trip_and_fresh_nonce() {
        let c = FieldCipher::new(&[7; 32]);
        let a = c.encrypt("s3cret-password");
        let b = c.encrypt("s3cret-password");
        assert_ne!(a, b, "two encryptions of one value must differ");
        assert_eq!(c.decrypt(&a).unwrap(), "s3cret-password");
        assert!(!a.windows(6).any(|w| w == b"s3cret"));
    }

    #[test]
    fn wrong_key_or_tampering_is_an_error() {
        let a = FieldCipher::new(&[1; 32]).encrypt("x");
        assert!(FieldCipher::new(&[2; 32]).decrypt(&a).is_err());
        let mut t = FieldCipher::new(&[1; 32]).encrypt("hello");
        *t.last_mut().unwrap() ^= 1;
        assert!(FieldCipher::new(&[1; 32]).decrypt(&t).is_err());
        assert!(FieldCipher::new(&[1; 32]).decrypt(&[0; 5]).is_err());
    }

    #[test]
    fn masking_keeps_last_four() {
        assert_eq!(masked(&last4("1234 5678 9012")), "****9012");
        assert_eq!(last4("12"), "12");
    }
}
