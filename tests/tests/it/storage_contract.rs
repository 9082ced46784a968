//! The document store's contract, the same on every backend: the local folder, an S3-compatible
//! server on loopback (`tests::s3_server`) and a loopback stand-in of the Microsoft Graph
//! endpoints the SharePoint backend calls (`tests::fake_graph`). Each store is built from settings
//! as a process builds it (`DocumentStore::from_settings`), and each run works in a bucket, a
//! folder or a stand-in of its own.

use std::time::{Duration, Instant};

use bytes::Bytes;
use domain::management::documents::{NewDocument, insert_pending};
use domain::settings::StorageBackend;
use domain::storage::sharepoint::{MAX_THROTTLE_WAIT, TOKEN_MARGIN};
use domain::storage::{
    DocumentStore, DocumentType, ObjectStream, PhotoCategory, SafeName, StorageError, StoragePath,
    StoredObject, document_path, export_path, field_notes_folder, photo_folder, villa_folder,
    villa_tree,
};
use futures::TryStreamExt;
use jobs::{
    Job, JobError, JobQueues, JobRegistry,
    documents::{CreateVillaTree, DeleteVillaFolder, StoreDocument},
};
use sqlx::PgPool;
use tests::fake_graph::GraphRequest;
use tests::{
    FakeGraph, S3Server, TestStorage, TestWorker, core_settings, eventually, unique_prefix,
};
use uuid::Uuid;

const MIB: usize = 1024 * 1024;

fn store_on(storage: TestStorage) -> DocumentStore {
    let mut core = core_settings(&tests::shared_redis_url(), &unique_prefix());
    storage.apply(&mut core);
    DocumentStore::from_settings(&core)
}

fn name(raw: &str) -> SafeName {
    SafeName::parse("fileName", raw).unwrap()
}

/// A path as it may be read back from the database: any name a segment may hold, spaces and
/// letters beyond ASCII included.
fn stored(path: String) -> StoragePath {
    StoragePath::from_stored(&path).unwrap()
}

/// `len` bytes that differ from one offset to the next, so a misplaced chunk shows.
fn content(len: usize, seed: usize) -> Vec<u8> {
    (0..len)
        .map(|i| u8::try_from((i * 31 + seed) % 251).unwrap())
        .collect()
}

async fn read_all(object: ObjectStream) -> Vec<u8> {
    object
        .body
        .try_fold(Vec::new(), |mut all, chunk| async move {
            all.extend_from_slice(&chunk);
            Ok(all)
        })
        .await
        .unwrap()
}

async fn streamed(store: &DocumentStore, path: &StoragePath) -> Vec<u8> {
    let object = store.get_stream(path).await.unwrap().unwrap();
    let len = object.len;
    let bytes = read_all(object).await;
    assert_eq!(len, u64::try_from(bytes.len()).unwrap(), "{path}");
    bytes
}

/// A file on disk for `put_file`, removed when dropped.
struct TempFile(std::path::PathBuf);

impl TempFile {
    fn with(bytes: &[u8]) -> TempFile {
        let path = std::env::temp_dir().join(format!("villa-contract-{}", Uuid::new_v4().simple()));
        std::fs::write(&path, bytes).unwrap();
        TempFile(path)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Every call of the store, as the jobs and routes make them. `identifies` checks what the
/// backend answers for an object it stored (`storageFileId`, `storageUrl`, `storageEtag`).
async fn contract(store: &DocumentStore, identifies: &dyn Fn(&StoragePath, &StoredObject)) {
    let villa = villa_folder("PHK 042", Uuid::new_v4());
    // A folder whose name begins with the villa's: removing the villa's tree must leave it.
    let annex = stored(format!("{villa}-annex"));

    // Nothing there yet: a missing object reads as none, and removing it is no error.
    let missing = document_path(&villa, DocumentType::Other, &name("missing.pdf"));
    assert!(!store.folder_exists(&villa).await.unwrap());
    assert_eq!(store.get(&missing).await.unwrap(), None);
    assert!(store.get_stream(&missing).await.unwrap().is_none());
    store.delete(&missing).await.unwrap();
    store.delete_tree(&villa).await.unwrap();

    // The villa's tree, by creators racing each other (workers of one villa's first uploads):
    // every one succeeds, and creating a folder again is no error either.
    let tree = &villa_tree(&villa);
    let creators = (0..4).map(|_| async move {
        for folder in tree {
            store.create_folder(folder).await?;
        }
        Ok::<_, domain::storage::StorageError>(())
    });
    for created in futures::future::join_all(creators).await {
        created.unwrap();
    }
    let bedroom = photo_folder(
        &villa,
        PhotoCategory::Bedrooms,
        Some(&name("Master Bedroom")),
    );
    let racing = (0..8).map(|_| store.create_folder(&bedroom));
    for created in futures::future::join_all(racing).await {
        created.unwrap();
    }
    store.create_folder(&villa).await.unwrap();
    assert!(store.folder_exists(&villa).await.unwrap());
    assert!(store.folder_exists(&bedroom).await.unwrap());
    for folder in tree {
        assert!(
            store.folder_exists(folder).await.unwrap(),
            "{folder} missing"
        );
    }

    // Put, get, overwrite, stream; a file is no folder.
    let contract_folder = stored(format!(
        "{villa}/{}",
        DocumentType::PropertyContract.folder()
    ));
    let doc = document_path(
        &villa,
        DocumentType::PropertyContract,
        &name("Villa Ünïcode plan.pdf"),
    );
    let first = store
        .put(&doc, Bytes::from_static(b"first version"))
        .await
        .unwrap();
    identifies(&doc, &first);
    assert_eq!(
        store.get(&doc).await.unwrap().as_deref(),
        Some(&b"first version"[..])
    );
    let second = store
        .put(&doc, Bytes::from_static(b"second"))
        .await
        .unwrap();
    identifies(&doc, &second);
    // A retried upload records the same object; where the store names versions, other bytes
    // are another version.
    assert_eq!(second.file_id, first.file_id);
    if first.etag.is_some() {
        assert_ne!(second.etag, first.etag, "{doc}");
    }
    assert_eq!(
        store.get(&doc).await.unwrap().as_deref(),
        Some(&b"second"[..])
    );
    assert_eq!(streamed(store, &doc).await, b"second");
    assert!(!store.folder_exists(&doc).await.unwrap());

    // Names with spaces, punctuation and letters beyond ASCII, as they are.
    let plans = stored(format!("{villa}/Plans de l'étage (Ünïcode)"));
    store.create_folder(&plans).await.unwrap();
    assert!(store.folder_exists(&plans).await.unwrap());
    let thai = stored(format!("{plans}/ผังวิลล่า ชั้น 1 & jardin.pdf"));
    let thai_bytes = "ผังวิลล่า".as_bytes();
    let put = store
        .put(&thai, Bytes::from_static(thai_bytes))
        .await
        .unwrap();
    identifies(&thai, &put);
    assert_eq!(store.get(&thai).await.unwrap().as_deref(), Some(thai_bytes));

    // An empty object is an object.
    let empty = photo_folder(&villa, PhotoCategory::Kitchen, None).child(&name("empty.jpg"));
    store.put(&empty, Bytes::new()).await.unwrap();
    assert_eq!(store.get(&empty).await.unwrap().as_deref(), Some(&b""[..]));
    assert!(streamed(store, &empty).await.is_empty());

    // Larger than one request carries (an upload session, a multipart upload), sizes that are
    // no multiple of any chunk: from memory, then from a file on disk into a folder nobody
    // created (an export's).
    let notes = field_notes_folder(&villa);
    store.create_folder(&notes).await.unwrap();
    let voice = notes.child(&name("voice note.m4a"));
    let five = content(5 * MIB + 7, 1);
    let put = store.put(&voice, Bytes::from(five.clone())).await.unwrap();
    identifies(&voice, &put);
    assert!(store.get(&voice).await.unwrap() == Some(five), "{voice}");
    let export = export_path(&name(&format!(
        "{}-revenue_2026-03-01_2026-03-31.xlsx",
        Uuid::new_v4()
    )));
    let nine = content(9 * MIB + 1234, 2);
    let file = TempFile::with(&nine);
    let put = store.put_file(&export, &file.0).await.unwrap();
    identifies(&export, &put);
    assert!(streamed(store, &export).await == nine, "{export}");
    // Writing it again replaces it, whatever the sizes.
    let small = TempFile::with(b"col\n1\n");
    store.put_file(&export, &small.0).await.unwrap();
    assert_eq!(streamed(store, &export).await, b"col\n1\n");
    store.delete(&export).await.unwrap();
    assert!(store.get_stream(&export).await.unwrap().is_none());

    // Deleting an object leaves its folder; deleting it again is no error.
    store.delete(&doc).await.unwrap();
    assert_eq!(store.get(&doc).await.unwrap(), None);
    store.delete(&doc).await.unwrap();
    assert!(store.folder_exists(&contract_folder).await.unwrap());

    // Deleting the tree removes every folder and object in it, and nothing beside it.
    store.create_folder(&annex).await.unwrap();
    let kept = annex.child(&name("kept.txt"));
    store.put(&kept, Bytes::from_static(b"kept")).await.unwrap();
    store.delete_tree(&villa).await.unwrap();
    assert!(!store.folder_exists(&villa).await.unwrap());
    for gone in [&bedroom, &plans, &notes, &contract_folder] {
        assert!(!store.folder_exists(gone).await.unwrap(), "{gone} remains");
    }
    for gone in [&thai, &voice, &empty] {
        assert_eq!(store.get(gone).await.unwrap(), None, "{gone} remains");
    }
    store.delete_tree(&villa).await.unwrap();
    assert!(store.folder_exists(&annex).await.unwrap());
    assert_eq!(
        store.get(&kept).await.unwrap().as_deref(),
        Some(&b"kept"[..])
    );
    store.delete_tree(&annex).await.unwrap();
    assert_eq!(store.get(&kept).await.unwrap(), None);
}

#[tokio::test]
async fn the_local_backend_keeps_the_contract() {
    let mut core = core_settings(&tests::shared_redis_url(), &unique_prefix());
    TestStorage::Local.apply(&mut core);
    let store = DocumentStore::from_settings(&core);
    assert_eq!(store.backend(), StorageBackend::Local);
    contract(&store, &|path, object| {
        assert_eq!(object.file_id, format!("local:{path}"));
        // Files on disk have no version names.
        assert_eq!(object.etag, None, "{path}");
    })
    .await;
    let _ = std::fs::remove_dir_all(&core.storage_local_dir);
}

#[tokio::test]
async fn the_s3_backend_keeps_the_contract() {
    let mut s3 = S3Server::start().await.fresh_settings();
    s3.prefix = Some("tenants/acme".to_owned());
    let bucket = s3.bucket.clone();
    let store = store_on(TestStorage::S3(s3));
    assert_eq!(store.backend(), StorageBackend::S3);
    contract(&store, &|path, object| {
        // The object's key, under the prefix.
        assert_eq!(object.file_id, format!("tenants/acme/{path}"));
        assert_eq!(object.url, format!("s3://{bucket}/tenants/acme/{path}"));
        // The object's ETag.
        assert!(
            object.etag.as_deref().is_some_and(|e| !e.is_empty()),
            "{path}: {:?}",
            object.etag
        );
    })
    .await;

    // Without a prefix, the key is the storage path.
    let plain = S3Server::start().await.fresh_settings();
    assert_eq!(plain.prefix, None);
    let plain_bucket = plain.bucket.clone();
    let store = store_on(TestStorage::S3(plain));
    let path = export_path(&name("plain.csv"));
    let object = store
        .put(&path, Bytes::from_static(b"a,b\n"))
        .await
        .unwrap();
    assert_eq!(object.file_id, path.as_str());
    assert_eq!(object.url, format!("s3://{plain_bucket}/{path}"));
    assert!(
        object.etag.as_deref().is_some_and(|e| !e.is_empty()),
        "{:?}",
        object.etag
    );
    assert_eq!(
        store.get(&path).await.unwrap().as_deref(),
        Some(&b"a,b\n"[..])
    );
}

#[tokio::test]
async fn the_sharepoint_backend_keeps_the_contract() {
    let graph = FakeGraph::start().await;
    let store = store_on(TestStorage::SharePoint(graph.settings()));
    assert_eq!(store.backend(), StorageBackend::SharePoint);
    contract(&store, &|path, object| {
        // The drive item's id, its webUrl and its eTag as it is now.
        assert_eq!(graph.item_id(path.as_str()).as_ref(), Some(&object.file_id));
        assert!(object.url.starts_with("http"), "{path}: {}", object.url);
        assert!(
            object.etag.as_deref().is_some_and(|e| !e.is_empty()),
            "{path}: {:?}",
            object.etag
        );
        assert_eq!(object.etag, graph.etag_of(path.as_str()), "{path}");
    })
    .await;
    // The files over 4 MB went up in upload sessions, each completed.
    assert!(graph.requests().iter().any(GraphRequest::is_upload));
    assert_eq!(graph.open_sessions(), 0);
}

#[tokio::test]
async fn the_sharepoint_backend_waits_out_graph_throttling() {
    let graph = FakeGraph::start().await;
    let store = store_on(TestStorage::SharePoint(graph.settings()));
    let path = export_path(&name("throttled.csv"));
    graph.throttle_next(2, 1);
    let started = Instant::now();
    store
        .put(&path, Bytes::from_static(b"a,b\n"))
        .await
        .unwrap();
    // Each 429's Retry-After was waited out, and neither counted as a failure.
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    let throttled = graph.requests().iter().filter(|r| r.status == 429).count();
    assert_eq!(throttled, 2);
    assert_eq!(
        graph.bytes_of(path.as_str()).as_deref(),
        Some(&b"a,b\n"[..])
    );
    assert_eq!(
        store.get(&path).await.unwrap().as_deref(),
        Some(&b"a,b\n"[..])
    );
}

#[tokio::test]
async fn the_sharepoint_backend_waits_out_a_503_with_retry_after() {
    let graph = FakeGraph::start().await;
    let store = store_on(TestStorage::SharePoint(graph.settings()));
    let path = export_path(&name("unavailable.csv"));
    graph.unavailable_next(2, 1);
    let started = Instant::now();
    let object = store
        .put(&path, Bytes::from_static(b"a,b\n"))
        .await
        .unwrap();
    // SharePoint's other throttling answer: each Retry-After waited out in full (a failure's
    // backoff would have been shorter), and neither counted as a failure.
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    let unavailable = graph.requests().iter().filter(|r| r.status == 503).count();
    assert_eq!(unavailable, 2);
    assert_eq!(graph.item_id(path.as_str()), Some(object.file_id));
    assert_eq!(
        graph.bytes_of(path.as_str()).as_deref(),
        Some(&b"a,b\n"[..])
    );
}

#[tokio::test]
async fn a_revoked_token_is_replaced_once() {
    let graph = FakeGraph::start().await;
    let store = store_on(TestStorage::SharePoint(graph.settings()));
    let path = export_path(&name("revoked.csv"));
    store
        .put(&path, Bytes::from_static(b"first"))
        .await
        .unwrap();
    assert_eq!(graph.token_requests(), 1);

    // Revoked long before its expiry: Graph refuses it once, one new token is fetched, and the
    // upload goes through with it.
    graph.revoke_tokens();
    store
        .put(&path, Bytes::from_static(b"second"))
        .await
        .unwrap();
    assert_eq!(graph.token_requests(), 2);
    let refused = graph.requests().iter().filter(|r| r.status == 401).count();
    assert_eq!(refused, 1);
    assert_eq!(
        graph.bytes_of(path.as_str()).as_deref(),
        Some(&b"second"[..])
    );

    // The new token is kept.
    store
        .put(&path, Bytes::from_static(b"third"))
        .await
        .unwrap();
    assert_eq!(graph.token_requests(), 2);
}

/// A token is used until `TOKEN_MARGIN` before Entra ID says it expires, or half its life when
/// it lives less than that (`keep_token_for`). Lifetimes are chosen so that both renew after 2 s,
/// while the usual one (`fake_graph::TOKEN_LIFETIME_SECS`, about an hour) is kept.
#[tokio::test]
async fn tokens_are_renewed_before_they_expire() {
    const KEPT: Duration = Duration::from_secs(2);
    // Renewed TOKEN_MARGIN before its expiry, so with still 5 minutes to live.
    let margin = FakeGraph::start().await;
    margin.set_token_lifetime((TOKEN_MARGIN + KEPT).as_secs());
    // Shorter-lived than the margin: renewed at half its life.
    let brief = FakeGraph::start().await;
    brief.set_token_lifetime((KEPT * 2).as_secs());
    let usual = FakeGraph::start().await;
    let graphs = [&margin, &brief, &usual];
    let stores: Vec<DocumentStore> = graphs
        .iter()
        .map(|graph| store_on(TestStorage::SharePoint(graph.settings())))
        .collect();
    let path = export_path(&name("tokens.csv"));

    for store in &stores {
        store.put(&path, Bytes::from_static(b"1")).await.unwrap();
    }
    for graph in graphs {
        assert_eq!(graph.token_requests(), 1);
    }
    tokio::time::sleep(KEPT + Duration::from_millis(500)).await;
    for store in &stores {
        store.put(&path, Bytes::from_static(b"2")).await.unwrap();
    }
    assert_eq!(margin.token_requests(), 2, "not renewed before the margin");
    assert_eq!(brief.token_requests(), 2, "not renewed at half its life");
    assert_eq!(usual.token_requests(), 1, "renewed long before its time");
    // Renewal is not a refusal: no request was answered 401.
    for graph in graphs {
        assert!(graph.requests().iter().all(|r| r.status != 401));
    }
}

/// What a throttled call asked to wait, checking it is the SharePoint backend's `put`.
fn throttled_for(error: &StorageError) -> Duration {
    match error {
        StorageError::Throttled {
            backend,
            op,
            retry_after,
            ..
        } => {
            assert_eq!((*backend, *op), ("sharepoint", "put"));
            *retry_after
        }
        other => panic!("not throttled: {other}"),
    }
}

/// Graph asking for more than one call waits in all (`MAX_THROTTLE_WAIT`) is not waited in the
/// request: the call ends at once with `StorageError::Throttled`, and the job is put off for as
/// long as asked (within an hour) without using up an attempt.
#[tokio::test]
async fn throttling_longer_than_the_budget_postpones_the_job() {
    let graph = FakeGraph::start().await;
    let store = store_on(TestStorage::SharePoint(graph.settings()));
    let path = export_path(&name("postponed.csv"));
    let asked = MAX_THROTTLE_WAIT + Duration::from_secs(1);
    graph.throttle_next(1, asked.as_secs());
    let started = Instant::now();
    let error = store
        .put(&path, Bytes::from_static(b"a,b\n"))
        .await
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "waited {:?}",
        started.elapsed()
    );
    assert_eq!(throttled_for(&error), asked);
    let job = JobError::from(error);
    assert_eq!(job.wait, Some(asked));
    assert!(job.retryable);
    assert_eq!(graph.bytes_of(path.as_str()), None);
    // The job's next run goes through.
    store
        .put(&path, Bytes::from_static(b"a,b\n"))
        .await
        .unwrap();
    assert_eq!(
        graph.bytes_of(path.as_str()).as_deref(),
        Some(&b"a,b\n"[..])
    );

    // A Retry-After of u64::MAX seconds ("18446744073709551615") overflows no sum nor instant:
    // the error carries it, and the job waits an hour at most.
    graph.throttle_next(1, u64::MAX);
    let started = Instant::now();
    let error = store
        .put(&path, Bytes::from_static(b"c,d\n"))
        .await
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "waited {:?}",
        started.elapsed()
    );
    assert_eq!(throttled_for(&error), Duration::from_secs(u64::MAX));
    let job = JobError::from(error);
    assert_eq!(job.wait, Some(Duration::from_secs(3600)));
    assert!(job.retryable);
    assert_eq!(
        graph.bytes_of(path.as_str()).as_deref(),
        Some(&b"a,b\n"[..])
    );
}

/// Bytes in memory beyond the S3 backend's part size (8 MiB) go up as a multipart upload of
/// slices of them, and read back whole.
#[tokio::test]
async fn an_s3_put_over_one_part_goes_up_in_parts() {
    let store = store_on(TestStorage::s3().await);
    let path = export_path(&name("parts.bin"));
    let bytes = content(9 * MIB + 1, 3);
    let object = store.put(&path, Bytes::from(bytes.clone())).await.unwrap();
    assert_eq!(object.file_id, path.as_str());
    // A multipart upload's ETag is its parts' digest and their number: 8 MiB, then the rest.
    let etag = object.etag.unwrap_or_default();
    assert!(etag.trim_matches('"').ends_with("-2"), "ETag {etag:?}");
    assert!(
        store.get(&path).await.unwrap() == Some(bytes.clone()),
        "{path}"
    );
    assert!(streamed(&store, &path).await == bytes, "{path}");
}

/// SharePoint compares names without regard to case, so `rules.pdf` uploaded after `Rules.pdf`
/// into one folder would replace it there: the second record gets a path of its own
/// (`rules-<8 hex>.pdf`), and the two documents are two drive items.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn names_differing_only_in_case_are_two_items_on_sharepoint(pool: PgPool) {
    let graph = FakeGraph::start().await;
    let mut core = core_settings(&tests::shared_redis_url(), &unique_prefix());
    TestStorage::SharePoint(graph.settings()).apply(&mut core);
    let queues = JobQueues::new(&core.redis_url, &core.redis_prefix).unwrap();
    let villa_id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO villas (id, villa_code, villa_name) VALUES ($1, 'PHK 019', 'Villa Nineteen')",
    )
    .bind(villa_id)
    .execute(&pool)
    .await
    .unwrap();
    let worker = TestWorker::start(pool.clone(), &core, registry());

    let mut tx = pool.begin().await.unwrap();
    let mut docs = Vec::new();
    for (seed, file_name) in [(1, "Rules.pdf"), (2, "rules.pdf")] {
        let bytes = content(4096 + seed, seed);
        let doc = NewDocument {
            villa_id,
            document_type: DocumentType::HouseRules,
            file_name: name(file_name),
            title: None,
            mime_type: "application/pdf".into(),
            content: bytes.clone(),
        };
        let (id, path) = insert_pending(&mut tx, &doc).await.unwrap();
        docs.push((id, path, bytes));
    }
    let mut enqueued = vec![CreateVillaTree { villa_id }.enqueue(&mut tx).await.unwrap()];
    for (id, _, _) in &docs {
        enqueued.push(
            StoreDocument { document_id: *id }
                .enqueue(&mut tx)
                .await
                .unwrap(),
        );
    }
    tx.commit().await.unwrap();
    queues.push(&enqueued).await;
    let stored_all = eventually(Duration::from_secs(60), || async {
        let pending: i64 =
            sqlx::query_scalar("SELECT count(*) FROM documents WHERE pending_content IS NOT NULL")
                .fetch_one(&pool)
                .await
                .unwrap();
        (pending == 0).then_some(())
    })
    .await;
    assert!(stored_all.is_some(), "not every document reached the store");

    // The second name took the record's suffix, so the paths differ whatever the case.
    let (upper, lower) = (&docs[0], &docs[1]);
    assert_eq!(upper.1.file_name(), "Rules.pdf");
    let hex = lower.0.simple().to_string();
    assert_eq!(
        lower.1.file_name(),
        format!("rules-{}.pdf", &hex[hex.len() - 8..])
    );
    assert_ne!(
        upper.1.as_str().to_lowercase(),
        lower.1.as_str().to_lowercase()
    );
    // Two items, each with its own bytes, recorded by their ids and eTags.
    let held = graph.paths();
    let mut item_ids = Vec::new();
    for (id, path, bytes) in &docs {
        assert!(
            held.iter().any(|p| p == path.as_str()),
            "{path} not in {held:?}"
        );
        assert_eq!(
            graph.bytes_of(path.as_str()).as_ref(),
            Some(bytes),
            "{path}"
        );
        let item_id = graph.item_id(path.as_str()).unwrap();
        let (file_id, etag): (Option<String>, Option<String>) =
            sqlx::query_as("SELECT storage_file_id, storage_etag FROM documents WHERE id = $1")
                .bind(id)
                .fetch_one(&pool)
                .await
                .unwrap();
        assert_eq!(file_id.as_ref(), Some(&item_id), "{path}");
        assert!(etag.is_some(), "{path}");
        assert_eq!(etag, graph.etag_of(path.as_str()), "{path}");
        item_ids.push(item_id);
    }
    assert_ne!(item_ids[0], item_ids[1]);
    worker.shutdown().await;
}

fn registry() -> JobRegistry {
    JobRegistry::new()
        .register::<CreateVillaTree>()
        .register::<StoreDocument>()
        .register::<DeleteVillaFolder>()
}

/// The upload pipeline on S3, as `document_jobs` runs it on the local backend: the first
/// uploads of a new villa, arriving together and processed by two workers, create one folder
/// tree, every file reaches the bucket byte for byte, and the villa's folder can be removed.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn first_uploads_on_s3_create_one_tree_and_store_every_file(pool: PgPool) {
    let mut core = core_settings(&tests::shared_redis_url(), &unique_prefix());
    TestStorage::s3().await.apply(&mut core);
    let store = DocumentStore::from_settings(&core);
    let queues = JobQueues::new(&core.redis_url, &core.redis_prefix).unwrap();
    let villa_id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO villas (id, villa_code, villa_name) VALUES ($1, 'PHK 008', 'Villa Eight')",
    )
    .bind(villa_id)
    .execute(&pool)
    .await
    .unwrap();
    let workers = [
        TestWorker::start(pool.clone(), &core, registry()),
        TestWorker::start(pool.clone(), &core, registry()),
    ];

    let mut uploads = Vec::new();
    for i in 0..8 {
        let (pool, queues) = (pool.clone(), queues.clone());
        uploads.push(tokio::spawn(async move {
            let bytes = content(64 * 1024 + i, i);
            let mut tx = pool.begin().await.unwrap();
            let doc = NewDocument {
                villa_id,
                document_type: DocumentType::HouseRules,
                file_name: name(&format!("rules {i}.pdf")),
                title: None,
                mime_type: "application/pdf".into(),
                content: bytes.clone(),
            };
            let (id, path) = insert_pending(&mut tx, &doc).await.unwrap();
            let tree = CreateVillaTree { villa_id }.enqueue(&mut tx).await.unwrap();
            let upload = StoreDocument { document_id: id }
                .enqueue(&mut tx)
                .await
                .unwrap();
            tx.commit().await.unwrap();
            queues.push(&[tree, upload]).await;
            (id, path, bytes)
        }));
    }
    let mut docs = Vec::new();
    for upload in uploads {
        docs.push(upload.await.unwrap());
    }
    let stored_all = eventually(Duration::from_secs(60), || async {
        let pending: i64 =
            sqlx::query_scalar("SELECT count(*) FROM documents WHERE pending_content IS NOT NULL")
                .fetch_one(&pool)
                .await
                .unwrap();
        (pending == 0).then_some(())
    })
    .await;
    assert!(stored_all.is_some(), "not every document reached the store");

    let tree_jobs: i64 =
        sqlx::query_scalar("SELECT count(*) FROM jobs WHERE kind = 'documents.create_villa_tree'")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(tree_jobs, 1, "one folder tree per villa");
    let folder: String = sqlx::query_scalar("SELECT storage_folder FROM villas WHERE id = $1")
        .bind(villa_id)
        .fetch_one(&pool)
        .await
        .unwrap();
    let folder = stored(folder);
    for f in villa_tree(&folder) {
        assert!(store.folder_exists(&f).await.unwrap(), "{f} missing");
    }
    let bucket = core.s3.as_ref().map(|s3| s3.bucket.clone()).unwrap();
    for (id, path, bytes) in docs {
        assert!(store.get(&path).await.unwrap() == Some(bytes), "{path}");
        let (file_id, url): (Option<String>, Option<String>) =
            sqlx::query_as("SELECT storage_file_id, storage_url FROM documents WHERE id = $1")
                .bind(id)
                .fetch_one(&pool)
                .await
                .unwrap();
        assert_eq!(file_id.as_deref(), Some(path.as_str()));
        assert_eq!(url, Some(format!("s3://{bucket}/{path}")));
    }

    // The villa's folder goes, with everything in it.
    let mut tx = pool.begin().await.unwrap();
    let delete = DeleteVillaFolder {
        villa_id,
        folder: folder.as_str().to_owned(),
    }
    .enqueue(&mut tx)
    .await
    .unwrap();
    tx.commit().await.unwrap();
    queues.push(&[delete]).await;
    let removed = eventually(Duration::from_secs(30), || async {
        (!store.folder_exists(&folder).await.unwrap()).then_some(())
    })
    .await;
    assert!(removed.is_some(), "the villa's folder was not removed");
    for w in workers {
        w.shutdown().await;
    }
}

/// The S3 tests above are worth what the server checks: it verifies each request's signature
/// (SigV4) as S3 does, so a request the backend signs wrongly fails there, the folder markers
/// it signs by hand included. Signed with a wrong secret, nothing reaches the bucket.
#[tokio::test]
async fn the_s3_server_checks_signatures() {
    let server = S3Server::start().await;
    let bucket = tests::s3_server::unique_bucket();
    let folder = villa_folder("PHK 043", Uuid::new_v4());
    let path = export_path(&name("signed.csv"));

    let forged = store_on(TestStorage::S3(
        server.settings_with_secret(&bucket, "not-the-secret"),
    ));
    let refused = forged.create_folder(&folder).await;
    assert!(
        matches!(refused, Err(domain::storage::StorageError::Backend { .. })),
        "{refused:?}"
    );
    let refused = forged.put(&path, bytes::Bytes::from_static(b"x")).await;
    assert!(
        matches!(refused, Err(domain::storage::StorageError::Backend { .. })),
        "{refused:?}"
    );

    let store = store_on(TestStorage::S3(server.settings(&bucket)));
    assert!(!store.folder_exists(&folder).await.unwrap());
    assert_eq!(store.get(&path).await.unwrap(), None);
    store.create_folder(&folder).await.unwrap();
    store
        .put(&path, bytes::Bytes::from_static(b"x"))
        .await
        .unwrap();
    assert!(store.folder_exists(&folder).await.unwrap());
    assert_eq!(store.get(&path).await.unwrap().as_deref(), Some(&b"x"[..]));
}
