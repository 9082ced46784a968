//! Uploads through the API and the job pipeline, with the local document store: bytes land at
//! `STORAGE_LOCAL_DIR/<storagePath>` unchanged, one folder tree per villa under simultaneous
//! first uploads, thumbnails, names that try to leave their folder, deletion of a villa's folder.

use std::{io::Cursor, path::Path, time::Duration};

use base64::Engine as _;
use jobs::{
    JobRegistry,
    documents::{CreateVillaTree, DeleteVillaFolder, StoreDocument, StorePhoto},
    media::MakeThumbnail,
};
use reqwest::Method;
use serde_json::{Value, json};
use sqlx::PgPool;
use tests::{TestApp, TestAppOptions, eventually, json};
use uuid::Uuid;

use crate::onboarding::start;

fn registry() -> JobRegistry {
    JobRegistry::new()
        .register::<CreateVillaTree>()
        .register::<StoreDocument>()
        .register::<StorePhoto>()
        .register::<DeleteVillaFolder>()
        .register::<MakeThumbnail>()
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn jpeg(w: u32, h: u32) -> Vec<u8> {
    let img = image::RgbImage::from_fn(w, h, |x, y| {
        image::Rgb([(x % 251) as u8, (y % 241) as u8, ((x * y) % 239) as u8])
    });
    let mut out = Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Jpeg).unwrap();
    out.into_inner()
}

async fn upload_doc(app: &TestApp, villa: Uuid, name: &str, content: &[u8]) -> (u16, Value) {
    json(
        app.post_json(
            "/api/documents/upload",
            "manager",
            &json!({"villaId": villa, "documentType": "PROPERTY_CONTRACT", "fileName": name,
                    "fileContent": b64(content), "mimeType": "application/pdf"}),
        )
        .await,
    )
    .await
}

/// The deadlocks Postgres broke in the test's database. A backend reports its counters when
/// idle, within 10 s (PGSTAT_IDLE_INTERVAL), so this waits that long first.
async fn deadlocks_reported(pool: &PgPool) -> i64 {
    tokio::time::sleep(Duration::from_secs(11)).await;
    sqlx::query_scalar("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()")
        .fetch_one(pool)
        .await
        .unwrap()
}

async fn file_is(path: &Path, content: &[u8]) -> bool {
    tokio::fs::read(path).await.is_ok_and(|b| b == content)
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_document_reaches_the_store_byte_for_byte(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let (villa, _) = start(&app, "DOC 1/A").await;
    let content: Vec<u8> = (0..300_000u32).map(|i| (i * 31 % 256) as u8).collect();
    let (status, body) = upload_doc(&app, villa, "Lease 2026.pdf", &content).await;
    assert_eq!(status, 201, "{body}");
    let d = &body["data"];
    assert_eq!(d["fileName"], "Lease-2026.pdf");
    assert_eq!(d["documentType"], "PROPERTY_CONTRACT");
    let path = d["storagePath"].as_str().unwrap().to_owned();
    assert!(path.starts_with("Villas/DOC-1-A_"), "{path}");
    assert!(
        path.ends_with("/Documents/01-Legal-Documents/Property-Contracts/Lease-2026.pdf"),
        "{path}"
    );
    assert!(d["storageFileId"].is_null() && d["storageUrl"].is_null());
    // fileUrl serves the bytes before the worker has run.
    let res = app.get(d["fileUrl"].as_str().unwrap(), "viewer").await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.bytes().await.unwrap().to_vec(), content);

    let worker = app.worker(registry());
    let on_disk = app.core.storage_local_dir.join(&path);
    assert!(
        eventually(Duration::from_secs(20), || async {
            file_is(&on_disk, &content).await.then_some(())
        })
        .await
        .is_some(),
        "never stored at {on_disk:?}"
    );
    let id = d["id"].as_str().unwrap();
    let stored = eventually(Duration::from_secs(10), || async {
        let (_, b) = json(app.get(&format!("/api/documents/{id}"), "viewer").await).await;
        b["data"]["storageFileId"].is_string().then_some(b)
    })
    .await
    .expect("storageFileId never set");
    assert_eq!(stored["data"]["storageStatus"], "STORED");
    assert_eq!(stored["data"]["storagePath"], path.as_str());
    // The whole tree exists, and the villa shows its folder.
    let folder = path.split('/').take(2).collect::<Vec<_>>().join("/");
    for sub in [
        "Documents/Other",
        "Documents/03-Operational-Documents/House-Rules",
        "Photos/Bedrooms",
        "Photos/Pool-Outdoor-Areas",
    ] {
        assert!(
            app.core.storage_local_dir.join(&folder).join(sub).is_dir(),
            "{sub}"
        );
    }
    let (_, v) = json(app.get(&format!("/api/villas/{villa}"), "viewer").await).await;
    assert_eq!(v["data"]["villa"]["storageBasePath"], folder.as_str());
    // Served from the store now that the database's copy is dropped.
    let pending: Option<Vec<u8>> =
        sqlx::query_scalar("SELECT pending_content FROM documents WHERE id = $1::uuid")
            .bind(id)
            .fetch_one(&pool)
            .await
            .unwrap();
    assert!(pending.is_none());
    let res = app
        .get(&format!("/api/documents/{id}/file"), "viewer")
        .await;
    assert_eq!(res.bytes().await.unwrap().to_vec(), content);

    // The same name again gets a name of its own instead of replacing the first.
    let (_, again) = upload_doc(&app, villa, "Lease 2026.pdf", b"second").await;
    let second = again["data"]["storagePath"].as_str().unwrap().to_owned();
    assert_ne!(second, path);
    let second_disk = app.core.storage_local_dir.join(&second);
    assert!(
        eventually(Duration::from_secs(20), || async {
            file_is(&second_disk, b"second").await.then_some(())
        })
        .await
        .is_some()
    );
    assert!(file_is(&on_disk, &content).await);

    // Deleting the villa removes its folder.
    let res = app
        .request(
            Method::DELETE,
            &format!("/api/villas/{villa}"),
            Some("admin"),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let root = app.core.storage_local_dir.join(&folder);
    assert!(
        eventually(Duration::from_secs(20), || async {
            (!root.exists()).then_some(())
        })
        .await
        .is_some()
    );
    worker.shutdown().await;
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn upload_validation_lists_every_field(pool: PgPool) {
    let app = TestApp::spawn_with(
        pool,
        TestAppOptions {
            upload_max_bytes: 1000,
            ..TestAppOptions::default()
        },
    )
    .await;
    let (villa, _) = start(&app, "VAL-UP").await;
    let (status, body) = json(
        app.post_json(
            "/api/documents/upload",
            "manager",
            &json!({"documentType": "DEED", "fileContent": "***"}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 400, "{body}");
    let fields: Vec<&str> = body["data"]["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["field"].as_str().unwrap())
        .collect();
    assert_eq!(
        fields,
        ["villaId", "documentType", "fileName", "fileContent"]
    );
    assert_eq!(body["statusCode"], 400);
    // Too large, size mismatch, a name of nothing.
    let (status, body) = json(app.post_json("/api/documents/upload", "manager", &json!({
        "villaId": villa, "documentType": "OTHER", "fileName": "../..", "fileContent": b64(&[0; 1001])})).await).await;
    assert_eq!(status, 400);
    let codes: Vec<&str> = body["data"]["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["invalid_name", "too_large"]);
    let (status, body) = json(app.post_json("/api/documents/upload", "manager", &json!({
        "villaId": villa, "documentType": "OTHER", "fileName": "a.txt", "fileContent": b64(b"abc"), "fileSize": 4})).await).await;
    assert_eq!(status, 400);
    assert_eq!(body["data"]["errors"][0]["field"], "fileSize");
    // Unknown villa: 404.
    let (status, body) = json(app.post_json("/api/documents/upload", "manager", &json!({
        "villaId": Uuid::now_v7(), "documentType": "OTHER", "fileName": "a.txt", "fileContent": b64(b"abc")})).await).await;
    assert_eq!(status, 404, "{body}");
    // Photos: not an image, bedrooms without subfolder, a subfolder elsewhere, unknown category.
    let (status, body) = json(app.post_json("/api/photos/upload", "manager", &json!({
        "villaId": villa, "category": "bedrooms", "fileName": "a.jpg", "fileContent": b64(b"%PDF-1.4")})).await).await;
    assert_eq!(status, 400);
    let fields: Vec<&str> = body["data"]["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["field"].as_str().unwrap())
        .collect();
    assert_eq!(fields, ["subfolder", "fileContent"]);
    let (status, body) = json(app.post_json("/api/photos/upload", "manager", &json!({
        "villaId": villa, "category": "kitchen", "subfolder": "x", "fileName": "a.jpg", "fileContent": b64(&jpeg(4, 4))})).await).await;
    assert_eq!(status, 400);
    assert_eq!(body["data"]["errors"][0]["field"], "subfolder");
    let (status, body) = json(app.post_json("/api/photos/upload", "manager", &json!({
        "villaId": villa, "category": "attic", "fileName": "a.jpg", "fileContent": b64(&jpeg(4, 4))})).await).await;
    assert_eq!(status, 400);
    assert!(
        body["data"]["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("pool_outdoor_areas")
    );
    // Uploads need write access.
    let res = app
        .post_json("/api/documents/upload", "viewer", &json!({}))
        .await;
    assert_eq!(res.status(), 403);
}

/// The same pipeline on the S3 backend (a moto server on loopback): the photo reaches the bucket
/// byte for byte, the media worker reads it back from there for the thumbnail, and the public
/// route serves it from the bucket once Postgres no longer holds it.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn photos_reach_an_s3_store_and_are_thumbnailed_from_it(pool: PgPool) {
    let app = TestApp::spawn_with(
        pool.clone(),
        TestAppOptions {
            storage: tests::TestStorage::s3().await,
            ..TestAppOptions::default()
        },
    )
    .await;
    let (villa, _) = start(&app, "PHOTO-S3").await;
    let photo = jpeg(1600, 1200);
    let (status, body) = json(
        app.post_json(
            "/api/photos/upload",
            "manager",
            &json!({
        "villaId": villa, "category": "bedrooms", "subfolder": "Master Bedroom", "fileName": "bed ü 1.jpg",
        "fileContent": b64(&photo)}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let id = body["data"]["id"].as_str().unwrap().to_owned();
    let path =
        domain::storage::StoragePath::from_stored(body["data"]["storagePath"].as_str().unwrap())
            .expect("a storage path");
    let _worker = app.worker(registry());
    let thumb_url = eventually(Duration::from_secs(30), || async {
        let (_, b) = json(app.get(&format!("/api/photos/{id}"), "viewer").await).await;
        b["data"]["thumbnailUrl"].as_str().map(str::to_owned)
    })
    .await
    .expect("no thumbnail from the photo in S3");
    let thumb = app.get_anonymous(&thumb_url).await.bytes().await.unwrap();
    let decoded = image::load_from_memory(&thumb).expect("the thumbnail decodes");
    assert_eq!((decoded.width(), decoded.height()), (400, 300));
    let store = app.store();
    let in_bucket = eventually(Duration::from_secs(20), || async {
        store.get(&path).await.ok().flatten()
    })
    .await
    .expect("the photo in the bucket");
    assert_eq!(in_bucket, photo, "byte for byte");
    let stored: Option<String> = eventually(Duration::from_secs(20), || async {
        sqlx::query_scalar::<_, Option<String>>(
            "SELECT storage_url FROM photos WHERE id = $1::uuid AND pending_content IS NULL",
        )
        .bind(&id)
        .fetch_optional(&pool)
        .await
        .unwrap()
        .flatten()
    })
    .await;
    assert!(
        stored.is_some_and(|url| url.starts_with("s3://")),
        "an s3:// storageUrl"
    );
    let res = app
        .get_anonymous(&format!("/api/photos-enhanced/public/{id}"))
        .await;
    assert_eq!(res.status(), 200);
    assert_eq!(
        res.bytes().await.unwrap().to_vec(),
        photo,
        "served from the bucket"
    );
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn photos_are_stored_thumbnailed_and_served_publicly(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let (villa, _) = start(&app, "PHOTO-1").await;
    let photo = jpeg(1600, 1200);
    let (status, body) = json(app.post_json("/api/photos/upload", "manager", &json!({
        "villaId": villa, "category": "bedrooms", "subfolder": "Master Bedroom/../../etc", "fileName": "bed 1.jpg",
        "fileContent": b64(&photo), "caption": "Sea view", "isMain": true, "width": 1, "height": 1})).await).await;
    assert_eq!(status, 201, "{body}");
    let d = &body["data"];
    assert_eq!(d["category"], "BEDROOMS");
    assert_eq!(d["subfolder"], "Master-Bedroom-..-..-etc");
    assert_eq!(
        (d["width"].clone(), d["height"].clone()),
        (json!(1600), json!(1200)),
        "read from the image"
    );
    assert!(d["thumbnailUrl"].is_null());
    let path = d["storagePath"].as_str().unwrap().to_owned();
    assert!(
        path.contains("/Photos/Bedrooms/Master-Bedroom-..-..-etc/bed-1.jpg"),
        "{path}"
    );
    let id = d["id"].as_str().unwrap().to_owned();

    // Public bytes before any worker ran, with type, ETag and caching.
    let res = app
        .get_anonymous(&format!("/api/photos-enhanced/public/{id}"))
        .await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-type"], "image/jpeg");
    let etag = res.headers()["etag"].to_str().unwrap().to_owned();
    assert!(
        res.headers()["cache-control"]
            .to_str()
            .unwrap()
            .contains("max-age")
    );
    assert_eq!(res.bytes().await.unwrap().to_vec(), photo);
    let res = app
        .request(
            Method::GET,
            &format!("/api/photos-enhanced/public/{id}"),
            None,
        )
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 304);
    assert_eq!(
        app.get_anonymous(&format!("/api/photos-enhanced/thumbnail/{id}"))
            .await
            .status(),
        404
    );

    let worker = app.worker(registry());
    let thumb_url = eventually(Duration::from_secs(30), || async {
        let (_, b) = json(app.get(&format!("/api/photos/{id}"), "viewer").await).await;
        b["data"]["thumbnailUrl"].as_str().map(str::to_owned)
    })
    .await
    .expect("no thumbnail");
    let res = app.get_anonymous(&thumb_url).await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-type"], "image/jpeg");
    let thumb = res.bytes().await.unwrap().to_vec();
    let decoded = image::load_from_memory(&thumb).expect("the thumbnail decodes");
    assert_eq!((decoded.width(), decoded.height()), (400, 300));
    assert!(thumb.len() < photo.len());
    let on_disk = app.core.storage_local_dir.join(&path);
    assert!(
        eventually(Duration::from_secs(20), || async {
            file_is(&on_disk, &photo).await.then_some(())
        })
        .await
        .is_some()
    );
    // Inside the villa's folder, whatever the subfolder said.
    let canonical = on_disk.canonicalize().unwrap();
    assert!(
        canonical.starts_with(
            app.core
                .storage_local_dir
                .canonicalize()
                .unwrap()
                .join("Villas")
        )
    );
    // The enhanced upload is the same upload.
    let (status, body) = json(app.post_json("/api/photos-enhanced", "manager", &json!({
        "villaId": villa, "category": "pool_outdoor_areas", "fileName": "pool.jpg", "fileContent": b64(&jpeg(50, 40))})).await).await;
    assert_eq!(status, 201, "{body}");
    assert!(
        body["data"]["storagePath"]
            .as_str()
            .unwrap()
            .contains("/Photos/Pool-Outdoor-Areas/pool.jpg")
    );
    // Unknown and malformed ids.
    assert_eq!(
        app.get_anonymous(&format!("/api/photos-enhanced/public/{}", Uuid::now_v7()))
            .await
            .status(),
        404
    );
    assert_eq!(
        app.get_anonymous("/api/photos-enhanced/public/..%2F..%2Fetc%2Fpasswd")
            .await
            .status(),
        400
    );
    assert_eq!(
        app.get_anonymous("/api/photos-enhanced/public/not-a-uuid")
            .await
            .status(),
        400
    );
    worker.shutdown().await;
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn names_that_try_to_leave_the_folder_stay_inside(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let (villa, _) = start(&app, "../../escape").await;
    // A NUL character is refused in any text of a body (PostgreSQL stores none), file names
    // included: a 400 naming the field rather than a sanitized name.
    let (status, body) = upload_doc(&app, villa, "\u{0}x.pdf", b"payload").await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["data"]["errors"][0]["field"], "fileName");
    let worker = app.worker(registry());
    let root = app
        .core
        .storage_local_dir
        .canonicalize()
        .unwrap_or(app.core.storage_local_dir.clone());
    for name in [
        "../../../etc/passwd",
        "..\\..\\boot.ini",
        "/etc/shadow",
        "a/../../b.pdf",
    ] {
        let (status, body) = upload_doc(&app, villa, name, b"payload").await;
        assert_eq!(status, 201, "{name}: {body}");
        let path = body["data"]["storagePath"].as_str().unwrap().to_owned();
        assert!(
            path.starts_with("Villas/") && !path.split('/').any(|s| s == ".." || s == "."),
            "{path}"
        );
        let disk = app.core.storage_local_dir.join(&path);
        assert!(
            eventually(Duration::from_secs(20), || async {
                file_is(&disk, b"payload").await.then_some(())
            })
            .await
            .is_some(),
            "{path}"
        );
        assert!(
            disk.canonicalize()
                .unwrap()
                .starts_with(root.join("Villas")),
            "{path}"
        );
    }
    worker.shutdown().await;
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn twelve_simultaneous_first_uploads_through_the_api_make_one_tree(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let (villa, _) = start(&app, "RUSH-12").await;
    let workers = [
        app.worker(registry()),
        app.worker(registry()),
        app.worker(registry()),
    ];
    let mut uploads = Vec::new();
    for i in 0..12u8 {
        let body = json!({"villaId": villa, "documentType": "HOUSE_RULES", "fileName": format!("rules-{i}.pdf"),
                          "fileContent": b64(&[i; 2048])});
        let req = app
            .request(Method::POST, "/api/documents/upload", Some("manager"))
            .json(&body);
        uploads.push(tokio::spawn(async move {
            json(req.send().await.unwrap()).await
        }));
    }
    let mut paths = Vec::new();
    for (i, u) in uploads.into_iter().enumerate() {
        let (status, body) = u.await.unwrap();
        assert_eq!(status, 201, "{body}");
        paths.push((
            i as u8,
            body["data"]["storagePath"].as_str().unwrap().to_owned(),
        ));
    }
    for (i, path) in &paths {
        let disk = app.core.storage_local_dir.join(path);
        let want = vec![*i; 2048];
        assert!(
            eventually(Duration::from_secs(30), || async {
                file_is(&disk, &want).await.then_some(())
            })
            .await
            .is_some(),
            "{path}"
        );
    }
    // The tree's job is marked done after its handler returns: the uploads waiting on the tree
    // may be stored a moment before.
    let trees: Vec<(String, i32)> = eventually(Duration::from_secs(10), || async {
        let rows: Vec<(String, i32)> = sqlx::query_as(
            "SELECT status, attempts FROM jobs WHERE kind = 'documents.create_villa_tree'",
        )
        .fetch_all(&pool)
        .await
        .unwrap();
        rows.iter().all(|(s, _)| s != "RUNNING").then_some(rows)
    })
    .await
    .expect("the tree's job stayed RUNNING");
    assert_eq!(trees.len(), 1, "{trees:?}");
    assert_eq!(trees[0].0, "SUCCEEDED");
    // Waiting for the tree is not failing: every upload succeeded on the attempt that ran it.
    let stores = eventually(Duration::from_secs(10), || async {
        let rows: Vec<(String, i32)> = sqlx::query_as(
            "SELECT status, attempts FROM jobs WHERE kind = 'documents.store_document'",
        )
        .fetch_all(&pool)
        .await
        .unwrap();
        (rows.len() == 12 && rows.iter().all(|(s, _)| s == "SUCCEEDED")).then_some(rows)
    })
    .await
    .expect("every store job succeeds");
    assert!(stores.iter().all(|(_, a)| *a == 1), "{stores:?}");
    let villas = app.core.storage_local_dir.join("Villas");
    let folders: Vec<_> = std::fs::read_dir(&villas)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .collect();
    assert_eq!(folders.len(), 1, "{folders:?}");
    for w in workers {
        w.shutdown().await;
    }
}

/// The onboarding spec's own scenario: a wizard uploading its first files in parallel, documents
/// and photos mixed (one a cover photo), released together at a barrier on six new villas. A
/// photo upload that wrote its folder-tree job before fixing the villa's folder deadlocked with a
/// document upload that did it the other way round: 10 of 48 answered 500 before the fix.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn mixed_first_uploads_of_new_villas_released_together_all_succeed(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let photo = b64(&jpeg(64, 48));
    let mut requests = Vec::new();
    for v in 0..6 {
        let (villa, _) = start(&app, &format!("MIXED-{v}")).await;
        for i in 0..8 {
            let req = if i % 2 == 0 {
                app.request(Method::POST, "/api/documents/upload", Some("manager"))
                    .json(&json!({"villaId": villa, "documentType": "HOUSE_RULES",
                                  "fileName": format!("rules-{i}.pdf"), "fileContent": b64(&[i; 512])}))
            } else if i == 1 {
                // Management's multipart upload of a cover photo: the path that locks the villa.
                let part = reqwest::multipart::Part::bytes(jpeg(64, 48)).file_name("cover.jpg");
                app.request(
                    Method::POST,
                    &format!("/management/villas/{villa}/photos"),
                    Some("manager"),
                )
                .multipart(
                    reqwest::multipart::Form::new()
                        .part("photos", part)
                        .text("isCover", "true"),
                )
            } else {
                app.request(Method::POST, "/api/photos/upload", Some("manager"))
                    .json(&json!({"villaId": villa, "category": "exterior_views", "fileName": format!("view-{i}.jpg"),
                                  "fileContent": photo}))
            };
            requests.push((villa, req));
        }
    }
    let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(requests.len()));
    let calls: Vec<_> = requests
        .into_iter()
        .map(|(villa, req)| {
            let barrier = barrier.clone();
            tokio::spawn(async move {
                barrier.wait().await;
                (villa, json(req.send().await.unwrap()).await)
            })
        })
        .collect();
    let mut per_villa = std::collections::HashMap::<Uuid, usize>::new();
    for call in calls {
        let (villa, (status, body)) = call.await.unwrap();
        assert_eq!(status, 201, "{body}");
        *per_villa.entry(villa).or_default() += 1;
    }
    assert_eq!(per_villa.len(), 6);
    assert!(per_villa.values().all(|n| *n == 8), "{per_villa:?}");
    // Everything accepted is recorded, each villa with one folder and one tree job.
    let (docs, photos, trees, folders): (i64, i64, i64, i64) = sqlx::query_as(
        "SELECT (SELECT count(*) FROM documents), (SELECT count(*) FROM photos),
                (SELECT count(*) FROM jobs WHERE kind = 'documents.create_villa_tree'),
                (SELECT count(DISTINCT storage_folder) FROM villas WHERE storage_folder IS NOT NULL)",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!((docs, photos, trees, folders), (24, 24, 6, 6));
    let covers: Vec<i64> =
        sqlx::query_scalar("SELECT count(*) FROM photos WHERE is_cover GROUP BY villa_id")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(covers, vec![1; 6]);
    // And no deadlock was broken on the way (the retry would hide one from the answers): every
    // upload took the villa's row before its job rows.
    assert_eq!(deadlocks_reported(&pool).await, 0, "uploads deadlocked");
}

/// The deadlock forced: a document upload of a new villa is held (a table lock the test keeps on
/// `documents`) after it fixed the villa's folder, while a photo upload of the same villa
/// arrives; then the document upload is let go. A photo upload that wrote its folder-tree job
/// before the villa's row waited for the document upload's row lock while the document upload
/// waited for its tree job: Postgres broke the cycle (a 500, or a retry the deadlock counter
/// shows). Taking the villa's row first, the photo upload just waits its turn.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_photo_upload_meeting_a_held_document_upload_does_not_deadlock(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let (villa, _) = start(&app, "HELD-1").await;
    let mut gate = pool.begin().await.unwrap();
    sqlx::query("LOCK TABLE documents IN SHARE ROW EXCLUSIVE MODE")
        .execute(&mut *gate)
        .await
        .unwrap();
    let waiting = |query: &'static str| {
        let pool = pool.clone();
        async move {
            eventually(Duration::from_secs(10), || {
                let pool = pool.clone();
                async move {
                    let n: i64 = sqlx::query_scalar(
                        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1",
                    )
                    .bind(query)
                    .fetch_one(&pool)
                    .await
                    .unwrap();
                    (n > 0).then_some(())
                }
            })
            .await
            .is_some()
        }
    };
    let document =
        {
            let req = app
            .request(Method::POST, "/api/documents/upload", Some("manager"))
            .json(&json!({"villaId": villa, "documentType": "HOUSE_RULES", "fileName": "rules.pdf",
                          "fileContent": b64(b"rules")}));
            tokio::spawn(async move { json(req.send().await.unwrap()).await })
        };
    assert!(
        waiting("INSERT INTO documents%").await,
        "the document upload never reached the gate"
    );
    let photo = {
        let req = app
            .request(Method::POST, "/api/photos/upload", Some("manager"))
            .json(
                &json!({"villaId": villa, "category": "exterior_views", "fileName": "view.jpg",
                          "fileContent": b64(&jpeg(64, 48))}),
            );
        tokio::spawn(async move { json(req.send().await.unwrap()).await })
    };
    // The photo upload waits for the villa's row, which the held document upload has.
    assert!(
        waiting("UPDATE villas SET storage_folder%").await,
        "the photo upload never waited"
    );
    gate.commit().await.unwrap();
    let (status, body) = document.await.unwrap();
    assert_eq!(status, 201, "{body}");
    let (status, body) = photo.await.unwrap();
    assert_eq!(status, 201, "{body}");
    assert_eq!(deadlocks_reported(&pool).await, 0, "the uploads deadlocked");
}

/// A document store that keeps throttling a read past what one request waits answers 503 with
/// the store's own `Retry-After` (a service the route needs is busy), never a 500; once it lets
/// go, the same file comes back whole.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_throttling_store_answers_503_with_retry_after(pool: PgPool) {
    let graph = tests::fake_graph::FakeGraph::start().await;
    let app = TestApp::spawn_with(
        pool.clone(),
        TestAppOptions {
            storage: tests::TestStorage::SharePoint(graph.settings()),
            ..TestAppOptions::default()
        },
    )
    .await;
    let (villa, _) = start(&app, "THROTTLED").await;
    let content = b"%PDF-1.7 throttled contract".to_vec();
    let (status, body) = upload_doc(&app, villa, "contract.pdf", &content).await;
    assert_eq!(status, 201, "{body}");
    let id = body["data"]["id"].as_str().unwrap().to_owned();
    let _worker = app.worker(registry());
    let stored = eventually(Duration::from_secs(30), || async {
        sqlx::query_scalar::<_, bool>(
            "SELECT pending_content IS NULL FROM documents WHERE id = $1::uuid",
        )
        .bind(&id)
        .fetch_one(&pool)
        .await
        .unwrap()
        .then_some(())
    })
    .await;
    assert!(stored.is_some(), "the document never reached SharePoint");

    // Longer than the in-request budget: not waited out in the request.
    let asked = domain::storage::sharepoint::MAX_THROTTLE_WAIT.as_secs() + 180;
    graph.throttle_next(1, asked);
    let res = app
        .get(&format!("/api/documents/{id}/file"), "viewer")
        .await;
    assert_eq!(res.status(), 503);
    assert_eq!(
        res.headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok()),
        Some(asked.to_string().as_str())
    );
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["statusCode"], 503, "{body}");
    assert_eq!(body["data"]["code"], "STORAGE_UNAVAILABLE", "{body}");

    let res = app
        .get(&format!("/api/documents/{id}/file"), "viewer")
        .await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.bytes().await.unwrap().to_vec(), content);
}
