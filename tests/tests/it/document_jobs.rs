//! The document-store jobs under concurrency: the first uploads of a new villa, arriving at the
//! same moment and processed by several workers, create exactly one folder tree, and every file
//! lands at `STORAGE_LOCAL_DIR/<storagePath>` byte for byte.

use std::time::Duration;

use domain::management::documents::{NewDocument, insert_pending};
use domain::storage::{DocumentType, SafeName, StoragePath, villa_tree};
use jobs::{
    Job, JobQueues, JobRegistry,
    documents::{CreateVillaTree, StoreDocument},
};
use sqlx::PgPool;
use tests::{TestWorker, core_settings, eventually, unique_prefix};
use uuid::Uuid;

fn registry() -> JobRegistry {
    JobRegistry::new()
        .register::<CreateVillaTree>()
        .register::<StoreDocument>()
}

/// What the upload route does: record the document with its bytes, enqueue its upload and the
/// villa's tree (a no-op after the first), commit, push.
async fn upload(
    pool: &PgPool,
    queues: &JobQueues,
    villa_id: Uuid,
    name: &str,
    content: Vec<u8>,
) -> (Uuid, StoragePath) {
    let mut tx = pool.begin().await.unwrap();
    let doc = NewDocument {
        villa_id,
        document_type: DocumentType::HouseRules,
        file_name: SafeName::parse("fileName", name).unwrap(),
        title: None,
        mime_type: "application/pdf".into(),
        content,
    };
    let (id, path) = insert_pending(&mut tx, &doc).await.unwrap();
    let tree = CreateVillaTree { villa_id }.enqueue(&mut tx).await.unwrap();
    let store = StoreDocument { document_id: id }
        .enqueue(&mut tx)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    queues.push(&[tree, store]).await;
    (id, path)
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn twelve_simultaneous_first_uploads_create_one_tree_and_store_every_file(pool: PgPool) {
    let core = core_settings(&tests::shared_redis_url(), &unique_prefix());
    let queues = JobQueues::new(&core.redis_url, &core.redis_prefix).unwrap();
    let villa_id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO villas (id, villa_code, villa_name) VALUES ($1, 'PHK 007', 'Villa Seven')",
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
    for i in 0..12 {
        let (pool, queues) = (pool.clone(), queues.clone());
        uploads.push(tokio::spawn(async move {
            let content: Vec<u8> = (0..4096u32).map(|b| (b * 7 + i) as u8).collect();
            let (id, path) = upload(
                &pool,
                &queues,
                villa_id,
                &format!("rules {i}.pdf"),
                content.clone(),
            )
            .await;
            (id, path, content)
        }));
    }
    let mut docs = Vec::new();
    for u in uploads {
        docs.push(u.await.unwrap());
    }

    let stored = eventually(Duration::from_secs(30), || async {
        let pending: i64 =
            sqlx::query_scalar("SELECT count(*) FROM documents WHERE pending_content IS NOT NULL")
                .fetch_one(&pool)
                .await
                .unwrap();
        (pending == 0).then_some(())
    })
    .await;
    assert!(stored.is_some(), "not every document reached the store");

    let tree_jobs: i64 =
        sqlx::query_scalar("SELECT count(*) FROM jobs WHERE kind = 'documents.create_villa_tree'")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(tree_jobs, 1, "one folder tree per villa");
    let (base, folder): (Option<String>, Option<String>) =
        sqlx::query_as("SELECT storage_base_path, storage_folder FROM villas WHERE id = $1")
            .bind(villa_id)
            .fetch_one(&pool)
            .await
            .unwrap();
    let villa_folder = format!("Villas/PHK-007_{}", &villa_id.simple().to_string()[24..]);
    assert_eq!(base.as_deref(), Some(villa_folder.as_str()));
    assert_eq!(folder.as_deref(), Some(villa_folder.as_str()));
    let root = &core.storage_local_dir;
    for f in villa_tree(&StoragePath::from_stored(&villa_folder).unwrap()) {
        assert!(root.join(f.as_str()).is_dir(), "{f} missing");
    }
    for (id, path, content) in docs {
        assert!(path.as_str().starts_with(&format!(
            "{villa_folder}/Documents/03-Operational-Documents/House-Rules/rules-"
        )));
        assert_eq!(
            std::fs::read(root.join(path.as_str())).unwrap(),
            content,
            "{path}"
        );
        let (file_id, url): (Option<String>, Option<String>) =
            sqlx::query_as("SELECT storage_file_id, storage_url FROM documents WHERE id = $1")
                .bind(id)
                .fetch_one(&pool)
                .await
                .unwrap();
        assert_eq!(file_id, Some(format!("local:{path}")));
        assert!(url.is_some());
    }
    for w in workers {
        w.shutdown().await;
    }
    let _ = std::fs::remove_dir_all(root);
}
