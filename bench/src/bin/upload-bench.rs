//! Upload benchmarks against a running API and worker processes (started by bench/uploads.sh):
//!
//! * `large`: 25 MB documents from 8 concurrent clients (the script reads the API's peak RSS).
//! * `accept`: 1 MB documents from 20 concurrent clients: acceptance latency p50/p99, and the
//!   time from the first request until every upload is in the document store (each row has its
//!   `storage_file_id`), next to the database's own figure: the same 1 MB rows inserted straight
//!   into Postgres by 20 clients.
//! * `thumbnails`: 12-megapixel JPEG thumbnails on one thread (the worker's own function), as
//!   images per second per core.

use std::time::{Duration, Instant};

use base64::Engine as _;
use clap::{Parser, Subcommand};
use hdrhistogram::Histogram;
use serde_json::{Value, json};
use sqlx::PgPool;

#[derive(Parser)]
struct Args {
    #[arg(long, env = "DATABASE_URL")]
    database_url: String,
    #[arg(long, env = "BENCH_API")]
    api: String,
    #[arg(long, env = "BENCH_TOKEN")]
    token: String,
    #[command(subcommand)]
    what: What,
}

#[derive(Subcommand)]
enum What {
    Large {
        #[arg(long, default_value_t = 8)]
        clients: usize,
        #[arg(long, default_value_t = 32)]
        uploads: usize,
        #[arg(long, default_value_t = 25 * 1024 * 1024)]
        bytes: usize,
    },
    Accept {
        #[arg(long, default_value_t = 20)]
        clients: usize,
        #[arg(long, default_value_t = 200)]
        uploads: usize,
        #[arg(long, default_value_t = 1024 * 1024)]
        bytes: usize,
    },
    Thumbnails {
        #[arg(long, default_value_t = 10)]
        images: usize,
    },
}

async fn new_villa(http: &reqwest::Client, args: &Args) -> anyhow::Result<String> {
    let code = format!("BENCH-{}", uuid::Uuid::new_v4().simple());
    let res: Value = http
        .post(format!("{}/api/onboarding/start", args.api))
        .bearer_auth(&args.token)
        .json(&json!({"villaCode": &code[..20], "villaName": "Bench villa", "address": "x", "city": "x",
                      "country": "x", "bedrooms": 2, "bathrooms": 1, "maxGuests": 4, "propertyType": "VILLA"}))
        .send()
        .await?
        .json()
        .await?;
    Ok(res["villaId"]
        .as_str()
        .ok_or_else(|| anyhow::anyhow!("no villaId: {res}"))?
        .to_owned())
}

/// Sends `uploads` documents of `bytes` from `clients` concurrent clients; returns the latency
/// histogram (µs), the wall time, and the ids.
async fn upload_many(
    args: &Args,
    clients: usize,
    uploads: usize,
    bytes: usize,
) -> anyhow::Result<(Histogram<u64>, Duration, Vec<String>)> {
    let http = reqwest::Client::new();
    let villa = new_villa(&http, args).await?;
    let next = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let (http, next, villa) = (http.clone(), next.clone(), villa.clone());
        let (url, token) = (
            format!("{}/api/documents/upload", args.api),
            args.token.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let mut hist = Histogram::<u64>::new(3).expect("histogram");
            let mut ids = Vec::new();
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= uploads {
                    break;
                }
                let content: Vec<u8> = (0..bytes).map(|b| ((b * 7 + i) % 251) as u8).collect();
                let body = serde_json::to_vec(&json!({
                    "villaId": villa, "documentType": "OTHER", "fileName": format!("bench-{i}.bin"),
                    "fileContent": base64::engine::general_purpose::STANDARD.encode(&content),
                }))?;
                drop(content);
                let t = Instant::now();
                let res = http
                    .post(&url)
                    .bearer_auth(&token)
                    .header("content-type", "application/json")
                    .body(body)
                    .send()
                    .await?;
                let status = res.status();
                let v: Value = res.json().await?;
                hist.record(t.elapsed().as_micros() as u64)?;
                anyhow::ensure!(status == 201, "upload {i}: {status} {v}");
                ids.push(v["data"]["id"].as_str().unwrap_or_default().to_owned());
            }
            anyhow::Ok((hist, ids))
        }));
    }
    let mut hist = Histogram::<u64>::new(3)?;
    let mut ids = Vec::new();
    for t in tasks {
        let (h, i) = t.await??;
        hist.add(h)?;
        ids.extend(i);
    }
    Ok((hist, started.elapsed(), ids))
}

fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

/// The same rows straight into Postgres: `clients` connections inserting `uploads` bytea values
/// of `bytes`, one transaction each.
async fn db_figure(
    pool: &PgPool,
    clients: usize,
    uploads: usize,
    bytes: usize,
) -> anyhow::Result<Histogram<u64>> {
    sqlx::query("CREATE TABLE IF NOT EXISTS bench_blobs (id bigserial PRIMARY KEY, content bytea)")
        .execute(pool)
        .await?;
    let next = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let (pool, next) = (pool.clone(), next.clone());
        tasks.push(tokio::spawn(async move {
            let mut hist = Histogram::<u64>::new(3).expect("histogram");
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= uploads {
                    break;
                }
                let content: Vec<u8> = (0..bytes).map(|b| ((b * 7 + i) % 251) as u8).collect();
                let t = Instant::now();
                sqlx::query("INSERT INTO bench_blobs (content) VALUES ($1)")
                    .bind(&content)
                    .execute(&pool)
                    .await?;
                hist.record(t.elapsed().as_micros() as u64)?;
            }
            anyhow::Ok(hist)
        }));
    }
    let mut hist = Histogram::<u64>::new(3)?;
    for t in tasks {
        hist.add(t.await??)?;
    }
    sqlx::query("DROP TABLE bench_blobs").execute(pool).await?;
    Ok(hist)
}

fn jpeg_12mp() -> Vec<u8> {
    let img = image::RgbImage::from_fn(4000, 3000, |x, y| {
        image::Rgb([(x % 256) as u8, (y % 256) as u8, ((x ^ y) % 256) as u8])
    });
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Jpeg)
        .expect("encode");
    out.into_inner()
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    match args.what {
        What::Large {
            clients,
            uploads,
            bytes,
        } => {
            let (hist, wall, _) = upload_many(&args, clients, uploads, bytes).await?;
            println!(
                "upload.25mb                   {uploads} uploads of {} MB at {clients} clients in {:.1} s; p50 {:.0} ms  p99 {:.0} ms",
                bytes / (1024 * 1024),
                wall.as_secs_f64(),
                ms(hist.value_at_quantile(0.5)),
                ms(hist.value_at_quantile(0.99))
            );
        }
        What::Accept {
            clients,
            uploads,
            bytes,
        } => {
            let pool = domain::db::connect(&args.database_url, clients as u32 + 2).await?;
            let (hist, wall, ids) = upload_many(&args, clients, uploads, bytes).await?;
            let ids: Vec<uuid::Uuid> = ids.iter().filter_map(|i| i.parse().ok()).collect();
            println!(
                "upload.accept_1mb             p50 {:.1} ms  p99 {:.1} ms  max {:.1} ms  ({uploads} uploads, {clients} clients, all accepted in {:.2} s)",
                ms(hist.value_at_quantile(0.5)),
                ms(hist.value_at_quantile(0.99)),
                ms(hist.max()),
                wall.as_secs_f64()
            );
            // Until every row says the store has it; the rows' own timestamps give the finish.
            let deadline = Instant::now() + Duration::from_secs(600);
            loop {
                let stored: i64 = sqlx::query_scalar(
                    "SELECT count(*) FROM documents WHERE id = ANY($1) AND storage_file_id IS NOT NULL",
                )
                .bind(&ids)
                .fetch_one(&pool)
                .await?;
                if stored as usize == ids.len() || Instant::now() > deadline {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            let (first, last): (f64, f64) = sqlx::query_as(
                "SELECT extract(epoch FROM min(created_at))::float8, extract(epoch FROM max(updated_at))::float8
                 FROM documents WHERE id = ANY($1) AND storage_file_id IS NOT NULL",
            )
            .bind(&ids)
            .fetch_one(&pool)
            .await?;
            println!(
                "upload.all_in_store_1mb       {:.2} s from the first upload to the last file stored ({} uploads)",
                last - first,
                ids.len()
            );
            let db = db_figure(&pool, clients, uploads, bytes).await?;
            println!(
                "postgres.insert_1mb           p50 {:.1} ms  p99 {:.1} ms  (the same 1 MB rows inserted straight by {clients} clients: the database's own figure)",
                ms(db.value_at_quantile(0.5)),
                ms(db.value_at_quantile(0.99))
            );
        }
        What::Thumbnails { images } => {
            let photo = jpeg_12mp();
            // Warm-up, then one thread: the worker runs one thumbnail per blocking thread.
            domain::media::thumbnail(&photo)?;
            let t = Instant::now();
            for _ in 0..images {
                let (thumb, w, h) = domain::media::thumbnail(&photo)?;
                anyhow::ensure!((w, h) == (4000, 3000) && !thumb.is_empty());
            }
            let secs = t.elapsed().as_secs_f64();
            println!(
                "thumbnail.12mp_per_core       {:.2} images/s  ({:.0} ms each; 4000x3000 JPEG of {:.1} MB, one thread)",
                images as f64 / secs,
                secs * 1000.0 / images as f64,
                photo.len() as f64 / 1e6
            );
        }
    }
    Ok(())
}
