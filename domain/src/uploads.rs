//! What an upload brings before it is recorded, whichever route it came through: file content
//! sent as base64 inside JSON (the onboarding documents and photos, facility photos). Names are
//! made safe by [`crate::storage::SafeName`]; images are checked by [`crate::media`].

use base64::Engine as _;

/// Base64 as browsers send it: standard alphabet, optional padding, optionally behind a
/// `data:<type>;base64,` prefix, whitespace ignored.
pub fn decode_base64(raw: &str) -> Option<Vec<u8>> {
    let body = match raw.split_once(";base64,") {
        Some((head, body)) if head.starts_with("data:") => body,
        _ => raw,
    };
    let cleaned: String;
    let body = if body.bytes().any(|b| b.is_ascii_whitespace()) {
        cleaned = body.chars().filter(|c| !c.is_ascii_whitespace()).collect();
        cleaned.as_str()
    } else {
        body
    };
    let engine = base64::engine::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
    );
    engine.decode(body).ok()
}

#[cfg(test)]
mod tests {
    use super::decode_base64;

    #[test]
    fn accepts_what_browsers_send() {
        assert_eq!(decode_base64("aGVsbG8=").as_deref(), Some(&b"hello"[..]));
        assert_eq!(decode_base64("aGVsbG8").as_deref(), Some(&b"hello"[..]));
        assert_eq!(
            decode_base64("data:text/plain;base64,aGVs\nbG8=").as_deref(),
            Some(&b"hello"[..])
        );
        assert_eq!(decode_base64("not base64!"), None);
    }
}
