//! Where things are: the Graph URLs of the library's items and of the sign-in, and the encodings
//! of paths and forms.

use std::fmt::Write as _;

use super::SharePointStore;

impl SharePointStore {
    fn drive_url(&self) -> String {
        format!(
            "{}/drives/{}",
            self.inner.base_url,
            encode(&self.inner.drive_id, id_char)
        )
    }

    /// The item at `path` followed by `suffix` (`":"` for the item itself, `":/content"`, …).
    pub(super) fn item_url(&self, path: &str, suffix: &str) -> String {
        format!("{}/root:/{}{suffix}", self.drive_url(), encode_path(path))
    }

    /// Where a new child of the folder `parent` (`None`: the library's root) is posted.
    pub(super) fn children_url(&self, parent: Option<&str>) -> String {
        match parent {
            Some(parent) => self.item_url(parent, ":/children"),
            None => format!("{}/root/children", self.drive_url()),
        }
    }

    pub(super) fn token_url(&self) -> String {
        format!(
            "{}/{}/oauth2/v2.0/token",
            self.inner.login_url,
            encode(&self.inner.tenant_id, unreserved)
        )
    }
}

/// Every folder above `path`, from the top (`a/b/c` → `a`, `a/b`).
pub(super) fn ancestors(path: &str) -> Vec<&str> {
    path.match_indices('/').map(|(at, _)| &path[..at]).collect()
}

/// RFC 3986's unreserved characters: never encoded.
fn unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// What an identifier (a drive id such as `b!Xy_z`) keeps as is in a path segment: the
/// unreserved characters and the sub-delimiters, which Graph's own examples leave unencoded.
fn id_char(b: u8) -> bool {
    unreserved(b)
        || matches!(
            b,
            b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'=' | b'@'
        )
}

/// `text` with every byte `keep` refuses percent-encoded (UTF-8 bytes, so `Ü` is `%C3%9C`).
fn encode(text: &str, keep: fn(u8) -> bool) -> String {
    let mut out = String::with_capacity(text.len());
    for &b in text.as_bytes() {
        if keep(b) {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// A store path with each segment encoded; the `/` between them kept.
fn encode_path(path: &str) -> String {
    path.split('/')
        .map(|segment| encode(segment, unreserved))
        .collect::<Vec<_>>()
        .join("/")
}

/// An `application/x-www-form-urlencoded` body: `*-._` and alphanumerics kept, space as `+`,
/// every other byte percent-encoded.
pub(super) fn form_encode(pairs: &[(&str, &str)]) -> String {
    let field = |text: &str| {
        let mut out = String::with_capacity(text.len());
        for &b in text.as_bytes() {
            match b {
                b' ' => out.push('+'),
                b if b.is_ascii_alphanumeric() || matches!(b, b'*' | b'-' | b'.' | b'_') => {
                    out.push(char::from(b));
                }
                b => {
                    let _ = write!(out, "%{b:02X}");
                }
            }
        }
        out
    };
    pairs
        .iter()
        .map(|(name, value)| format!("{}={}", field(name), field(value)))
        .collect::<Vec<_>>()
        .join("&")
}

#[cfg(test)]
mod tests {
    use super::super::GRAPH_SCOPE;
    use super::super::tests::settings;
    use super::*;

    #[test]
    fn items_are_addressed_by_encoded_path() {
        let store = SharePointStore::new(&settings());
        assert_eq!(
            store.item_url("Villas/A_1/Documents/Other/x.pdf", ":/content"),
            "https://graph.microsoft.com/v1.0/drives/b!Xy_z-1/root:/Villas/A_1/Documents/Other/x.pdf:/content"
        );
        assert_eq!(
            store.item_url("Exports/Villa Ünïcode plan.pdf", ":"),
            "https://graph.microsoft.com/v1.0/drives/b!Xy_z-1/root:/Exports/Villa%20%C3%9Cn%C3%AFcode%20plan.pdf:"
        );
        assert_eq!(
            store.children_url(None),
            "https://graph.microsoft.com/v1.0/drives/b!Xy_z-1/root/children"
        );
        assert_eq!(
            store.children_url(Some("Villas/A_1")),
            "https://graph.microsoft.com/v1.0/drives/b!Xy_z-1/root:/Villas/A_1:/children"
        );
        // A trailing slash in GRAPH_LOGIN_URL does not double the separator.
        assert_eq!(
            store.token_url(),
            "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/token"
        );
    }

    #[test]
    fn reserved_characters_never_reach_a_path_unencoded() {
        assert_eq!(encode("a:b?c#d/e%f", unreserved), "a%3Ab%3Fc%23d%2Fe%25f");
        assert_eq!(encode("b!x/y", id_char), "b!x%2Fy");
        assert_eq!(encode_path("a b/c~d"), "a%20b/c~d");
    }

    #[test]
    fn the_token_request_is_form_encoded() {
        let form = form_encode(&[
            ("client_secret", "s3cr3t~value+/=& x"),
            ("scope", GRAPH_SCOPE),
            ("grant_type", "client_credentials"),
        ]);
        assert_eq!(
            form,
            "client_secret=s3cr3t%7Evalue%2B%2F%3D%26+x\
             &scope=https%3A%2F%2Fgraph.microsoft.com%2F.default\
             &grant_type=client_credentials"
        );
    }

    #[test]
    fn ancestors_come_from_the_top() {
        assert_eq!(ancestors("a/b/c"), ["a", "a/b"]);
        assert!(ancestors("a").is_empty());
    }
}
