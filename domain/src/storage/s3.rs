//! The S3-compatible backend (AWS S3, MinIO, Ceph, R2 and the like) through `object_store`: the
//! object at `storagePath` is the key `<S3_PREFIX>/<storagePath>` of the bucket, and a folder is
//! the zero-byte object `<key>/`, so that S3 browsers show the tree, empty folders included.
//!
//! `object_store` names objects with its `Path`, which can never end with `/`: the folder
//! markers are therefore written and deleted by requests of this module, signed with
//! `object_store`'s own SigV4 signer and credentials. Everything else (puts, multipart uploads,
//! reads, listings, bulk deletes, and their retries) is `object_store`'s.

use std::collections::BTreeSet;
use std::fmt::{self, Write as _};
use std::time::Duration;

use bytes::Bytes;
use futures::{StreamExt, TryStreamExt, stream};
use object_store::aws::{AmazonS3, AmazonS3Builder, AmazonS3ConfigKey, AwsAuthorizer};
use object_store::client::{HttpRequest, HttpRequestBody};
use object_store::path::Path;
use object_store::{
    ClientOptions, ObjectStore, ObjectStoreExt, PutPayload, PutResult, WriteMultipart,
};
use reqwest::{Method, StatusCode, header::CONTENT_LENGTH};
use tokio::io::AsyncReadExt;

use super::{ObjectStream, StorageError, StoragePath, StoredObject};
use crate::settings::S3Settings;

/// The backend's name in errors.
const BACKEND: &str = "s3";

/// Objects larger than this go up in multipart uploads of parts of this size (S3 wants parts of
/// at least 5 MiB but the last), so that a large file is never held whole in memory.
const PART: usize = 8 * 1024 * 1024;

/// Parts of one upload sent at the same time: what one upload holds in memory is about this
/// many parts, plus the one being read.
const PARTS_IN_FLIGHT: usize = 2;

/// Tries of one folder-marker request (network errors, 5xx, 429), and marker requests run at
/// the same time by [`S3Store::delete_tree`].
const MARKER_ATTEMPTS: u32 = 3;
const MARKERS_IN_FLIGHT: usize = 8;

/// The `AWS_*` environment variables the store reads, beside the settings' `AWS_ACCESS_KEY_ID`
/// and `AWS_SECRET_ACCESS_KEY`: the rest of the AWS credential chain (session token, web
/// identity, container and instance roles) and how objects are written (server-side
/// encryption, checksums, requester pays). Never where the store is: the bucket, region and
/// endpoint are the settings' alone.
const AWS_ENV: [&str; 17] = [
    "AWS_SESSION_TOKEN",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_ROLE_ARN",
    "AWS_ROLE_SESSION_NAME",
    "AWS_ENDPOINT_URL_STS",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
    "AWS_METADATA_ENDPOINT",
    "AWS_IMDSV1_FALLBACK",
    "AWS_SERVER_SIDE_ENCRYPTION",
    "AWS_SSE_KMS_KEY_ID",
    "AWS_SSE_BUCKET_KEY_ENABLED",
    "AWS_SSE_CUSTOMER_KEY_BASE64",
    "AWS_CHECKSUM_ALGORITHM",
    "AWS_REQUEST_PAYER",
    "AWS_UNSIGNED_PAYLOAD",
];

/// The document store in one bucket of an S3-compatible object store.
#[derive(Debug, Clone)]
pub struct S3Store {
    store: AmazonS3,
    /// For the folder markers' requests.
    http: reqwest::Client,
    bucket: String,
    /// The bucket's address as `store` uses it (`<endpoint>/<bucket>` when path-style).
    bucket_url: String,
    region: String,
    /// `S3_PREFIX` without leading or trailing `/`; `None` when empty.
    prefix: Option<String>,
}

fn failure(op: &'static str, key: &str, message: impl fmt::Display) -> StorageError {
    StorageError::Backend {
        backend: BACKEND,
        op,
        path: key.to_owned(),
        message: message.to_string(),
    }
}

impl S3Store {
    /// The store of `settings`. Nothing is sent yet: a bucket that cannot be reached shows at
    /// the first request.
    pub fn new(settings: &S3Settings) -> Result<S3Store, StorageError> {
        let failed = |message: String| failure("connect", &settings.bucket, message);
        // No deadline for a whole request: a download streamed to a slow client may take
        // longer than any, and a stalled connection is caught by the read timeout instead.
        let options = ClientOptions::new()
            .with_timeout_disabled()
            .with_connect_timeout(Duration::from_secs(10))
            .with_read_timeout(Duration::from_secs(60));
        // The rest of the credential chain and the write options from the environment, as the
        // AWS SDKs read them ([`AWS_ENV`]); nothing that says where the store is, so an
        // `AWS_ENDPOINT_URL` left in the environment cannot send the files elsewhere.
        let mut builder = AmazonS3Builder::new().with_client_options(options);
        for name in AWS_ENV {
            // Empty counts as unset, as for every setting (compose passes them through empty).
            if let (Some(value), Ok(key)) = (
                std::env::var(name).ok().filter(|v| !v.trim().is_empty()),
                name.to_ascii_lowercase().parse::<AmazonS3ConfigKey>(),
            ) {
                builder = builder.with_config(key, value);
            }
        }
        builder = builder
            .with_bucket_name(&settings.bucket)
            .with_region(&settings.region);
        if let Some(endpoint) = &settings.endpoint {
            builder = builder
                .with_endpoint(endpoint)
                .with_virtual_hosted_style_request(false)
                .with_allow_http(true);
        }
        if let (Some(id), Some(secret)) = (&settings.access_key_id, &settings.secret_access_key) {
            builder = builder
                .with_access_key_id(id)
                .with_secret_access_key(secret);
        }
        let bucket_url = bucket_url(&builder, &settings.bucket, &settings.region);
        let store = builder.build().map_err(|e| failed(e.to_string()))?;
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(60))
            .build()
            .map_err(|e| failed(e.to_string()))?;
        let prefix = settings
            .prefix
            .as_deref()
            .map(|p| p.trim_matches('/'))
            .filter(|p| !p.is_empty())
            .map(str::to_owned);
        Ok(S3Store {
            store,
            http,
            bucket: settings.bucket.clone(),
            bucket_url,
            region: settings.region.clone(),
            prefix,
        })
    }

    /// The key of `path`: `<prefix>/<storagePath>`.
    fn key(&self, path: &StoragePath) -> String {
        match &self.prefix {
            Some(prefix) => format!("{prefix}/{path}"),
            None => path.to_string(),
        }
    }

    /// The key of `path` as `object_store` names it. Its characters are kept as they are (a
    /// `Path` refuses only control characters, `.`/`..` and empty segments, which a
    /// `StoragePath` does not have), so the key is the storage path itself.
    fn location(&self, op: &'static str, path: &StoragePath) -> Result<Path, StorageError> {
        let key = self.key(path);
        Path::parse(&key).map_err(|e| failure(op, &key, e))
    }

    fn object(&self, location: &Path) -> StoredObject {
        StoredObject {
            file_id: location.to_string(),
            url: format!("s3://{}/{location}", self.bucket),
            etag: None,
        }
    }

    /// `storageFileId` is the key, which stays the same when the object is replaced; the ETag
    /// identifies this version of it.
    fn stored(&self, location: &Path, put: &PutResult) -> StoredObject {
        StoredObject {
            etag: put.e_tag.clone(),
            ..self.object(location)
        }
    }

    pub async fn create_folder(&self, path: &StoragePath) -> Result<(), StorageError> {
        let location = self.location("create_folder", path)?;
        // Writing the same empty marker twice is harmless, so concurrent creators agree.
        self.marker_request("create_folder", Method::PUT, &marker_key(&location))
            .await
    }

    /// Writes the object, replacing any. Up to [`PART`] bytes in one request; more in a
    /// multipart upload of slices of `bytes` (never copied).
    pub async fn put(
        &self,
        path: &StoragePath,
        bytes: Bytes,
    ) -> Result<StoredObject, StorageError> {
        let location = self.location("put", path)?;
        let put = if bytes.len() <= PART {
            self.store.put(&location, PutPayload::from(bytes)).await
        } else {
            self.put_parts(&location, bytes).await
        };
        let put = put.map_err(|e| failure("put", location.as_ref(), e))?;
        Ok(self.stored(&location, &put))
    }

    async fn put_parts(
        &self,
        location: &Path,
        bytes: Bytes,
    ) -> Result<PutResult, object_store::Error> {
        let upload = self.store.put_multipart(location).await?;
        let mut writer = WriteMultipart::new_with_chunk_size(upload, PART);
        for start in (0..bytes.len()).step_by(PART) {
            let chunk = bytes.slice(start..bytes.len().min(start + PART));
            if let Err(e) = writer.wait_for_capacity(PARTS_IN_FLIGHT).await {
                // Best effort: a multipart upload left open only costs storage until the
                // bucket's lifecycle rule, if any, removes it.
                let _ = writer.abort().await;
                return Err(e);
            }
            writer.put(chunk);
        }
        // Aborts the upload itself when a part or the completion fails.
        writer.finish().await
    }

    /// Writes the file `source` as the object, replacing any: one request for up to [`PART`]
    /// bytes, else a multipart upload reading the file one part at a time.
    pub async fn put_file(
        &self,
        path: &StoragePath,
        source: &std::path::Path,
    ) -> Result<StoredObject, StorageError> {
        let location = self.location("put", path)?;
        let local = |e: std::io::Error| StorageError::Io {
            path: source.display().to_string(),
            source: e,
        };
        let failed = |e: object_store::Error| failure("put", location.as_ref(), e);
        let mut file = tokio::fs::File::open(source).await.map_err(local)?;
        let len = file.metadata().await.map_err(local)?.len();
        if let Some(small) = usize::try_from(len).ok().filter(|n| *n <= PART) {
            let bytes = read_part(&mut file, small).await.map_err(local)?;
            let put = self
                .store
                .put(&location, PutPayload::from(bytes))
                .await
                .map_err(failed)?;
            return Ok(self.stored(&location, &put));
        }
        let upload = self.store.put_multipart(&location).await.map_err(failed)?;
        let mut writer = WriteMultipart::new_with_chunk_size(upload, PART);
        loop {
            if let Err(e) = writer.wait_for_capacity(PARTS_IN_FLIGHT).await {
                let _ = writer.abort().await;
                return Err(failed(e));
            }
            match read_part(&mut file, PART).await {
                Ok(part) if part.is_empty() => break,
                Ok(part) => writer.put(part),
                Err(e) => {
                    let _ = writer.abort().await;
                    return Err(local(e));
                }
            }
        }
        let put = writer.finish().await.map_err(failed)?;
        Ok(self.stored(&location, &put))
    }

    pub async fn get(&self, path: &StoragePath) -> Result<Option<Vec<u8>>, StorageError> {
        let location = self.location("get", path)?;
        let failed = |e: object_store::Error| failure("get", location.as_ref(), e);
        match self.store.get(&location).await {
            Ok(object) => Ok(Some(Vec::from(object.bytes().await.map_err(failed)?))),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(failed(e)),
        }
    }

    /// The object as the response body streams in; a read error mid-way is retried by
    /// `object_store` from where it stopped. A folder is not an object (`None`).
    pub async fn get_stream(
        &self,
        path: &StoragePath,
    ) -> Result<Option<ObjectStream>, StorageError> {
        let location = self.location("get", path)?;
        match self.store.get(&location).await {
            Ok(object) => Ok(Some(ObjectStream {
                len: object.meta.size,
                body: object.into_stream().map_err(std::io::Error::from).boxed(),
            })),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(failure("get", location.as_ref(), e)),
        }
    }

    pub async fn delete(&self, path: &StoragePath) -> Result<(), StorageError> {
        let location = self.location("delete", path)?;
        match self.store.delete(&location).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(failure("delete", location.as_ref(), e)),
        }
    }

    /// Deletes every object under the folder (in bulk requests), then the folder markers.
    pub async fn delete_tree(&self, path: &StoragePath) -> Result<(), StorageError> {
        let location = self.location("delete_tree", path)?;
        let failed = |e: object_store::Error| failure("delete_tree", location.as_ref(), e);
        let listed: Vec<object_store::ObjectMeta> = self
            .store
            .list(Some(&location))
            .try_collect()
            .await
            .map_err(failed)?;
        // A marker `<key>/` is listed as `<key>` (a `Path` drops the trailing `/`), like a
        // zero-byte file; deleting the one that is not there is harmless either way. The
        // folder's own marker is deleted even if a store does not list it.
        let mut markers = BTreeSet::from([marker_key(&location)]);
        markers.extend(
            listed
                .iter()
                .filter(|object| object.size == 0)
                .map(|object| marker_key(&object.location)),
        );
        let keys = stream::iter(
            listed
                .into_iter()
                .map(|object| Ok::<_, object_store::Error>(object.location)),
        )
        .boxed();
        let mut deleted = self.store.delete_stream(keys);
        while let Some(outcome) = deleted.next().await {
            match outcome {
                Ok(_) | Err(object_store::Error::NotFound { .. }) => {}
                Err(e) => return Err(failed(e)),
            }
        }
        stream::iter(markers)
            .map(|marker| async move {
                self.marker_request("delete_tree", Method::DELETE, &marker)
                    .await
            })
            .buffer_unordered(MARKERS_IN_FLIGHT)
            .try_collect::<()>()
            .await
    }

    /// Whether the folder has its marker or anything else under it: one listing request.
    pub async fn folder_exists(&self, path: &StoragePath) -> Result<bool, StorageError> {
        let location = self.location("folder_exists", path)?;
        match self.store.list(Some(&location)).next().await {
            None => Ok(false),
            Some(Ok(_)) => Ok(true),
            Some(Err(e)) => Err(failure("folder_exists", location.as_ref(), e)),
        }
    }

    /// Sends `method` for the folder marker `marker` (a key ending in `/`), trying again after
    /// network errors, 5xx and 429 answers. A DELETE of a missing marker succeeds.
    async fn marker_request(
        &self,
        op: &'static str,
        method: Method,
        marker: &str,
    ) -> Result<(), StorageError> {
        let mut attempt = 1;
        loop {
            let request = self
                .signed_marker_request(method.clone(), marker)
                .await
                .map_err(|message| failure(op, marker, message))?;
            let problem = match request.send().await {
                Ok(answer) if answer.status().is_success() => return Ok(()),
                Ok(answer)
                    if answer.status() == StatusCode::NOT_FOUND && method == Method::DELETE =>
                {
                    return Ok(());
                }
                Ok(answer) => {
                    let status = answer.status();
                    let body = answer.text().await.unwrap_or_default();
                    let message = format!("{method} answered {status}: {}", excerpt(&body));
                    let transient =
                        status.is_server_error() || status == StatusCode::TOO_MANY_REQUESTS;
                    if !transient {
                        return Err(failure(op, marker, message));
                    }
                    message
                }
                Err(e) => format!("{method}: {e}"),
            };
            if attempt >= MARKER_ATTEMPTS {
                return Err(failure(op, marker, problem));
            }
            tokio::time::sleep(Duration::from_millis(200 << attempt)).await;
            attempt += 1;
        }
    }

    /// The request `method` of the marker `marker` with an empty body, signed (SigV4) with the
    /// store's current credentials.
    async fn signed_marker_request(
        &self,
        method: Method,
        marker: &str,
    ) -> Result<reqwest::RequestBuilder, String> {
        let url = format!("{}/{}", self.bucket_url, encode_key(marker));
        let credential = self
            .store
            .credentials()
            .get_credential()
            .await
            .map_err(|e| e.to_string())?;
        let mut signed = HttpRequest::new(HttpRequestBody::empty());
        *signed.method_mut() = method.clone();
        parse_into(signed.uri_mut(), &url)?;
        AwsAuthorizer::new(&credential, "s3", &self.region)
            .try_authorize(&mut signed, None)
            .map_err(|e| e.to_string())?;
        let put = method == Method::PUT;
        let mut request = self
            .http
            .request(method, url)
            .headers(signed.headers().clone());
        if put {
            // S3 refuses a PUT without a length (411).
            request = request.header(CONTENT_LENGTH, "0").body(Vec::<u8>::new());
        }
        Ok(request)
    }
}

/// The marker of the folder `location`: its key followed by `/`.
fn marker_key(location: &Path) -> String {
    format!("{location}/")
}

/// The bucket's address as the store built by `builder` addresses it (the builder's own rule:
/// path-style unless virtual-hosted requests are asked for; the S3-specific endpoint first).
fn bucket_url(builder: &AmazonS3Builder, bucket: &str, region: &str) -> String {
    let endpoint = builder
        .get_config_value(&AmazonS3ConfigKey::S3Endpoint)
        .or_else(|| builder.get_config_value(&AmazonS3ConfigKey::Endpoint));
    let virtual_hosted = builder
        .get_config_value(&AmazonS3ConfigKey::VirtualHostedStyleRequest)
        .is_some_and(|v| {
            matches!(
                v.to_ascii_lowercase().as_str(),
                "1" | "true" | "on" | "yes" | "y"
            )
        });
    match (endpoint, virtual_hosted) {
        (Some(endpoint), true) => endpoint.trim_end_matches('/').to_owned(),
        (Some(endpoint), false) => format!("{}/{bucket}", endpoint.trim_end_matches('/')),
        (None, true) => format!("https://{bucket}.s3.{region}.amazonaws.com"),
        (None, false) => format!("https://s3.{region}.amazonaws.com/{bucket}"),
    }
}

/// `key` percent-encoded for a URL path as S3 (and `object_store`) expects it: everything but
/// RFC 3986's unreserved characters and `/`.
fn encode_key(key: &str) -> String {
    let mut encoded = String::with_capacity(key.len());
    for byte in key.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~' | b'/') {
            encoded.push(char::from(byte));
        } else {
            let _ = write!(encoded, "%{byte:02X}");
        }
    }
    encoded
}

/// Parses `text` into `slot`, whatever its type: here a request's URI, a type of the `http`
/// crate, which this crate does not name.
fn parse_into<T>(slot: &mut T, text: &str) -> Result<(), String>
where
    T: std::str::FromStr,
    T::Err: fmt::Display,
{
    *slot = text.parse::<T>().map_err(|e| format!("{text}: {e}"))?;
    Ok(())
}

/// The start of an error answer's body, for the message.
fn excerpt(body: &str) -> &str {
    let end = body
        .char_indices()
        .nth(300)
        .map_or(body.len(), |(at, _)| at);
    body[..end].trim()
}

/// Up to `size` bytes of `file`, fewer only at its end (none once it is reached).
async fn read_part(file: &mut tokio::fs::File, size: usize) -> std::io::Result<Bytes> {
    let mut part = vec![0; size];
    let mut filled = 0;
    while filled < size {
        let read = file.read(&mut part[filled..]).await?;
        if read == 0 {
            break;
        }
        filled += read;
    }
    part.truncate(filled);
    Ok(Bytes::from(part))
}

#[cfg(test)]
mod tests {
    use super::super::{DocumentType, SafeName, document_path, villa_folder};
    use super::*;

    fn settings(endpoint: Option<&str>, prefix: Option<&str>) -> S3Settings {
        S3Settings {
            bucket: "villa-docs".to_owned(),
            region: "eu-west-1".to_owned(),
            endpoint: endpoint.map(str::to_owned),
            prefix: prefix.map(str::to_owned),
            access_key_id: Some("AKIDEXAMPLE".to_owned()),
            secret_access_key: Some("secret".to_owned()),
        }
    }

    #[test]
    fn every_environment_variable_read_is_one_object_store_knows() {
        for name in AWS_ENV {
            let key = name.to_ascii_lowercase().parse::<AmazonS3ConfigKey>();
            assert!(key.is_ok(), "{name} is no object_store setting");
            // None says where the store is.
            assert!(
                !matches!(
                    key,
                    Ok(AmazonS3ConfigKey::Endpoint
                        | AmazonS3ConfigKey::S3Endpoint
                        | AmazonS3ConfigKey::Bucket
                        | AmazonS3ConfigKey::Region
                        | AmazonS3ConfigKey::DefaultRegion)
                ),
                "{name}"
            );
        }
    }

    fn villa() -> StoragePath {
        let id: uuid::Uuid = "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b".parse().unwrap();
        villa_folder("PHK 001", id)
    }

    #[test]
    fn keys_are_the_storage_path_under_the_prefix() {
        let file = SafeName::parse("fileName", "Villa Ünïcode plan.pdf").unwrap();
        let path = document_path(&villa(), DocumentType::HouseRules, &file);
        let plain = S3Store::new(&settings(Some("http://127.0.0.1:9000"), None)).unwrap();
        let location = plain.location("put", &path).unwrap();
        assert_eq!(location.to_string(), path.as_str());
        let object = plain.object(&location);
        assert_eq!(object.file_id, path.as_str());
        assert_eq!(object.url, format!("s3://villa-docs/{path}"));

        for prefix in ["tenant/a", "/tenant/a/"] {
            let store = S3Store::new(&settings(None, Some(prefix))).unwrap();
            let location = store.location("put", &path).unwrap();
            assert_eq!(location.to_string(), format!("tenant/a/{path}"));
            assert_eq!(
                store.object(&location).url,
                format!("s3://villa-docs/tenant/a/{path}")
            );
        }
        let empty = S3Store::new(&settings(None, Some("/"))).unwrap();
        assert_eq!(empty.key(&path), path.as_str());
    }

    #[test]
    fn folders_are_zero_byte_objects_ending_in_a_slash() {
        let store = S3Store::new(&settings(None, Some("p"))).unwrap();
        let location = store.location("create_folder", &villa()).unwrap();
        assert_eq!(marker_key(&location), format!("p/{}/", villa()));
        // A listed marker comes back without its `/`: the marker of that path is the same.
        let listed = Path::parse(marker_key(&location)).unwrap();
        assert_eq!(marker_key(&listed), marker_key(&location));
    }

    #[test]
    fn bucket_addresses_follow_the_builder() {
        let path_style = AmazonS3Builder::new()
            .with_endpoint("http://127.0.0.1:9000/")
            .with_virtual_hosted_style_request(false);
        assert_eq!(
            bucket_url(&path_style, "b", "us-east-1"),
            "http://127.0.0.1:9000/b"
        );
        let s3_first = path_style.with_config(AmazonS3ConfigKey::S3Endpoint, "https://minio");
        assert_eq!(bucket_url(&s3_first, "b", "us-east-1"), "https://minio/b");
        let hosted = AmazonS3Builder::new()
            .with_endpoint("https://b.example.com")
            .with_virtual_hosted_style_request(true);
        assert_eq!(
            bucket_url(&hosted, "b", "us-east-1"),
            "https://b.example.com"
        );
        assert_eq!(
            bucket_url(&AmazonS3Builder::new(), "b", "eu-west-1"),
            "https://s3.eu-west-1.amazonaws.com/b"
        );
        let aws_hosted = AmazonS3Builder::new().with_virtual_hosted_style_request(true);
        assert_eq!(
            bucket_url(&aws_hosted, "b", "eu-west-1"),
            "https://b.s3.eu-west-1.amazonaws.com"
        );
        let store = S3Store::new(&settings(Some("http://127.0.0.1:9000"), None)).unwrap();
        assert_eq!(store.bucket_url, "http://127.0.0.1:9000/villa-docs");
    }

    #[test]
    fn keys_are_percent_encoded_as_s3_expects() {
        assert_eq!(
            encode_key("Villas/A_1/Documents/x-1.pdf/"),
            "Villas/A_1/Documents/x-1.pdf/"
        );
        assert_eq!(
            encode_key("a b/Ünï~+&.pdf"),
            "a%20b/%C3%9Cn%C3%AF~%2B%26.pdf"
        );
    }

    #[tokio::test]
    async fn marker_requests_are_signed_for_the_marker_key() {
        let store = S3Store::new(&settings(Some("http://127.0.0.1:9000"), Some("p"))).unwrap();
        let location = store.location("create_folder", &villa()).unwrap();
        let request = store
            .signed_marker_request(Method::PUT, &marker_key(&location))
            .await
            .unwrap()
            .build()
            .unwrap();
        assert_eq!(request.method(), &Method::PUT);
        assert_eq!(
            request.url().as_str(),
            format!("http://127.0.0.1:9000/villa-docs/p/{}/", villa())
        );
        let header = |name: &str| {
            request
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_owned()
        };
        let authorization = header("authorization");
        assert!(
            authorization.starts_with("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/"),
            "{authorization}"
        );
        assert!(authorization.contains("/eu-west-1/s3/aws4_request"));
        assert!(authorization.contains("SignedHeaders=host;x-amz-content-sha256;x-amz-date"));
        // The SHA-256 of the empty body.
        assert_eq!(
            header("x-amz-content-sha256"),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(header("content-length"), "0");
    }

    #[tokio::test]
    async fn an_unreachable_store_is_a_backend_error() {
        // A port nothing listens on any more.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let endpoint = format!("http://127.0.0.1:{port}");
        let store = S3Store::new(&settings(Some(endpoint.as_str()), None)).unwrap();
        let err = store.create_folder(&villa()).await.unwrap_err();
        assert!(
            matches!(
                &err,
                StorageError::Backend { backend: "s3", op: "create_folder", path, .. }
                    if path == &format!("{}/", villa())
            ),
            "{err}"
        );
    }

    #[tokio::test]
    async fn parts_are_read_whole_until_the_end_of_the_file() {
        let source =
            std::env::temp_dir().join(format!("villa-s3-part-{}", uuid::Uuid::new_v4().simple()));
        let content: Vec<u8> = (0..2500u32)
            .map(|i| u8::try_from(i % 251).unwrap())
            .collect();
        std::fs::write(&source, &content).unwrap();
        let mut file = tokio::fs::File::open(&source).await.unwrap();
        let mut read = Vec::new();
        loop {
            let part = read_part(&mut file, 1000).await.unwrap();
            if part.is_empty() {
                break;
            }
            assert!(part.len() == 1000 || read.len() == 2000, "{}", part.len());
            read.extend_from_slice(&part);
        }
        assert_eq!(read, content);
        let _ = std::fs::remove_file(source);
    }

    #[test]
    fn error_answers_are_cut_short() {
        assert_eq!(excerpt("  <Error/>  "), "<Error/>");
        let long = "é".repeat(1000);
        assert_eq!(excerpt(&long).chars().count(), 300);
    }
}
