//! File and folder names that are safe to put in the document store.
//!
//! Letters, digits, `-`, `_` and `.` are kept; anything else (spaces, path separators, control
//! characters, other punctuation) becomes `-`. A name that is `.` or `..` after that, or that is
//! empty or made only of dots and dashes, is refused: it names no file. So no name can climb
//! out of its folder, whatever a client sends.

use std::fmt;

use crate::{Error, Result};

/// Longest name kept (bytes; every kept character is ASCII). Longer names are cut, keeping the
/// extension, which most file systems and object stores accept.
pub const MAX_NAME_LEN: usize = 180;

/// A sanitized file or folder name (one path segment).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SafeName(String);

impl SafeName {
    /// Sanitizes `raw`; `field` names the request field in the error.
    pub fn parse(field: &str, raw: &str) -> Result<SafeName> {
        let mut name: String = raw
            .trim()
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        if name.len() > MAX_NAME_LEN {
            name = shorten(&name);
        }
        if name.chars().all(|c| matches!(c, '.' | '-')) {
            return Err(Error::invalid(
                field,
                "invalid_name",
                "the name has no letters or digits once unsafe characters are removed",
            ));
        }
        Ok(SafeName(name))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// This name with `-<suffix>` before its extension (`rules.pdf` -> `rules-0193ab12.pdf`), to
    /// tell apart two uploads of one name into one folder. `suffix` must be made of safe
    /// characters (it is: callers pass hex digits of an id).
    pub fn with_suffix(&self, suffix: &str) -> SafeName {
        debug_assert!(suffix.chars().all(|c| c.is_ascii_alphanumeric()));
        let (stem, ext) = match self.0.rfind('.') {
            Some(dot) if dot > 0 => self.0.split_at(dot),
            _ => (self.0.as_str(), ""),
        };
        let keep = MAX_NAME_LEN.saturating_sub(ext.len() + suffix.len() + 1);
        let stem = &stem[..stem.len().min(keep)];
        SafeName(format!("{stem}-{suffix}{ext}"))
    }

    /// The names an upload with record id `id` may take in its folder: this one, else this one
    /// with the id's first 8 hex digits, so that a second file of one name never replaces the
    /// first.
    pub fn candidates(&self, id: uuid::Uuid) -> [SafeName; 2] {
        [
            self.clone(),
            self.with_suffix(&id.simple().to_string()[..8]),
        ]
    }

    /// A name for when no better one can be made.
    pub(crate) fn fallback() -> SafeName {
        SafeName("villa".to_owned())
    }
}

fn shorten(name: &str) -> String {
    match name.rfind('.') {
        Some(dot) if name.len() - dot <= 16 => {
            let ext = &name[dot..];
            format!("{}{ext}", &name[..MAX_NAME_LEN - ext.len()])
        }
        _ => name[..MAX_NAME_LEN].to_owned(),
    }
}

impl fmt::Display for SafeName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn safe(raw: &str) -> String {
        SafeName::parse("fileName", raw).unwrap().0
    }

    #[test]
    fn keeps_safe_characters_and_replaces_the_rest() {
        assert_eq!(safe("Lease_2026-v2.pdf"), "Lease_2026-v2.pdf");
        assert_eq!(safe("Master Bedroom 1"), "Master-Bedroom-1");
        assert_eq!(safe("  contrat d'été.pdf "), "contrat-d--t-.pdf");
        assert_eq!(safe("a/b\\c\u{0}d\ne"), "a-b-c-d-e");
    }

    #[test]
    fn path_traversal_cannot_leave_the_folder() {
        for raw in [
            "../../etc/passwd",
            "..\\..\\boot.ini",
            "/etc/passwd",
            "..%2F..%2Fx",
            "x/../../y",
        ] {
            let name = safe(raw);
            assert!(
                !name.contains('/') && !name.contains('\\'),
                "{raw} -> {name}"
            );
            assert_ne!(name, "..");
            assert_ne!(name, ".");
        }
        assert_eq!(safe("../../etc/passwd"), "..-..-etc-passwd");
    }

    #[test]
    fn names_of_nothing_are_refused() {
        for raw in ["", "   ", ".", "..", "///", "...", "-", "./-"] {
            let err = SafeName::parse("subfolder", raw).unwrap_err();
            assert!(
                matches!(err, Error::Validation(ref f) if f[0].field == "subfolder"),
                "{raw:?}"
            );
        }
    }

    #[test]
    fn suffixes_go_before_the_extension() {
        let n = SafeName::parse("f", "rules.pdf").unwrap();
        assert_eq!(n.with_suffix("0193ab12").as_str(), "rules-0193ab12.pdf");
        let n = SafeName::parse("f", ".env").unwrap();
        assert_eq!(n.with_suffix("ab").as_str(), ".env-ab");
    }

    #[test]
    fn long_names_are_cut_keeping_the_extension() {
        let name = safe(&format!("{}.pdf", "a".repeat(500)));
        assert_eq!(name.len(), MAX_NAME_LEN);
        assert!(name.ends_with("a.pdf"));
    }
}
