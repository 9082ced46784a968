//! The document store's settings: which backend keeps the files (`STORAGE_BACKEND`), the local
//! folder (`STORAGE_LOCAL_DIR`), the S3 bucket (`S3_*`, `AWS_ACCESS_KEY_ID`,
//! `AWS_SECRET_ACCESS_KEY`) and the SharePoint library (`GRAPH_*`). Only the chosen backend's
//! settings are read.

use std::{
    fmt,
    path::{Path, PathBuf},
};

use super::env::{DEFAULT_DEV_DIR, Env, dev_dir};

/// Where the document store keeps its files (`STORAGE_BACKEND`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StorageBackend {
    /// `local`: a folder of this machine (`STORAGE_LOCAL_DIR`), which every process must share.
    Local,
    /// `s3`: a bucket of an S3-compatible object store (`S3_*`).
    S3,
    /// `sharepoint`: a SharePoint document library through Microsoft Graph (`GRAPH_*`).
    SharePoint,
}

/// The bucket of `STORAGE_BACKEND=s3`: AWS S3 or any S3-compatible store (MinIO, Ceph, R2).
#[derive(Clone, PartialEq, Eq)]
pub struct S3Settings {
    /// `S3_BUCKET`.
    pub bucket: String,
    /// `S3_REGION` (`us-east-1` when `S3_ENDPOINT` is set and it is not).
    pub region: String,
    /// `S3_ENDPOINT`: the store's address when it is not AWS, without a trailing `/`; requests
    /// then name the bucket in the path, and `http://` is allowed.
    pub endpoint: Option<String>,
    /// `S3_PREFIX`: the key prefix of every object, without leading or trailing `/`.
    pub prefix: Option<String>,
    /// `AWS_ACCESS_KEY_ID`; with `secret_access_key`, both or neither. Neither: the usual AWS
    /// credential chain (environment, profile, instance or task role).
    pub access_key_id: Option<String>,
    /// `AWS_SECRET_ACCESS_KEY`: never logged.
    pub secret_access_key: Option<String>,
}

impl fmt::Debug for S3Settings {
    // Written by hand so that the secret key can never reach a log line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("S3Settings")
            .field("bucket", &self.bucket)
            .field("region", &self.region)
            .field("endpoint", &self.endpoint)
            .field("prefix", &self.prefix)
            .field("access_key_id", &self.access_key_id)
            .finish_non_exhaustive()
    }
}

/// The SharePoint document library of `STORAGE_BACKEND=sharepoint`, reached through Microsoft
/// Graph with the platform's own app registration (client credentials).
#[derive(Clone, PartialEq, Eq)]
pub struct GraphSettings {
    /// `GRAPH_TENANT_ID`: the Entra ID tenant (its id or a domain such as
    /// `contoso.onmicrosoft.com`).
    pub tenant_id: String,
    /// `GRAPH_CLIENT_ID`: the app registration's application (client) id.
    pub client_id: String,
    /// `GRAPH_CLIENT_SECRET`: never logged.
    pub client_secret: String,
    /// `GRAPH_DRIVE_ID`: the document library (`b!…`).
    pub drive_id: String,
    /// `GRAPH_BASE_URL` (default `https://graph.microsoft.com/v1.0`), without a trailing `/`.
    pub base_url: String,
    /// `GRAPH_LOGIN_URL` (default `https://login.microsoftonline.com`), without a trailing `/`.
    pub login_url: String,
}

impl GraphSettings {
    pub const DEFAULT_BASE_URL: &'static str = "https://graph.microsoft.com/v1.0";
    pub const DEFAULT_LOGIN_URL: &'static str = "https://login.microsoftonline.com";
}

impl fmt::Debug for GraphSettings {
    // Written by hand so that the client secret can never reach a log line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GraphSettings")
            .field("tenant_id", &self.tenant_id)
            .field("client_id", &self.client_id)
            .field("drive_id", &self.drive_id)
            .field("base_url", &self.base_url)
            .field("login_url", &self.login_url)
            .finish_non_exhaustive()
    }
}

/// `STORAGE_BACKEND`: `local` (also when empty), `s3` or `sharepoint`; problems go to `env` like
/// every other setting's.
pub(super) fn storage_backend(env: &mut Env<'_>) -> StorageBackend {
    match env
        .required("STORAGE_BACKEND", || "local".to_owned())
        .as_str()
    {
        "local" | "" => StorageBackend::Local,
        "s3" => StorageBackend::S3,
        "sharepoint" => StorageBackend::SharePoint,
        other => {
            env.problems.push(format!(
                "STORAGE_BACKEND must be local, s3 or sharepoint, got {other:?}"
            ));
            StorageBackend::Local
        }
    }
}

/// `STORAGE_LOCAL_DIR`: required in production when the backend is local; otherwise `storage`
/// in [`dev_dir`] when it is not set.
pub(super) fn storage_local_dir(env: &mut Env<'_>, backend: StorageBackend) -> PathBuf {
    // With `DEV_DIR`'s own default, as docs/configuration.md gives it.
    env.record(
        "STORAGE_LOCAL_DIR",
        Path::new(DEFAULT_DEV_DIR).join("storage").display(),
    );
    match env.raw("STORAGE_LOCAL_DIR") {
        Some(dir) => PathBuf::from(dir),
        None if backend == StorageBackend::Local && env.production => {
            env.problems.push(
                "STORAGE_LOCAL_DIR is required in production when STORAGE_BACKEND is local".into(),
            );
            PathBuf::new()
        }
        None => dev_dir().join("storage"),
    }
}

/// `S3_*` and the AWS credentials of `STORAGE_BACKEND=s3`; problems go to `env` like every other
/// setting's. Required in every environment: there is no bucket to fall back on.
pub(super) fn s3_settings(env: &mut Env<'_>) -> S3Settings {
    let endpoint = env.raw("S3_ENDPOINT").map(|raw| {
        if !is_http_address(&raw) {
            env.problems.push(format!(
                "S3_ENDPOINT must be an http(s) address such as http://127.0.0.1:9000, got {raw:?}"
            ));
        }
        raw.trim_end_matches('/').to_owned()
    });
    let bucket = match env.raw("S3_BUCKET") {
        Some(bucket) => {
            // AWS's rules are stricter (lowercase, at most 63), and stores differ on the
            // details (older buckets and other stores allow capitals and `_`): refused here is
            // what is a bucket name nowhere, and anything that would change the requests'
            // paths (`/`, `?`, `#`, `%`, spaces).
            if bucket.len() < 3
                || bucket.len() > 255
                || !bucket
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
            {
                env.problems.push(format!(
                    "S3_BUCKET must be a bucket name (3 to 255 letters, digits, '.', '-' or '_'), got {bucket:?}"
                ));
            }
            bucket
        }
        None => {
            env.problems
                .push("S3_BUCKET is required when STORAGE_BACKEND is s3".into());
            String::new()
        }
    };
    let region = match env.raw("S3_REGION") {
        Some(region) => {
            if !region
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
            {
                env.problems.push(format!(
                    "S3_REGION must be a region name such as eu-west-1, got {region:?}"
                ));
            }
            region
        }
        // Self-hosted stores mostly ignore the region, but requests are signed with one.
        None if endpoint.is_some() => "us-east-1".to_owned(),
        None => {
            env.problems.push(
                "S3_REGION is required when STORAGE_BACKEND is s3 and S3_ENDPOINT is not set"
                    .into(),
            );
            String::new()
        }
    };
    let prefix = env.raw("S3_PREFIX").and_then(|raw| {
        let prefix = raw.trim_matches('/');
        if prefix.is_empty() {
            return None;
        }
        let ok = !prefix.contains('\\')
            && !prefix.contains(char::is_control)
            && prefix
                .split('/')
                .all(|seg| !seg.is_empty() && seg != "." && seg != "..");
        if !ok {
            env.problems.push(format!(
                "S3_PREFIX must be /-separated names, none empty, . or .., got {raw:?}"
            ));
            return None;
        }
        Some(prefix.to_owned())
    });
    // The secret's value is never repeated in a message.
    let (access_key_id, secret_access_key) = match (
        env.raw("AWS_ACCESS_KEY_ID"),
        env.raw("AWS_SECRET_ACCESS_KEY"),
    ) {
        (Some(id), Some(secret)) => (Some(id), Some(secret)),
        (None, None) => (None, None),
        (Some(_), None) => {
            env.problems
                .push("AWS_SECRET_ACCESS_KEY is required when AWS_ACCESS_KEY_ID is set".into());
            (None, None)
        }
        (None, Some(_)) => {
            env.problems
                .push("AWS_ACCESS_KEY_ID is required when AWS_SECRET_ACCESS_KEY is set".into());
            (None, None)
        }
    };
    S3Settings {
        bucket,
        region,
        endpoint,
        prefix,
        access_key_id,
        secret_access_key,
    }
}

/// `GRAPH_*` of `STORAGE_BACKEND=sharepoint`; problems go to `env` like every other setting's.
/// The ids are required in every environment: there is no library to fall back on.
pub(super) fn graph_settings(env: &mut Env<'_>) -> GraphSettings {
    let tenant_id = graph_id(
        env,
        "GRAPH_TENANT_ID",
        "a tenant id or domain such as contoso.onmicrosoft.com",
        |c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.'),
    );
    let client_id = graph_id(env, "GRAPH_CLIENT_ID", "an application (client) id", |c| {
        c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_')
    });
    let drive_id = graph_id(env, "GRAPH_DRIVE_ID", "a drive id such as b!Tx3…", |c| {
        c.is_ascii_alphanumeric() || matches!(c, '!' | '-' | '_' | '.' | '~')
    });
    // The secret's value is never repeated in a message.
    let client_secret = env.raw("GRAPH_CLIENT_SECRET").unwrap_or_else(|| {
        env.problems
            .push("GRAPH_CLIENT_SECRET is required when STORAGE_BACKEND is sharepoint".into());
        String::new()
    });
    let base_url = graph_url(env, "GRAPH_BASE_URL", GraphSettings::DEFAULT_BASE_URL);
    let login_url = graph_url(env, "GRAPH_LOGIN_URL", GraphSettings::DEFAULT_LOGIN_URL);
    GraphSettings {
        tenant_id,
        client_id,
        client_secret,
        drive_id,
        base_url,
        login_url,
    }
}

/// A required id of the Graph settings, made only of `allowed` characters: ids go into the
/// requests' paths as they are.
fn graph_id(env: &mut Env<'_>, name: &str, what: &str, allowed: fn(char) -> bool) -> String {
    match env.raw(name) {
        Some(value) => {
            if !value.chars().all(allowed) {
                env.problems
                    .push(format!("{name} must be {what}, got {value:?}"));
            }
            value
        }
        None => {
            env.problems.push(format!(
                "{name} is required when STORAGE_BACKEND is sharepoint"
            ));
            String::new()
        }
    }
}

/// An address of the Graph settings: `default` when unset, without a trailing `/`.
fn graph_url(env: &mut Env<'_>, name: &str, default: &str) -> String {
    env.record(name, default);
    match env.raw(name) {
        None => default.to_owned(),
        Some(raw) => {
            if !is_http_address(&raw) {
                env.problems.push(format!(
                    "{name} must be an http(s) address such as {default}, got {raw:?}"
                ));
            } else if env.production && !is_https_or_loopback(&raw) {
                // The client secret and the tokens travel to these addresses.
                env.problems.push(format!(
                    "{name} must be an https address outside development (plain http only on \
                     loopback, for a stand-in), got {raw:?}"
                ));
            }
            raw.trim_end_matches('/').to_owned()
        }
    }
}

/// An `https://` address, or an `http://` one on this machine's loopback.
fn is_https_or_loopback(raw: &str) -> bool {
    reqwest::Url::parse(raw).is_ok_and(|url| {
        let host = url.host_str().unwrap_or_default();
        let host = host.trim_start_matches('[').trim_end_matches(']');
        url.scheme() == "https"
            || host.eq_ignore_ascii_case("localhost")
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    })
}

/// An absolute `http://` or `https://` address with a host.
fn is_http_address(raw: &str) -> bool {
    reqwest::Url::parse(raw)
        .is_ok_and(|url| matches!(url.scheme(), "http" | "https") && url.has_host())
}

#[cfg(test)]
mod tests {
    use super::{S3Settings, StorageBackend};
    use crate::settings::{
        CoreSettings,
        test_support::{KEY, core_with, lookup},
    };

    #[test]
    fn the_document_store_is_local_by_default() {
        let core = core_with(&[]).unwrap();
        assert_eq!(core.storage_backend, StorageBackend::Local);
        assert!(core.s3.is_none() && core.graph.is_none());
        // Another backend's variables mean nothing to the local one, malformed or not.
        let core = core_with(&[
            ("STORAGE_BACKEND", "local"),
            ("S3_ENDPOINT", "minio:9000"),
            ("GRAPH_BASE_URL", "graph"),
        ])
        .unwrap();
        assert!(core.s3.is_none() && core.graph.is_none());
    }

    #[test]
    fn production_on_s3_needs_no_local_folder() {
        let core = CoreSettings::from_lookup(&lookup(&[
            ("APP_ENV", "production"),
            ("DATABASE_URL", "postgres://db/villa"),
            ("REDIS_URL", "redis://cache:6379"),
            ("DATA_ENCRYPTION_KEY", KEY),
            ("STORAGE_BACKEND", "s3"),
            ("S3_BUCKET", "villa-documents"),
            ("S3_REGION", "ap-southeast-1"),
        ]))
        .unwrap();
        assert_eq!(core.storage_backend, StorageBackend::S3);
        assert_eq!(
            core.s3,
            Some(S3Settings {
                bucket: "villa-documents".to_owned(),
                region: "ap-southeast-1".to_owned(),
                endpoint: None,
                prefix: None,
                // The AWS credential chain.
                access_key_id: None,
                secret_access_key: None,
            })
        );
        assert!(core.graph.is_none());
    }

    #[test]
    fn the_s3_settings_are_read_and_the_secret_never_shown() {
        let core = core_with(&[
            ("STORAGE_BACKEND", "s3"),
            ("S3_BUCKET", " villa "),
            ("S3_ENDPOINT", "http://127.0.0.1:9000/"),
            ("S3_PREFIX", "/tenants/acme/"),
            ("AWS_ACCESS_KEY_ID", "minio-admin"),
            ("AWS_SECRET_ACCESS_KEY", "s3cret-minio-key"),
        ])
        .unwrap();
        let s3 = core.s3.as_ref().unwrap();
        assert_eq!(s3.bucket, "villa");
        // Requests are signed with a region even where the store ignores it.
        assert_eq!(s3.region, "us-east-1");
        assert_eq!(s3.endpoint.as_deref(), Some("http://127.0.0.1:9000"));
        assert_eq!(s3.prefix.as_deref(), Some("tenants/acme"));
        assert_eq!(s3.access_key_id.as_deref(), Some("minio-admin"));
        assert_eq!(s3.secret_access_key.as_deref(), Some("s3cret-minio-key"));
        let shown = format!("{core:?} {s3:?}");
        assert!(shown.contains("minio-admin"), "{shown}");
        assert!(!shown.contains("s3cret"), "{shown}");
        let given_region = core_with(&[
            ("STORAGE_BACKEND", "s3"),
            ("S3_BUCKET", "villa"),
            ("S3_ENDPOINT", "https://acct.r2.cloudflarestorage.com"),
            ("S3_REGION", "auto"),
            ("S3_PREFIX", "/"),
        ])
        .unwrap();
        let s3 = given_region.s3.unwrap();
        assert_eq!(s3.region, "auto");
        assert_eq!(s3.prefix, None);
    }

    #[test]
    fn s3_problems_name_their_variables() {
        let missing = core_with(&[("STORAGE_BACKEND", "s3")]).unwrap_err();
        for expected in [
            "S3_BUCKET is required when STORAGE_BACKEND is s3",
            "S3_REGION is required when STORAGE_BACKEND is s3 and S3_ENDPOINT is not set",
        ] {
            assert!(missing.contains(expected), "{expected:?} not in: {missing}");
        }
        let malformed = core_with(&[
            ("STORAGE_BACKEND", "s3"),
            ("S3_BUCKET", "my bucket/x"),
            ("S3_REGION", "eu west"),
            ("S3_ENDPOINT", "minio:9000"),
            ("S3_PREFIX", "tenants/../other"),
        ])
        .unwrap_err();
        for expected in [
            "S3_BUCKET must be a bucket name",
            "S3_REGION must be a region name",
            "S3_ENDPOINT must be an http(s) address",
            "S3_PREFIX must be /-separated names",
        ] {
            assert!(
                malformed.contains(expected),
                "{expected:?} not in: {malformed}"
            );
        }
        for bucket in ["villa?x", "villa#1", "villa%2F", "vi"] {
            let refused =
                core_with(&[("STORAGE_BACKEND", "s3"), ("S3_BUCKET", bucket)]).unwrap_err();
            assert!(
                refused.contains("S3_BUCKET must be a bucket name"),
                "{bucket}: {refused}"
            );
        }
        for prefix in ["a//b", "./a", "a\\b"] {
            let message = core_with(&[
                ("STORAGE_BACKEND", "s3"),
                ("S3_BUCKET", "villa"),
                ("S3_REGION", "us-east-1"),
                ("S3_PREFIX", prefix),
            ])
            .unwrap_err();
            assert!(message.contains("S3_PREFIX"), "{prefix:?}: {message}");
        }
        let base = [
            ("STORAGE_BACKEND", "s3"),
            ("S3_BUCKET", "villa"),
            ("S3_REGION", "us-east-1"),
        ];
        let only_id =
            core_with(&[base[0], base[1], base[2], ("AWS_ACCESS_KEY_ID", "AKIA1")]).unwrap_err();
        assert!(
            only_id.contains("AWS_SECRET_ACCESS_KEY is required when AWS_ACCESS_KEY_ID is set"),
            "{only_id}"
        );
        let only_secret = core_with(&[
            base[0],
            base[1],
            base[2],
            ("AWS_SECRET_ACCESS_KEY", "s3cret-key"),
        ])
        .unwrap_err();
        assert!(
            only_secret.contains("AWS_ACCESS_KEY_ID is required when AWS_SECRET_ACCESS_KEY is set"),
            "{only_secret}"
        );
        assert!(!only_secret.contains("s3cret"), "{only_secret}");
    }

    #[test]
    fn the_sharepoint_settings_are_read_and_the_secret_never_shown() {
        let core = core_with(&[
            ("STORAGE_BACKEND", "sharepoint"),
            ("GRAPH_TENANT_ID", "contoso.onmicrosoft.com"),
            ("GRAPH_CLIENT_ID", "6731de76-14a6-49ae-97bc-6eba6914391e"),
            ("GRAPH_CLIENT_SECRET", "s3cret~graph.value"),
            ("GRAPH_DRIVE_ID", "b!Tx3_aBc-dEf"),
        ])
        .unwrap();
        assert_eq!(core.storage_backend, StorageBackend::SharePoint);
        assert!(core.s3.is_none());
        let graph = core.graph.as_ref().unwrap();
        assert_eq!(graph.tenant_id, "contoso.onmicrosoft.com");
        assert_eq!(graph.client_id, "6731de76-14a6-49ae-97bc-6eba6914391e");
        assert_eq!(graph.client_secret, "s3cret~graph.value");
        assert_eq!(graph.drive_id, "b!Tx3_aBc-dEf");
        assert_eq!(graph.base_url, "https://graph.microsoft.com/v1.0");
        assert_eq!(graph.login_url, "https://login.microsoftonline.com");
        let shown = format!("{core:?} {graph:?}");
        assert!(shown.contains("b!Tx3_aBc-dEf"), "{shown}");
        assert!(!shown.contains("s3cret"), "{shown}");
        let stand_in = core_with(&[
            ("STORAGE_BACKEND", "sharepoint"),
            ("GRAPH_TENANT_ID", "tenant"),
            ("GRAPH_CLIENT_ID", "client"),
            ("GRAPH_CLIENT_SECRET", "secret"),
            ("GRAPH_DRIVE_ID", "drive"),
            ("GRAPH_BASE_URL", "http://127.0.0.1:8098/v1.0/"),
            ("GRAPH_LOGIN_URL", "http://127.0.0.1:8098/"),
        ])
        .unwrap();
        let graph = stand_in.graph.unwrap();
        assert_eq!(graph.base_url, "http://127.0.0.1:8098/v1.0");
        assert_eq!(graph.login_url, "http://127.0.0.1:8098");
    }

    #[test]
    fn sharepoint_problems_name_their_variables() {
        let missing = core_with(&[("STORAGE_BACKEND", "sharepoint")]).unwrap_err();
        for var in [
            "GRAPH_TENANT_ID",
            "GRAPH_CLIENT_ID",
            "GRAPH_CLIENT_SECRET",
            "GRAPH_DRIVE_ID",
        ] {
            let expected = format!("{var} is required when STORAGE_BACKEND is sharepoint");
            assert!(
                missing.contains(&expected),
                "{expected:?} not in: {missing}"
            );
        }
        let malformed = core_with(&[
            ("STORAGE_BACKEND", "sharepoint"),
            ("GRAPH_TENANT_ID", "contoso/../x"),
            ("GRAPH_CLIENT_ID", "client id"),
            ("GRAPH_CLIENT_SECRET", "s3cret-graph"),
            ("GRAPH_DRIVE_ID", "b!x/children"),
            ("GRAPH_BASE_URL", "graph.microsoft.com/v1.0"),
            ("GRAPH_LOGIN_URL", "ftp://login"),
        ])
        .unwrap_err();
        for expected in [
            "GRAPH_TENANT_ID must be a tenant id or domain",
            "GRAPH_CLIENT_ID must be an application (client) id",
            "GRAPH_DRIVE_ID must be a drive id",
            "GRAPH_BASE_URL must be an http(s) address",
            "GRAPH_LOGIN_URL must be an http(s) address",
        ] {
            assert!(
                malformed.contains(expected),
                "{expected:?} not in: {malformed}"
            );
        }
        assert!(!malformed.contains("s3cret"), "{malformed}");
        // Outside development the secret and the tokens travel over TLS only; plain http
        // stays possible on loopback, for a stand-in.
        let plain = core_with(&[
            ("APP_ENV", "production"),
            ("STORAGE_BACKEND", "sharepoint"),
            ("GRAPH_TENANT_ID", "tenant"),
            ("GRAPH_CLIENT_ID", "client"),
            ("GRAPH_CLIENT_SECRET", "secret"),
            ("GRAPH_DRIVE_ID", "drive"),
            ("GRAPH_BASE_URL", "http://graph.internal/v1.0"),
            ("GRAPH_LOGIN_URL", "http://[::1]:8098"),
        ])
        .unwrap_err();
        assert!(
            plain.contains("GRAPH_BASE_URL must be an https address outside development"),
            "{plain}"
        );
        assert!(!plain.contains("GRAPH_LOGIN_URL"), "{plain}");
    }
}
