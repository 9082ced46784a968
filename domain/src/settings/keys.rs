//! The data encryption key (`DATA_ENCRYPTION_KEY`): the base64 of 32 bytes, with which
//! `crate::crypto` encrypts OTA passwords and bank details at rest. Development generates one
//! into [`dev_dir`] and keeps it there.

use base64::Engine as _;

use super::env::{Env, dev_dir};

/// `DATA_ENCRYPTION_KEY`: required in production; in development the key kept in [`dev_dir`],
/// generated on first use. Problems go to `env` like every other setting's.
pub(super) fn data_encryption_key(env: &mut Env<'_>) -> [u8; 32] {
    match env.raw("DATA_ENCRYPTION_KEY") {
        Some(v) => parse_key(&v).unwrap_or_else(|| {
            env.problems
                .push("DATA_ENCRYPTION_KEY must be the base64 encoding of exactly 32 bytes".into());
            [0; 32]
        }),
        None if env.production => {
            env.problems
                .push("DATA_ENCRYPTION_KEY is required in production".into());
            [0; 32]
        }
        None => match dev_data_key() {
            Ok(key) => key,
            Err(e) => {
                env.problems.push(format!(
                    "DATA_ENCRYPTION_KEY unset and no development key: {e}"
                ));
                [0; 32]
            }
        },
    }
}

fn parse_key(v: &str) -> Option<[u8; 32]> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(v).ok()?;
    bytes.try_into().ok()
}

/// Development only: a random data key kept in `.dev/`, shared by every local process.
fn dev_data_key() -> std::io::Result<[u8; 32]> {
    let path = dev_dir().join("data-encryption.key");
    if let Ok(existing) = std::fs::read_to_string(&path)
        && let Some(key) = parse_key(existing.trim())
    {
        return Ok(key);
    }
    let mut key = [0u8; 32];
    getrandom::fill(&mut key).map_err(std::io::Error::other)?;
    std::fs::create_dir_all(dev_dir())?;
    std::fs::write(&path, base64::engine::general_purpose::STANDARD.encode(key))?;
    Ok(key)
}
