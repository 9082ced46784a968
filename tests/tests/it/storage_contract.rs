//! The document store's contract, the same on every backend: the local folder, an S3-compatible
//! server on loopback (`tests::s3_server`) and a loopback stand-in of the Microsoft Graph
//! endpoints the SharePoint backend calls (`tests::fake_graph`). Each store is built from settings
//! as a process builds it (`DocumentStore::from_settings`), and each run works in a bucket, a
//! folder or a stand-in of its own.

use std::time::{Duration, Instant};

use domain::documents::{NewDocument, insert_pending};
use domain::settings::StorageBackend;
use domain::storage::{
    DocumentStore, DocumentType, ObjectStream, PhotoCategory, SafeName, StoragePath, StoredObject,
    document_path, export_path, field_notes_folder, photo_folder, villa_folder, villa_tree,
};
use futures::TryStreamExt;
use jobs::{
    Job, JobQueues, JobRegistry,
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
/// backend answers for an object it stored (`storageFileId`, `storageUrl`).
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
    let first = store.put(&doc, b"first version").await.unwrap();
    identifies(&doc, &first);
    assert_eq!(
        store.get(&doc).await.unwrap().as_deref(),
        Some(&b"first version"[..])
    );
    let second = store.put(&doc, b"second").await.unwrap();
    identifies(&doc, &second);
    // A retried upload records the same object.
    assert_eq!(second.file_id, first.file_id);
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
    let put = store.put(&thai, thai_bytes).await.unwrap();
    identifies(&thai, &put);
    assert_eq!(store.get(&thai).await.unwrap().as_deref(), Some(thai_bytes));

    // An empty object is an object.
    let empty = photo_folder(&villa, PhotoCategory::Kitchen, None).child(&name("empty.jpg"));
    store.put(&empty, b"").await.unwrap();
    assert_eq!(store.get(&empty).await.unwrap().as_deref(), Some(&b""[..]));
    assert!(streamed(store, &empty).await.is_empty());

    // Larger than one request carries (an upload session, a multipart upload), sizes that are
    // no multiple of any chunk: from memory, then from a file on disk into a folder nobody
    // created (an export's).
    let notes = field_notes_folder(&villa);
    store.create_folder(&notes).await.unwrap();
    let voice = notes.child(&name("voice note.m4a"));
    let five = content(5 * MIB + 7, 1);
    let put = store.put(&voice, &five).await.unwrap();
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
    store.put(&kept, b"kept").await.unwrap();
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
    })
    .await;

    // Without a prefix, the key is the storage path.
    let plain = S3Server::start().await.fresh_settings();
    assert_eq!(plain.prefix, None);
    let plain_bucket = plain.bucket.clone();
    let store = store_on(TestStorage::S3(plain));
    let path = export_path(&name("plain.csv"));
    let object = store.put(&path, b"a,b\n").await.unwrap();
    assert_eq!(object.file_id, path.as_str());
    assert_eq!(object.url, format!("s3://{plain_bucket}/{path}"));
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
        // The drive item's id and its webUrl.
        assert_eq!(graph.item_id(path.as_str()).as_ref(), Some(&object.file_id));
        assert!(object.url.starts_with("http"), "{path}: {}", object.url);
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
    store.put(&path, b"a,b\n").await.unwrap();
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
