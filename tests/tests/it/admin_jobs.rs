//! Operators' job routes and the scheduler's housekeeping job.

use std::time::Duration;

use jobs::{
    Job, JobRegistry,
    system::{DiagnosticJob, PurgeFinishedJobs},
};
use serde_json::json;
use sqlx::PgPool;
use tests::{TestApp, eventually, job_status, json as read_json};
use uuid::Uuid;

fn registry() -> JobRegistry {
    JobRegistry::new()
        .register::<DiagnosticJob>()
        .register::<PurgeFinishedJobs>()
}

async fn wait_status(pool: &PgPool, id: Uuid, status: &str) -> bool {
    eventually(Duration::from_secs(20), || async {
        (job_status(pool, id).await.as_deref() == Some(status)).then_some(())
    })
    .await
    .is_some()
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn operators_list_filter_inspect_and_retry_jobs(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let worker = app.worker(registry());
    let (status, failing) = read_json(
        app.post_json(
            "/admin/jobs/diagnostic",
            "admin",
            &json!({"failAttempts": 3}),
        )
        .await,
    )
    .await;
    assert_eq!(status, 202);
    let (_, fine) = read_json(
        app.post_json("/admin/jobs/diagnostic", "admin", &json!({"note": "fine"}))
            .await,
    )
    .await;
    let failing_id: Uuid = failing["id"].as_str().unwrap().parse().unwrap();
    let fine_id: Uuid = fine["id"].as_str().unwrap().parse().unwrap();
    assert!(wait_status(&pool, failing_id, "FAILED").await);
    assert!(wait_status(&pool, fine_id, "SUCCEEDED").await);

    let (status, body) = read_json(app.get("/admin/jobs?status=FAILED", "admin").await).await;
    assert_eq!(status, 200);
    assert_eq!(body["pagination"]["total"], 1);
    assert_eq!(body["data"][0]["id"], failing_id.to_string());
    assert_eq!(body["data"][0]["attempts"], 3);
    assert!(
        body["data"][0]["error"]
            .as_str()
            .unwrap()
            .contains("attempt 3 of 3")
    );
    let (_, all) = read_json(app.get("/admin/jobs?queue=system&limit=1", "admin").await).await;
    assert_eq!(
        all["pagination"],
        json!({"page": 1, "limit": 1, "total": 2})
    );
    assert_eq!(all["data"][0]["id"], fine_id.to_string(), "newest first");

    let (_, queues) = read_json(app.get("/admin/queues", "admin").await).await;
    assert_eq!(queues["data"][0]["queue"], "system");
    assert_eq!(
        (
            queues["data"][0]["succeeded"].as_i64(),
            queues["data"][0]["failed"].as_i64()
        ),
        (Some(1), Some(1))
    );
    assert_eq!(queues["data"][0]["redisBacklog"], 0);

    // Retrying a job that did not fail is refused; a failed one runs again with fresh attempts.
    let res = app
        .request(
            reqwest::Method::POST,
            &format!("/admin/jobs/{fine_id}/retry"),
            Some("admin"),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 409);
    sqlx::query("UPDATE jobs SET payload = '{\"note\": \"fixed\"}' WHERE id = $1")
        .bind(failing_id)
        .execute(&pool)
        .await
        .unwrap();
    let res = app
        .request(
            reqwest::Method::POST,
            &format!("/admin/jobs/{failing_id}/retry"),
            Some("admin"),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 202);
    assert!(wait_status(&pool, failing_id, "SUCCEEDED").await);
    let (_, job) = read_json(app.get(&format!("/admin/jobs/{failing_id}"), "admin").await).await;
    assert_eq!(
        (job["attempts"].as_i64(), job["error"].clone()),
        (Some(1), json!(null))
    );

    let (status, _) = read_json(
        app.get(&format!("/admin/jobs/{}", Uuid::now_v7()), "admin")
            .await,
    )
    .await;
    assert_eq!(status, 404);
    let res = app
        .request(
            reqwest::Method::POST,
            &format!("/admin/jobs/{}/retry", Uuid::now_v7()),
            Some("admin"),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);
    worker.shutdown().await;
}

#[sqlx::test(migrator = "domain::MIGRATOR")]
async fn the_purge_runs_once_per_tick_and_deletes_only_old_finished_jobs(pool: PgPool) {
    let app = TestApp::spawn(pool.clone()).await;
    let insert = |status: &'static str, age_days: i32| {
        let pool = pool.clone();
        async move {
            let id = Uuid::now_v7();
            sqlx::query(
                "INSERT INTO jobs (id, kind, queue, payload, max_attempts, status, finished_at)
                 VALUES ($1, 'system.diagnostic', 'system', '{}', 3, $2,
                         CASE WHEN $2 IN ('SUCCEEDED', 'FAILED') THEN now() - $3 * interval '1 day' END)",
            )
            .bind(id)
            .bind(status)
            .bind(age_days)
            .execute(&pool)
            .await
            .unwrap();
            id
        }
    };
    let old_done = insert("SUCCEEDED", 20).await;
    let old_failed = insert("FAILED", 15).await;
    let recent_done = insert("SUCCEEDED", 2).await;
    let queued = insert("QUEUED", 0).await;

    let tick = PurgeFinishedJobs {
        older_than_days: 14,
        tick: "1795230000".into(),
    };
    let mut ids = Vec::new();
    for _ in 0..2 {
        let mut tx = pool.begin().await.unwrap();
        let e = tick.enqueue(&mut tx).await.unwrap();
        tx.commit().await.unwrap();
        app.queues.push(&[e]).await;
        ids.push(e);
    }
    assert!(
        ids[0].inserted && !ids[1].inserted,
        "a second schedule firing on the same tick adds nothing"
    );
    let worker = app.worker(registry());
    assert!(wait_status(&pool, ids[0].id, "SUCCEEDED").await);
    for (id, kept) in [
        (old_done, false),
        (old_failed, false),
        (recent_done, true),
        (queued, true),
    ] {
        assert_eq!(job_status(&pool, id).await.is_some(), kept, "{id}");
    }
    let (_, job) = read_json(
        app.get(&format!("/admin/jobs/{}", ids[0].id), "admin")
            .await,
    )
    .await;
    assert_eq!(job["result"], json!({"deleted": 2}));
    worker.shutdown().await;
}
