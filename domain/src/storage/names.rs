//! File and folder names that are safe to put in the document store.
//!
//! Letters, digits, `-`, `_` and `.` are kept; anything else (spaces, path separators, control
//! characters, other punctuation) becomes `-`. A name that is `.` or `..` after that, or that is
//! empty or made only of dots and dashes, is refused: it names no file. So no name can climb
//! out of its folder, whatever a client sends.
//!
//! Names are also made acceptable to every backend, SharePoint being the strictest (Microsoft's
//! "Restrictions and limitations in OneDrive and SharePoint"): trailing dots are dropped, `_vti_`
//! is broken up, Windows device names (`CON`, `NUL`, `COM1`… even with an extension) and the
//! reserved `desktop.ini` and `.lock` get a `_`. The same name on every backend keeps a switch of
//! backends from renaming anything, and a name refused only at upload time would fail a job
//! after the client was told its file was accepted.

use std::fmt;

use crate::{Error, Result};

/// Longest name kept (bytes; every kept character is ASCII). Longer names are cut, keeping the
/// extension. 100 keeps the longest path the layout makes (a bedroom photo:
/// `Villas/<folder>/Photos/Bedrooms/<subfolder>/<name>`, 335 characters) under SharePoint's 400
/// for a whole path, with room for the library's own.
pub const MAX_NAME_LEN: usize = 100;

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
        let name = reserved_made_safe(name);
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

    /// The names an upload with record id `id` may take in its folder, in order: this one; this
    /// one with the last 8 hex digits of the id; this one with the whole id. A second file of
    /// one name never replaces the first, and every file gets a name of its own: the short
    /// suffix is the id's random tail (a v7 id begins with its timestamp, so its first digits
    /// repeat for every upload within a minute), and the whole id is unique, so the last name
    /// cannot be taken by another record.
    pub fn candidates(&self, id: uuid::Uuid) -> [SafeName; 3] {
        let hex = id.simple().to_string();
        [
            self.clone(),
            self.with_suffix(&hex[hex.len() - 8..]),
            self.with_suffix(&hex),
        ]
    }

    /// A name for when no better one can be made.
    pub(crate) fn fallback() -> SafeName {
        SafeName("villa".to_owned())
    }
}

/// Windows' device names, which SharePoint refuses as a name or a name's stem (`CON.pdf`).
const DEVICE_NAMES: [&str; 4] = ["CON", "PRN", "AUX", "NUL"];
/// Device names followed by one digit: `COM0`…`COM9`, `LPT0`…`LPT9`.
const NUMBERED_DEVICES: [&str; 2] = ["COM", "LPT"];
/// Whole names SharePoint keeps for itself.
const RESERVED_NAMES: [&str; 2] = ["desktop.ini", ".lock"];

/// `name` (already made of safe characters) changed as little as can be so that no backend
/// refuses it: trailing dots dropped, `_vti_` broken up, a device-name stem or a reserved name
/// given a `_`. May answer an empty name (`...`), which the caller refuses.
fn reserved_made_safe(name: String) -> String {
    let mut name = name.trim_end_matches('.').to_owned();
    // `_vti_` may appear in any case; the safe characters are ASCII, so byte offsets match.
    while let Some(at) = name.to_ascii_lowercase().find("_vti_") {
        name.replace_range(at..at + 5, "-vti-");
    }
    if RESERVED_NAMES.iter().any(|r| name.eq_ignore_ascii_case(r)) {
        return format!("_{name}");
    }
    let stem_len = name.find('.').unwrap_or(name.len());
    let stem = &name[..stem_len];
    let is_device = DEVICE_NAMES.iter().any(|d| stem.eq_ignore_ascii_case(d))
        || (stem.len() == 4
            && stem.as_bytes()[3].is_ascii_digit()
            && NUMBERED_DEVICES
                .iter()
                .any(|d| stem[..3].eq_ignore_ascii_case(d)));
    if is_device {
        name.insert(stem_len, '_');
        if name.len() > MAX_NAME_LEN {
            // Only a name of MAX_NAME_LEN with a device stem: drop one character of its end.
            name.truncate(MAX_NAME_LEN);
            name.truncate(name.trim_end_matches('.').len());
        }
    }
    name
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
    fn uploads_of_one_name_in_one_instant_get_names_of_their_own() {
        let n = SafeName::parse("f", "same.txt").unwrap();
        let ids: Vec<uuid::Uuid> = (0..1000).map(|_| uuid::Uuid::now_v7()).collect();
        let short: std::collections::HashSet<String> = ids
            .iter()
            .map(|id| n.candidates(*id)[1].as_str().to_owned())
            .collect();
        // 1000 ids made within a millisecond or two: the short suffixes (32 random bits) differ.
        assert!(short.len() >= 999, "{} distinct", short.len());
        let full: std::collections::HashSet<String> = ids
            .iter()
            .map(|id| n.candidates(*id)[2].as_str().to_owned())
            .collect();
        assert_eq!(full.len(), ids.len());
        let [first, second, third] = n.candidates(ids[0]);
        assert_eq!(first.as_str(), "same.txt");
        assert!(second.as_str().starts_with("same-") && second.as_str().ends_with(".txt"));
        assert_eq!(third.as_str().len(), "same-.txt".len() + 32);
    }

    #[test]
    fn names_sharepoint_refuses_are_made_acceptable() {
        assert_eq!(safe("report."), "report");
        assert_eq!(safe("report . . "), "report-.-");
        assert_eq!(safe("CON.pdf"), "CON_.pdf");
        assert_eq!(safe("con"), "con_");
        assert_eq!(safe("Lpt9.tar.gz"), "Lpt9_.tar.gz");
        assert_eq!(safe("COM10.pdf"), "COM10.pdf");
        assert_eq!(safe("console.pdf"), "console.pdf");
        assert_eq!(safe("Desktop.ini"), "_Desktop.ini");
        assert_eq!(safe(".lock"), "_.lock");
        assert_eq!(safe("my.lock"), "my.lock");
        assert_eq!(safe("a_vti_b_VTI_c.pdf"), "a-vti-b-vti-c.pdf");
        assert_eq!(safe("~$draft.docx"), "--draft.docx");
        for raw in ["...", ". .", "-."] {
            assert!(SafeName::parse("fileName", raw).is_err(), "{raw:?}");
        }
        // A suffixed candidate of a made-safe name stays acceptable.
        let n = SafeName::parse("f", "nul.txt").unwrap();
        assert_eq!(n.with_suffix("ab12").as_str(), "nul_-ab12.txt");
        // A cut name never ends with a dot.
        let cut = safe(&format!("{}.", "a".repeat(MAX_NAME_LEN - 1)));
        assert!(!cut.ends_with('.'), "{cut}");
    }

    #[test]
    fn long_names_are_cut_keeping_the_extension() {
        let name = safe(&format!("{}.pdf", "a".repeat(500)));
        assert_eq!(name.len(), MAX_NAME_LEN);
        assert!(name.ends_with("a.pdf"));
    }
}
