#!/usr/bin/env bash
# The job pipeline at batch scale (issue 31), in one run on this machine:
#   1. JOBS (default 100,000) no-op jobs through the real pipeline (job rows written
#      ENQUEUE_BATCH to a transaction, Redis, one worker-system process, ends recorded): jobs/s
#      from the first enqueue to the last SUCCEEDED; then enqueue-to-finish p50/p99 at a steady
#      200 jobs/s (one job to a transaction, as a request enqueues it); then 50 single jobs on a
#      quiet platform, enqueue-to-start p50/p99.
#   2. next to it, pgbench running the pipeline's SQL on the same database: the per-job shape
#      (bench/job_sql.pgbench: insert, claim, complete, one transaction each) and the batched
#      shape (bench/job_sql_batched.pgbench) at batches of 10, 32 and 100: the database's ceilings.
# Exits 1 when a target of issue 31 is missed: below 10,000 jobs/s, a steady p99 above 50 ms, a
# quiet p50 start above 50 ms.
# Uses a scratch database and a private redis-server; leaves nothing behind.
#   Usage: bench/pipeline.sh        (JOBS=..., ENQUEUE_BATCH=..., SQL_SECONDS=..., WORKERS=...)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/services.sh
source bench/lib.sh
ensure_postgres
command -v pgbench >/dev/null || apt_install postgresql

JOBS=${JOBS:-100000}
WORKERS=${WORKERS:-1}
SQL_SECONDS=${SQL_SECONDS:-10}
echo "building release binaries..."
cargo build --release -q --bin villa-api --bin worker-system --bin pipeline-bench

bench_platform pipeline_bench "$WORKERS"

echo "machine: $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg); PostgreSQL $(psql "$DATABASE_URL" -tAc 'SHOW server_version'); worker-system processes: $WORKERS"
echo
echo "== 1. the pipeline: $JOBS no-op jobs, then 200 jobs/s"
pipeline_out=$(mktemp)
./target/release/pipeline-bench --jobs "$JOBS" --producers 4 --enqueue-batch "${ENQUEUE_BATCH:-100}" --rate 200 --seconds 15 --quiet-jobs 50 | tee "$pipeline_out"
throughput=$(sed -n 's/^pipeline.throughput_per_s *\([0-9.]*\).*/\1/p' "$pipeline_out")
steady_p99=$(sed -n 's/^pipeline.steady_latency_ms .* p99 \([0-9.]*\).*/\1/p' "$pipeline_out")
quiet_p50=$(sed -n 's/^pipeline.quiet_start_ms *p50 \([0-9.]*\).*/\1/p' "$pipeline_out")
rm -f "$pipeline_out"
echo
echo "== 2. the database's ceilings for the same SQL (pgbench, 16 clients, ${SQL_SECONDS} s each)"
tps() { # pgbench args...: its tps, each shape over a jobs table as the pipeline left it
  psql "$DATABASE_URL" -q -c "DELETE FROM jobs WHERE queue = 'bench'" -c "VACUUM ANALYZE jobs" >/dev/null
  pgbench -n -M prepared -c 16 -j 2 -T "$SQL_SECONDS" "$@" "$DATABASE_URL" 2>/dev/null | sed -n 's/^tps = \([0-9.]*\).*/\1/p'
}
one=$(tps -f bench/job_sql.pgbench)
printf 'sql.per_job_jobs_per_s        %8.0f   (insert, claim, complete: one transaction each per job)\n' "$one"
printf 'ratio.pipeline_to_per_job     %8.2f\n' "$(awk -v p="$throughput" -v c="$one" 'BEGIN { printf "%.2f", p / c }')"
for batch in 10 32 100; do
  t=$(tps -D batch=$batch -f bench/job_sql_batched.pgbench)
  jobs_per_s=$(awk -v t="$t" -v b="$batch" 'BEGIN { printf "%.0f", t * b }')
  printf 'sql.batch_%-3s_jobs_per_s      %8.0f   (the same three statements, each for %s jobs)\n' "$batch" "$jobs_per_s" "$batch"
  printf 'ratio.pipeline_to_batch_%-3s   %8.2f\n' "$batch" "$(awk -v p="$throughput" -v c="$jobs_per_s" 'BEGIN { printf "%.2f", p / c }')"
done
missed=$(awk -v t="$throughput" -v s="$steady_p99" -v q="$quiet_p50" 'BEGIN {
  if (t < 10000) print "throughput " t " jobs/s < 10000";
  if (s > 50) print "steady p99 " s " ms > 50";
  if (q > 50) print "quiet p50 start " q " ms > 50" }')
if [ -n "$missed" ]; then echo "targets missed: $missed"; exit 1; fi
echo "targets met: >= 10,000 jobs/s, steady p99 <= 50 ms, quiet p50 start < 50 ms"
