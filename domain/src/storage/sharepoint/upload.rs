//! Upload sessions: a large file sent fragment by fragment, from memory or from disk.

use std::io::SeekFrom;
use std::path::Path;

use bytes::Bytes;
use reqwest::StatusCode;
use reqwest::header::CONTENT_RANGE;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncSeekExt};

use super::answers::{read_json, refused, stored};
use super::{
    CALL_TIMEOUT, FRAGMENT, MAX_STALLS, OP_PUT, SharePointStore, UPLOAD_TIMEOUT, backend, io,
};
use crate::storage::{StorageError, StoragePath, StoredObject};

/// Where the bytes of an upload session come from.
pub(super) enum Source<'a> {
    Memory(Bytes),
    File {
        file: tokio::fs::File,
        name: &'a Path,
    },
}

impl Source<'_> {
    /// The `len` bytes at `offset`.
    async fn read(
        &mut self,
        path: &StoragePath,
        offset: u64,
        len: usize,
    ) -> Result<Bytes, StorageError> {
        match self {
            Source::Memory(bytes) => {
                // A slice of the caller's bytes, not a copy.
                usize::try_from(offset)
                    .ok()
                    .and_then(|start| start.checked_add(len).map(|end| (start, end)))
                    .filter(|&(_, end)| end <= bytes.len())
                    .map(|(start, end)| bytes.slice(start..end))
                    .ok_or_else(|| {
                        backend(
                            OP_PUT,
                            path,
                            format!("the upload asked for bytes {offset}+{len}, past the end"),
                        )
                    })
            }
            Source::File { file, name } => {
                let name: &Path = name;
                let mut chunk = vec![0; len];
                let read = async {
                    file.seek(SeekFrom::Start(offset)).await?;
                    file.read_exact(&mut chunk).await
                }
                .await;
                read.map_err(|e| io(name, e))?;
                Ok(Bytes::from(chunk))
            }
        }
    }
}

impl SharePointStore {
    /// An upload session: opened, fed fragment by fragment, and cancelled when it fails (its
    /// bytes would otherwise wait on the server until the session expires).
    pub(super) async fn upload(
        &self,
        path: &StoragePath,
        mut source: Source<'_>,
        total: u64,
    ) -> Result<StoredObject, StorageError> {
        let upload_url = self.open_session(path).await?;
        let uploaded = self
            .send_fragments(path, &upload_url, &mut source, total)
            .await;
        if uploaded.is_err() {
            let _ = self
                .inner
                .http
                .delete(&upload_url)
                .timeout(CALL_TIMEOUT)
                .send()
                .await;
        }
        uploaded
    }

    /// `createUploadSession` (replacing the item at the end); its `uploadUrl`.
    async fn open_session(&self, path: &StoragePath) -> Result<String, StorageError> {
        let url = self.item_url(path.as_str(), ":/createUploadSession");
        // The documented default is "fail": a retried upload must replace its first try.
        let body = json!({ "item": { "@microsoft.graph.conflictBehavior": "replace" } });
        let mut made_parent = false;
        loop {
            let response = self
                .call(OP_PUT, path, || {
                    self.inner.http.post(&url).json(&body).timeout(CALL_TIMEOUT)
                })
                .await?;
            match response.status() {
                status if status.is_success() => {
                    let session = read_json(OP_PUT, path, response).await?;
                    return session
                        .get("uploadUrl")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                        .ok_or_else(|| {
                            backend(
                                OP_PUT,
                                path,
                                "the upload session has no uploadUrl".to_owned(),
                            )
                        });
                }
                StatusCode::NOT_FOUND if !made_parent => {
                    self.make_parent(path).await?;
                    made_parent = true;
                }
                _ => return Err(refused(OP_PUT, path, response).await),
            }
        }
    }

    /// The fragments, in order, each where the session says it expects the next bytes.
    async fn send_fragments(
        &self,
        path: &StoragePath,
        upload_url: &str,
        source: &mut Source<'_>,
        total: u64,
    ) -> Result<StoredObject, StorageError> {
        let mut offset = 0u64;
        let mut stalls = 0u32;
        loop {
            if offset >= total {
                return Err(backend(
                    OP_PUT,
                    path,
                    format!("the upload session took all {total} bytes but did not finish"),
                ));
            }
            let len = fragment_len(offset, total);
            let chunk = source.read(path, offset, len).await?;
            let range = content_range(offset, len, total);
            // The upload URL is pre-authenticated: no Authorization header (the documentation
            // warns that one may be refused with a 401).
            let response = self
                .execute(OP_PUT, path, None, || {
                    self.inner
                        .http
                        .put(upload_url)
                        .header(CONTENT_RANGE, range.as_str())
                        .body(chunk.clone())
                        .timeout(UPLOAD_TIMEOUT)
                })
                .await?;
            let next = match response.status() {
                StatusCode::OK | StatusCode::CREATED => return stored(path, response).await,
                StatusCode::ACCEPTED => {
                    let answer = read_json(OP_PUT, path, response).await?;
                    let sent = offset + u64::try_from(len).unwrap_or(0);
                    next_expected(&answer).unwrap_or(sent)
                }
                // Part of this range had already arrived (a retried fragment whose first try
                // reached the server): ask the session where to go on.
                StatusCode::RANGE_NOT_SATISFIABLE => self.session_next(path, upload_url).await?,
                _ => return Err(refused(OP_PUT, path, response).await),
            };
            if next > total {
                return Err(backend(
                    OP_PUT,
                    path,
                    format!("the upload session expects byte {next} of {total}"),
                ));
            }
            if next <= offset {
                stalls += 1;
                if stalls > MAX_STALLS {
                    return Err(backend(
                        OP_PUT,
                        path,
                        format!("the upload session keeps expecting byte {next}"),
                    ));
                }
            } else {
                stalls = 0;
            }
            offset = next;
        }
    }

    /// The next byte the upload session expects (`GET uploadUrl`).
    async fn session_next(
        &self,
        path: &StoragePath,
        upload_url: &str,
    ) -> Result<u64, StorageError> {
        let response = self
            .execute(OP_PUT, path, None, || {
                self.inner.http.get(upload_url).timeout(CALL_TIMEOUT)
            })
            .await?;
        if !response.status().is_success() {
            return Err(refused(OP_PUT, path, response).await);
        }
        let answer = read_json(OP_PUT, path, response).await?;
        next_expected(&answer).ok_or_else(|| {
            backend(
                OP_PUT,
                path,
                "the upload session lists no expected range".to_owned(),
            )
        })
    }
}

/// The first byte of the first range in an upload session's `nextExpectedRanges`
/// (`["26-"]`, `["12345-55232", "77829-99375"]`).
fn next_expected(session: &Value) -> Option<u64> {
    session
        .get("nextExpectedRanges")?
        .as_array()?
        .first()?
        .as_str()?
        .split('-')
        .next()?
        .trim()
        .parse()
        .ok()
}

/// The size of the fragment that starts at `offset`: [`FRAGMENT`], or what is left.
fn fragment_len(offset: u64, total: u64) -> usize {
    let left = total.saturating_sub(offset);
    usize::try_from(left).map_or(FRAGMENT, |left| left.min(FRAGMENT))
}

/// `bytes a-b/total` for `len` bytes at `offset` (`len` > 0).
fn content_range(offset: u64, len: usize, total: u64) -> String {
    let last = offset + u64::try_from(len).unwrap_or(0) - 1;
    format!("bytes {offset}-{last}/{total}")
}

#[cfg(test)]
mod tests {
    use super::super::FRAGMENT_UNIT;
    use super::*;

    #[test]
    fn fragments_are_multiples_of_320_kib_but_the_last() {
        assert_eq!(FRAGMENT_UNIT, 327_680);
        let total: u64 = 9 * 1024 * 1024 + 5;
        let mut offset = 0u64;
        let mut ranges = Vec::new();
        while offset < total {
            let len = fragment_len(offset, total);
            let last = offset + u64::try_from(len).unwrap() == total;
            assert!(last || len.is_multiple_of(FRAGMENT_UNIT), "{len}");
            ranges.push(content_range(offset, len, total));
            offset += u64::try_from(len).unwrap();
        }
        assert_eq!(
            ranges,
            [
                "bytes 0-3276799/9437189",
                "bytes 3276800-6553599/9437189",
                "bytes 6553600-9437188/9437189",
            ]
        );
    }

    #[test]
    fn the_session_says_where_to_go_on() {
        assert_eq!(
            next_expected(&json!({
                "expirationDateTime": "2015-01-29T09:21:55.523Z",
                "nextExpectedRanges": ["26-"],
            })),
            Some(26)
        );
        assert_eq!(
            next_expected(&json!({"nextExpectedRanges": ["12345-55232", "77829-99375"]})),
            Some(12345)
        );
        assert_eq!(next_expected(&json!({"nextExpectedRanges": []})), None);
        assert_eq!(next_expected(&json!({})), None);
    }

    #[tokio::test]
    async fn files_are_read_one_fragment_at_a_time() {
        let name = std::env::temp_dir().join(format!(
            "villa-sharepoint-test-{}",
            uuid::Uuid::new_v4().simple()
        ));
        let content: Vec<u8> = (0..FRAGMENT + 10)
            .map(|i| u8::try_from(i % 251).unwrap())
            .collect();
        std::fs::write(&name, &content).unwrap();
        let path = StoragePath::from_stored("Exports/x.bin").unwrap();
        let file = tokio::fs::File::open(&name).await.unwrap();
        let mut source = Source::File { file, name: &name };
        let total = u64::try_from(content.len()).unwrap();
        let at = u64::try_from(FRAGMENT).unwrap();
        let second = source
            .read(&path, at, fragment_len(at, total))
            .await
            .unwrap();
        assert_eq!(&second[..], &content[FRAGMENT..]);
        // Read again from an earlier offset (a fragment sent again).
        let first = source.read(&path, 0, FRAGMENT).await.unwrap();
        assert_eq!(&first[..], &content[..FRAGMENT]);
        // Past the end: an error, not short data.
        assert!(source.read(&path, total - 5, 10).await.is_err());
        let mut memory = Source::Memory(Bytes::from(content.clone()));
        assert_eq!(&memory.read(&path, 3, 4).await.unwrap()[..], &content[3..7]);
        assert!(memory.read(&path, total - 1, 2).await.is_err());
        let _ = std::fs::remove_file(name);
    }
}
