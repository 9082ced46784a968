//! The currency of an answer's money figures: its parameter, its default and its setting.

use serde::{Deserialize, Serialize};

use super::DEFAULT_CURRENCY;
use crate::Problems;

/// The currency of an answer's money figures: an ISO 4217 code, upper case.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Currency(String);

impl Currency {
    /// The `field` of a request: absent or empty gives `default`; anything but 3 ASCII letters
    /// is a problem on `field`.
    pub fn parse(
        problems: &mut Problems,
        field: &str,
        raw: Option<&str>,
        default: &Currency,
    ) -> Option<Currency> {
        let Some(raw) = raw.map(str::trim).filter(|s| !s.is_empty()) else {
            return Some(default.clone());
        };
        let parsed = Self::new_setting(raw);
        if parsed.is_none() {
            problems.push(
                field,
                "invalid_format",
                format!("{field} must be a 3-letter ISO 4217 currency code such as THB or USD"),
            );
        }
        parsed
    }

    /// 3 ASCII letters in any letter case (surrounding blanks ignored), upper-cased.
    pub fn new_setting(raw: &str) -> Option<Currency> {
        let raw = raw.trim();
        (raw.len() == 3 && raw.bytes().all(|b| b.is_ascii_alphabetic()))
            .then(|| Currency(raw.to_ascii_uppercase()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// [`DEFAULT_CURRENCY`].
impl Default for Currency {
    fn default() -> Self {
        Currency(DEFAULT_CURRENCY.to_owned())
    }
}

impl TryFrom<String> for Currency {
    type Error = String;

    fn try_from(raw: String) -> Result<Self, String> {
        Self::new_setting(&raw).ok_or_else(|| format!("{raw:?} is not a 3-letter currency code"))
    }
}

impl From<Currency> for String {
    fn from(currency: Currency) -> String {
        currency.0
    }
}

impl std::fmt::Display for Currency {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::tests::fields;
    use super::*;

    #[test]
    fn currencies_are_three_letters_upper_cased() {
        let thb = Currency::default();
        assert_eq!(thb.as_str(), "THB");
        let mut problems = Problems::new();
        assert_eq!(
            Currency::parse(&mut problems, "currency", Some(" usd "), &thb),
            Currency::new_setting("USD")
        );
        assert_eq!(
            Currency::parse(&mut problems, "currency", None, &thb),
            Some(thb.clone())
        );
        assert_eq!(
            Currency::parse(&mut problems, "currency", Some(""), &thb),
            Some(thb.clone())
        );
        assert!(problems.is_empty());
        for bad in ["US", "USDD", "U$D", "ÉUR", "12A"] {
            let mut problems = Problems::new();
            assert_eq!(
                Currency::parse(&mut problems, "currency", Some(bad), &thb),
                None,
                "{bad}"
            );
            assert_eq!(
                fields(problems),
                vec![("currency".to_owned(), "invalid_format")]
            );
        }
        assert_eq!(Currency::new_setting("idr").unwrap().to_string(), "IDR");
        assert_eq!(serde_json::to_value(&thb).unwrap(), json!("THB"));
        assert_eq!(
            serde_json::from_value::<Currency>(json!("eur"))
                .unwrap()
                .as_str(),
            "EUR"
        );
        assert!(serde_json::from_value::<Currency>(json!("euro")).is_err());
    }
}
