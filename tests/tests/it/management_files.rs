//! Documents and photos on the management surface: multipart uploads that reach the document
//! store through the same jobs and folders as the onboarding uploads, their checks, deletion, and
//! the single cover photo.

use std::{io::Cursor, time::Duration};

use jobs::{
    JobRegistry,
    documents::{CreateVillaTree, DeleteStoredFile, StoreDocument, StorePhoto},
    media::MakeThumbnail,
};
use reqwest::{
    Method,
    multipart::{Form, Part},
};
use serde_json::{Value, json};
use sqlx::PgPool;
use tests::{TestApp, TestAppOptions, eventually, json};
use uuid::Uuid;

use crate::auth::assert_error_shape;
use crate::management_villas::{create_villa, detail_fields, send};

fn registry() -> JobRegistry {
    JobRegistry::new()
        .register::<CreateVillaTree>()
        .register::<StoreDocument>()
        .register::<StorePhoto>()
        .register::<MakeThumbnail>()
        .register::<DeleteStoredFile>()
}

fn jpeg(w: u32, h: u32) -> Vec<u8> {
    let img = image::RgbImage::from_fn(w, h, |x, y| {
        image::Rgb([(x % 251) as u8, (y % 241) as u8, ((x * y) % 239) as u8])
    });
    let mut out = Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Jpeg).unwrap();
    out.into_inner()
}

fn file(name: &str, bytes: Vec<u8>, mime: &str) -> Part {
    Part::bytes(bytes)
        .file_name(name.to_owned())
        .mime_str(mime)
        .unwrap()
}

async fn upload(app: &TestApp, path: &str, form: Form) -> (u16, Value) {
    json(
        app.request(Method::POST, path, Some("manager"))
            .multipart(form)
            .send()
            .await
            .unwrap(),
    )
    .await
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_multipart_document_reaches_the_store_and_is_deleted_from_it(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let villa = create_villa(&app, "Villa Docs").await;
    let path = format!("/management/villas/{villa}/documents");
    let content: Vec<u8> = (0..2_000_000u32).map(|i| (i * 7 % 256) as u8).collect();
    let form = Form::new()
        .part(
            "file",
            file(
                "Insurance 2026 (final).pdf",
                content.clone(),
                "application/pdf",
            ),
        )
        .text("documentType", "INSURANCE_CERTIFICATE")
        .text("title", "Insurance 2026");
    let (status, doc) = upload(&app, &path, form).await;
    assert_eq!(status, 201, "{doc}");
    assert_eq!(doc["fileName"], "Insurance-2026--final-.pdf");
    assert_eq!(doc["title"], "Insurance 2026");
    assert_eq!(doc["documentType"], "INSURANCE_CERTIFICATE");
    assert_eq!(doc["mimeType"], "application/pdf");
    assert_eq!(doc["fileSize"], content.len());
    assert_eq!(doc["storageStatus"], "PENDING");
    let storage_path = doc["storagePath"].as_str().unwrap().to_owned();
    assert!(storage_path.starts_with("Villas/VL-"), "{storage_path}");
    assert!(
        storage_path.contains("/Documents/")
            && storage_path.ends_with("/Insurance-2026--final-.pdf"),
        "{storage_path}"
    );

    let worker = app.worker(registry());
    let on_disk = app.core.storage_local_dir.join(&storage_path);
    let id = doc["id"].as_str().unwrap().to_owned();
    let listed = eventually(Duration::from_secs(20), || async {
        let (_, list) = send(&app, Method::GET, &path, "viewer", None).await;
        (list["data"][0]["storageStatus"] == "STORED").then_some(list)
    })
    .await
    .expect("never stored");
    assert_eq!(
        listed["pagination"],
        json!({"page": 1, "limit": 20, "total": 1})
    );
    assert_eq!(listed["data"][0]["id"], id.as_str());
    assert_eq!(tokio::fs::read(&on_disk).await.unwrap(), content);
    let pending: Option<i32> =
        sqlx::query_scalar("SELECT length(pending_content) FROM documents WHERE id = $1::uuid")
            .bind(&id)
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(pending, None, "the database's copy is dropped once stored");

    // The same upload through onboarding lands in the same tree.
    let (status, _) = upload(
        &app,
        &path,
        Form::new()
            .part(
                "file",
                file("rules.txt", b"No parties".to_vec(), "text/plain"),
            )
            .text("documentType", "HOUSE_RULES"),
    )
    .await;
    assert_eq!(status, 201);
    let (_, page) = send(
        &app,
        Method::GET,
        &format!("{path}?limit=1&page=2"),
        "viewer",
        None,
    )
    .await;
    assert_eq!(page["pagination"]["total"], 2);
    assert_eq!(page["data"][0]["id"], id.as_str(), "newest first");

    let (status, _) = send(
        &app,
        Method::DELETE,
        &format!("/management/documents/{id}"),
        "manager",
        None,
    )
    .await;
    assert_eq!(status, 204);
    assert!(
        eventually(Duration::from_secs(20), || async {
            (!on_disk.exists()).then_some(())
        })
        .await
        .is_some(),
        "file still in the store"
    );
    let (status, err) = send(
        &app,
        Method::DELETE,
        &format!("/management/documents/{id}"),
        "manager",
        None,
    )
    .await;
    assert_eq!(status, 404);
    assert_error_shape("management", &err, 404, "NOT_FOUND");
    let (_, list) = send(&app, Method::GET, &path, "viewer", None).await;
    assert_eq!(list["pagination"]["total"], 1);
    worker.shutdown().await;
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn document_uploads_are_checked(pool: PgPool) {
    let app = TestApp::spawn_with(
        pool.clone(),
        TestAppOptions {
            upload_max_bytes: 1000,
            ..TestAppOptions::default()
        },
    )
    .await;
    let villa = create_villa(&app, "Villa Checks").await;
    let path = format!("/management/villas/{villa}/documents");
    let (status, err) = upload(&app, &path, Form::new().text("title", "nothing")).await;
    assert_eq!(status, 400);
    assert_error_shape("management", &err, 400, "VALIDATION_ERROR");
    assert_eq!(detail_fields(&err), ["documentType", "file"]);
    for (form, fields) in [
        (
            Form::new()
                .part("file", file("a.pdf", vec![1; 10], "application/pdf"))
                .text("documentType", "SECRET_PLANS"),
            vec!["documentType"],
        ),
        (
            Form::new()
                .part("file", file("a.pdf", vec![], "application/pdf"))
                .text("documentType", "OTHER"),
            vec!["file"],
        ),
        (
            Form::new()
                .part("file", file("big.pdf", vec![1; 1001], "application/pdf"))
                .text("documentType", "OTHER"),
            vec!["file"],
        ),
        (
            Form::new()
                .part("file", Part::bytes(vec![1; 10]))
                .text("documentType", "OTHER"),
            vec!["file"],
        ),
        (
            Form::new()
                .part("file", file("a.pdf", vec![1; 10], "application/pdf"))
                .part("file", file("b.pdf", vec![1; 10], "application/pdf"))
                .text("documentType", "OTHER")
                .text("title", "t".repeat(256)),
            vec!["file", "title"],
        ),
    ] {
        let (status, err) = upload(&app, &path, form).await;
        assert_eq!(status, 400, "{err}");
        assert_eq!(detail_fields(&err), fields, "{err}");
    }
    // Not multipart; unknown and malformed villas.
    let (status, err) = send(
        &app,
        Method::POST,
        &path,
        "manager",
        Some(json!({"documentType": "OTHER"})),
    )
    .await;
    assert_eq!(status, 415);
    assert_error_shape("management", &err, 415, "UNSUPPORTED_MEDIA_TYPE");
    let form = || {
        Form::new()
            .part("file", file("a.pdf", vec![1; 10], "application/pdf"))
            .text("documentType", "OTHER")
    };
    let (status, err) = upload(
        &app,
        &format!("/management/villas/{}/documents", Uuid::now_v7()),
        form(),
    )
    .await;
    assert_eq!(status, 404);
    assert_error_shape("management", &err, 404, "NOT_FOUND");
    let (status, _) = upload(&app, "/management/villas/x/documents", form()).await;
    assert_eq!(status, 400);
    let (status, _) = send(
        &app,
        Method::GET,
        &format!("/management/villas/{}/documents", Uuid::now_v7()),
        "viewer",
        None,
    )
    .await;
    assert_eq!(status, 404);
    // A truncated multipart body.
    let res = app
        .request(Method::POST, &path, Some("manager"))
        .header("content-type", "multipart/form-data; boundary=XYZ")
        .body(
            "--XYZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.pdf\"\r\n\r\nabc",
        )
        .send()
        .await
        .unwrap();
    let (status, err) = json(res).await;
    assert_eq!(status, 400, "{err}");
    assert_error_shape("management", &err, 400, "VALIDATION_ERROR");
    let documents: i64 = sqlx::query_scalar("SELECT count(*) FROM documents")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(documents, 0);
}

async fn covers(pool: &PgPool, villa: Uuid) -> Vec<Uuid> {
    sqlx::query_scalar("SELECT id FROM photos WHERE villa_id = $1 AND is_cover")
        .bind(villa)
        .fetch_all(pool)
        .await
        .unwrap()
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn photos_are_uploaded_stored_thumbnailed_and_one_is_the_cover(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let villa = create_villa(&app, "Villa Photos").await;
    let path = format!("/management/villas/{villa}/photos");
    let (a, b) = (jpeg(800, 600), jpeg(300, 200));
    let form = Form::new()
        .part("photos", file("pool view.jpg", a.clone(), "image/jpeg"))
        .part(
            "photos",
            file("garden.jpg", b.clone(), "application/octet-stream"),
        )
        .text("category", "pool_outdoor_areas")
        .text("caption", "Infinity pool")
        .text("isCover", "true");
    let (status, body) = upload(&app, &path, form).await;
    assert_eq!(status, 201, "{body}");
    let photos = body["data"].as_array().unwrap();
    assert_eq!(photos.len(), 2);
    assert_eq!(photos[0]["isCover"], true);
    assert_eq!(photos[1]["isCover"], false);
    assert_eq!(photos[0]["category"], "POOL_OUTDOOR_AREAS");
    assert_eq!(photos[1]["mimeType"], "image/jpeg", "read from the bytes");
    assert_eq!(
        (&photos[0]["width"], &photos[0]["height"]),
        (&json!(800), &json!(600))
    );
    assert_eq!(photos[0]["caption"], "Infinity pool");
    let first_path = photos[0]["storagePath"].as_str().unwrap().to_owned();
    assert!(
        first_path.contains("/Photos/Pool-Outdoor-Areas/pool-view.jpg"),
        "{first_path}"
    );
    let ids: Vec<String> = photos
        .iter()
        .map(|p| p["id"].as_str().unwrap().to_owned())
        .collect();

    // `file` is accepted too; a bedroom needs its subfolder.
    let (status, body) = upload(
        &app,
        &path,
        Form::new()
            .part("file", file("bed.jpg", jpeg(64, 64), "image/jpeg"))
            .text("category", "bedrooms")
            .text("subfolder", "Master"),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    assert!(
        body["data"][0]["storagePath"]
            .as_str()
            .unwrap()
            .contains("/Photos/Bedrooms/Master/bed.jpg")
    );

    let worker = app.worker(registry());
    let on_disk = app.core.storage_local_dir.join(&first_path);
    assert!(
        eventually(Duration::from_secs(30), || async {
            let (_, list) = send(&app, Method::GET, &path, "viewer", None).await;
            let all_done = list["data"].as_array().is_some_and(|p| {
                p.len() == 3
                    && p.iter().all(|p| {
                        p["thumbnailUrl"].is_string() && p["storageLocation"] == "document_store"
                    })
            });
            all_done.then_some(())
        })
        .await
        .is_some(),
        "photos never stored and thumbnailed"
    );
    assert_eq!(tokio::fs::read(&on_disk).await.unwrap(), a);
    worker.shutdown().await;

    let (_, list) = send(&app, Method::GET, &path, "viewer", None).await;
    assert_eq!(list["data"][0]["id"], ids[0].as_str(), "the cover first");
    assert_eq!(list["pagination"]["total"], 3);

    // The cover moves, atomically: one cover at every moment, whoever asks at the same time.
    let (status, photo) = send(
        &app,
        Method::PATCH,
        &format!("/management/photos/{}/cover", ids[1]),
        "manager",
        None,
    )
    .await;
    assert_eq!(status, 200, "{photo}");
    assert_eq!(photo["isCover"], true);
    assert_eq!(
        covers(&pool, villa).await,
        [ids[1].parse::<Uuid>().unwrap()]
    );
    let app = &app;
    let calls = (0..12).map(|i| {
        let id = ids[i % 2].clone();
        async move {
            send(
                app,
                Method::PATCH,
                &format!("/management/photos/{id}/cover"),
                "manager",
                None,
            )
            .await
        }
    });
    for (status, body) in futures::future::join_all(calls).await {
        assert_eq!(status, 200, "{body}");
    }
    assert_eq!(covers(&pool, villa).await.len(), 1);
    let (status, err) = send(
        app,
        Method::PATCH,
        &format!("/management/photos/{}/cover", Uuid::now_v7()),
        "manager",
        None,
    )
    .await;
    assert_eq!(status, 404);
    assert_error_shape("management", &err, 404, "NOT_FOUND");
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn photo_uploads_are_checked(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let villa = create_villa(&app, "Villa Photo Checks").await;
    let path = format!("/management/villas/{villa}/photos");
    for (form, fields) in [
        (Form::new().text("category", "kitchen"), vec!["photos"]),
        (
            Form::new()
                .part("photos", file("a.jpg", jpeg(10, 10), "image/jpeg"))
                .part(
                    "photos",
                    file("notes.txt", b"not an image".to_vec(), "image/jpeg"),
                )
                .text("category", "dungeon"),
            vec!["category", "photos[1]"],
        ),
        (
            Form::new()
                .part("photos", file("a.jpg", jpeg(10, 10), "image/jpeg"))
                .text("category", "bedrooms"),
            vec!["subfolder"],
        ),
        (
            Form::new()
                .part("photos", file("a.jpg", jpeg(10, 10), "image/jpeg"))
                .text("subfolder", "Master")
                .text("isCover", "maybe"),
            vec!["isCover", "subfolder"],
        ),
    ] {
        let (status, err) = upload(&app, &path, form).await;
        assert_eq!(status, 400, "{err}");
        assert_error_shape("management", &err, 400, "VALIDATION_ERROR");
        assert_eq!(detail_fields(&err), fields, "{err}");
    }
    let mut many = Form::new();
    for i in 0..21 {
        many = many.part(
            "photos",
            file(&format!("{i}.jpg"), jpeg(8, 8), "image/jpeg"),
        );
    }
    let (status, err) = upload(&app, &path, many).await;
    assert_eq!(status, 400);
    assert_eq!(detail_fields(&err), ["photos"]);
    let photos: i64 = sqlx::query_scalar("SELECT count(*) FROM photos")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(photos, 0, "nothing of a refused upload is kept");
    // Without a category the photos go to the exterior views.
    let (status, body) = upload(
        &app,
        &path,
        Form::new().part("photos", file("front.png", png(), "image/png")),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["data"][0]["category"], "EXTERIOR_VIEWS");
    assert_eq!(body["data"][0]["mimeType"], "image/png");
}

fn png() -> Vec<u8> {
    let img = image::RgbImage::from_pixel(16, 8, image::Rgb([10, 200, 30]));
    let mut out = Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png).unwrap();
    out.into_inner()
}

/// Ten uploads of one file name within a second are all accepted, each under a name of its own,
/// and all reach the store with their own bytes (the suffix once came from the time-ordered part
/// of the id, so the third upload within a minute was refused with 409).
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn uploads_of_one_name_in_one_second_are_all_kept(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let villa = create_villa(&app, "Villa Same Name").await;
    let path = format!("/management/villas/{villa}/documents");
    let started = std::time::Instant::now();
    let uploads = (0..10u8).map(|i| {
        let form = Form::new()
            .part("file", file("same.txt", vec![b'a' + i; 100], "text/plain"))
            .text("documentType", "OTHER");
        let (app, path) = (&app, &path);
        async move { (i, upload(app, path, form).await) }
    });
    let answers = futures::future::join_all(uploads).await;
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    let mut stored_names = std::collections::HashSet::new();
    let mut expected = Vec::new();
    for (i, (status, doc)) in answers {
        assert_eq!(status, 201, "upload {i}: {doc}");
        let storage_path = doc["storagePath"].as_str().unwrap().to_owned();
        assert!(
            stored_names.insert(storage_path.clone()),
            "{storage_path} twice"
        );
        expected.push((doc["id"].as_str().unwrap().to_owned(), storage_path, i));
    }
    assert!(stored_names.iter().any(|p| p.ends_with("/same.txt")));

    let _worker = app.worker(registry());
    let stored = eventually(Duration::from_secs(30), || async {
        let n: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM documents WHERE villa_id = $1::uuid AND storage_file_id IS NOT NULL",
        )
        .bind(villa)
        .fetch_one(&pool)
        .await
        .unwrap();
        (n == 10).then_some(())
    })
    .await;
    assert!(stored.is_some(), "not every upload reached the store");
    for (id, storage_path, i) in expected {
        let bytes = tokio::fs::read(app.core.storage_local_dir.join(&storage_path))
            .await
            .unwrap_or_else(|e| panic!("{storage_path} ({id}): {e}"));
        assert_eq!(bytes, vec![b'a' + i; 100], "{storage_path}");
    }
}

/// A deleted document's file is removed by a job that may wait (a busy store postpones it).
/// If the same name is uploaded again meanwhile, the new file takes the freed path: the late
/// delete must leave it alone rather than remove what the new record points at.
#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn a_late_delete_leaves_the_file_of_a_newer_upload_of_its_name(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let villa = create_villa(&app, "Villa Late Delete").await;
    let path = format!("/management/villas/{villa}/documents");
    let form = |bytes: &[u8]| {
        Form::new()
            .part("file", file("Rules.pdf", bytes.to_vec(), "application/pdf"))
            .text("documentType", "HOUSE_RULES")
    };
    let stored = |id: String| {
        let app = &app;
        let path = path.clone();
        async move {
            eventually(Duration::from_secs(20), || async {
                let (_, list) = send(app, Method::GET, &path, "viewer", None).await;
                list["data"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|d| d["id"] == id.as_str() && d["storageStatus"] == "STORED")
                    .then_some(())
            })
            .await
            .is_some()
        }
    };
    let worker = app.worker(registry());
    let (status, first) = upload(&app, &path, form(b"first rules")).await;
    assert_eq!(status, 201, "{first}");
    let first_id = first["id"].as_str().unwrap().to_owned();
    assert!(
        stored(first_id.clone()).await,
        "the first upload was never stored"
    );

    // The delete's job waits (as a throttled one would) while the name is uploaded again. No
    // worker runs until it is postponed: a running one could claim it between the 204 and the
    // postponement, and the delete would no longer be late.
    worker.shutdown().await;
    let (status, _) = send(
        &app,
        Method::DELETE,
        &format!("/management/documents/{first_id}"),
        "manager",
        None,
    )
    .await;
    assert_eq!(status, 204);
    let postponed = sqlx::query(
        "UPDATE jobs SET run_at = now() + interval '1 hour'
         WHERE kind = 'documents.delete_stored_file' AND status = 'QUEUED'",
    )
    .execute(&pool)
    .await
    .unwrap();
    assert_eq!(
        postponed.rows_affected(),
        1,
        "the delete's job, not yet run"
    );
    let worker = app.worker(registry());
    let (status, second) = upload(&app, &path, form(b"second rules")).await;
    assert_eq!(status, 201, "{second}");
    assert_eq!(
        second["storagePath"], first["storagePath"],
        "the freed path is taken again"
    );
    assert!(
        stored(second["id"].as_str().unwrap().to_owned()).await,
        "the second upload was never stored"
    );

    // Now the late delete runs.
    sqlx::query("UPDATE jobs SET run_at = now(), pushed_at = NULL WHERE kind = 'documents.delete_stored_file'")
        .execute(&pool)
        .await
        .unwrap();
    let done: Option<serde_json::Value> = eventually(Duration::from_secs(20), || async {
        sqlx::query_scalar::<_, serde_json::Value>(
            "SELECT result FROM jobs WHERE kind = 'documents.delete_stored_file' AND status = 'SUCCEEDED'",
        )
        .fetch_optional(&pool)
        .await
        .unwrap()
    })
    .await;
    let done = done.expect("the late delete never ran");
    assert!(done.get("skipped").is_some(), "{done}");
    let on_disk = app
        .core
        .storage_local_dir
        .join(second["storagePath"].as_str().unwrap());
    assert_eq!(tokio::fs::read(&on_disk).await.unwrap(), b"second rules");
    worker.shutdown().await;
}
