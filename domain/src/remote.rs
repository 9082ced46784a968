//! What every client of a service that is not ours (the PMS, Microsoft Graph) does alike: read
//! a `Retry-After`, back off with jitter, and put a failed request into words.

use std::time::Duration;

use chrono::{DateTime, Utc};

/// The wait a `Retry-After` header asks for: whole seconds or an HTTP date (a date already past
/// is no wait). `None` when it says neither. Callers bound it as their service warrants.
pub fn parse_retry_after(value: &str, now: DateTime<Utc>) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = DateTime::parse_from_rfc2822(value).ok()?;
    Some((at.with_timezone(&Utc) - now).to_std().unwrap_or_default())
}

/// The wait before retry number `retry` (from 0): `base * 2^retry`, at most `cap`, of which the
/// upper half is random (`unit` in 0..=1) so that clients retrying together spread out while
/// none waits less than half the step.
pub fn backoff(base: Duration, retry: u32, unit: f64, cap: Duration) -> Duration {
    let step = base.saturating_mul(1u32 << retry.min(20)).min(cap);
    step.mul_f64(0.5 + 0.5 * unit.clamp(0.0, 1.0))
}

/// A random number in 0..=1 for [`backoff`]'s jitter.
pub fn jitter() -> f64 {
    let bits = uuid::Uuid::new_v4().as_u128() as u32;
    f64::from(bits) / f64::from(u32::MAX)
}

/// A reqwest failure in words, with its causes and without the request's address (an upload
/// URL is a credential of sorts, and messages stay short).
pub fn describe(error: reqwest::Error) -> String {
    let kind = if error.is_timeout() {
        "timed out"
    } else if error.is_connect() {
        "connection failed"
    } else {
        "request failed"
    };
    let error = error.without_url();
    let mut text = format!("{kind}: {error}");
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = std::error::Error::source(cause);
    }
    text
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone as _;

    use super::*;

    #[test]
    fn retry_after_is_seconds_or_a_date() {
        let now = Utc.with_ymd_and_hms(2015, 10, 21, 7, 28, 0).unwrap();
        assert_eq!(parse_retry_after("7", now), Some(Duration::from_secs(7)));
        assert_eq!(parse_retry_after(" 0 ", now), Some(Duration::ZERO));
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:09 GMT", now),
            Some(Duration::from_secs(9))
        );
        // A date already past: go now.
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:27:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(
            parse_retry_after("18446744073709551615", now),
            Some(Duration::from_secs(u64::MAX))
        );
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-3", now), None);
        assert_eq!(parse_retry_after("", now), None);
    }

    #[test]
    fn jitter_is_a_unit() {
        for _ in 0..100 {
            assert!((0.0..=1.0).contains(&jitter()));
        }
    }
}
