//! Outgoing e-mail (`SMTP_URL`, `SMTP_FROM`): what the `mail` jobs send through.

use std::fmt;

use super::env::Env;

#[derive(Clone)]
pub struct MailSettings {
    /// `SMTP_URL` (unset by default: no e-mail is sent): the relay, as lettre reads it, e.g.
    /// `smtps://user:password@smtp.example.com` or `smtp://127.0.0.1:2525` (plain, loopback
    /// only: the development stand-in). It may hold a password, so it never reaches a log line.
    pub smtp_url: Option<String>,
    /// `SMTP_FROM` (default `Villa operations <operations@localhost>`): the sender.
    pub from: String,
}

impl fmt::Debug for MailSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MailSettings")
            .field("smtp_url", &self.smtp_url.as_ref().map(|_| "<set>"))
            .field("from", &self.from)
            .finish()
    }
}

pub const DEFAULT_SMTP_FROM: &str = "Villa operations <operations@localhost>";

pub(super) fn mail_settings(env: &mut Env<'_>) -> MailSettings {
    let smtp_url = env.raw("SMTP_URL");
    if let Some(url) = &smtp_url
        && !(url.starts_with("smtp://") || url.starts_with("smtps://"))
    {
        env.problems
            .push("SMTP_URL must start with smtp:// or smtps://".to_owned());
    }
    let from = env.raw("SMTP_FROM");
    env.record("SMTP_FROM", DEFAULT_SMTP_FROM);
    MailSettings {
        smtp_url,
        from: from.unwrap_or_else(|| DEFAULT_SMTP_FROM.to_owned()),
    }
}
