#!/usr/bin/env bash
# Benchmarks of the platform foundation, in one run on this machine, each next to the database's
# own figure measured in the same run:
#   1. job pipeline: 10,000 no-op jobs through the real pipeline (job row, Redis, worker-system,
#      status update): jobs/s, then enqueue-to-finish p50/p99 at a steady 200 jobs/s;
#      next to pgbench running the same per-job SQL (bench/job_sql.pgbench).
#   2. authenticated read path: GET /management/villas/{id} with a bearer token under 32
#      connections (wrk), as a ratio of `pgbench -S -M prepared -c 16`, and next to pgbench
#      running that route's own SQL (bench/villa_by_id.pgbench).
# Uses a scratch database and a private redis-server; leaves nothing behind.
#   Usage: bench/run.sh     (WORKERS=2 to run two worker-system processes)
set -euo pipefail
[ -n "${BENCH_DEBUG:-}" ] && set -x
cd "$(dirname "$0")/.."
source scripts/services.sh
source bench/lib.sh
ensure_postgres
command -v wrk >/dev/null || apt_install wrk
command -v pgbench >/dev/null || apt_install postgresql

WORKERS=${WORKERS:-1}
DURATION=${DURATION:-15}
echo "building release binaries..."
cargo build --release --workspace --bins -q

bench_platform bench "$WORKERS"

echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB; PostgreSQL $(psql "$DATABASE_URL" -tAc 'SHOW server_version'); worker-system processes: $WORKERS"
echo
echo "== 1. job pipeline"
./target/release/pipeline-bench --jobs 10000 --producers 16 --enqueue-batch 1 --rate 200 --seconds "$DURATION"
sql_tps=$(pgbench -n -M prepared -f bench/job_sql.pgbench -c 16 -j 2 -T 10 "$DATABASE_URL" 2>/dev/null | sed -n 's/^tps = \([0-9.]*\).*/\1/p')
printf 'pgbench.job_sql_tps           %.0f   (the same per-job SQL, no HTTP/Redis/worker: the database ceiling)\n' "$sql_tps"

echo
echo "== 2. authenticated read path"
villa=$(psql "$DATABASE_URL" -tAc "INSERT INTO villas (id, villa_code, villa_name, city, country, bedrooms, bathrooms, max_guests, property_type)
  VALUES (gen_random_uuid(), 'BENCH-1', 'Villa Bench', 'Phuket', 'Thailand', 4, 3, 8, 'VILLA') RETURNING id" | head -n1)
token=$(./target/release/villa-api mint-token --role viewer)
url="http://127.0.0.1:$port/management/villas/$villa"
test "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" "$url")" = 200
wrk -t2 -c32 -d3s -H "Authorization: Bearer $token" "$url" >/dev/null   # warm-up
wrk -t2 -c32 -d"${DURATION}s" --latency -H "Authorization: Bearer $token" "$url" >"$work/wrk.txt"
http_rps=$(sed -n 's/^Requests\/sec:[[:space:]]*\([0-9.]*\)/\1/p' "$work/wrk.txt")
http_p99=$(awk '$1=="99%"{print $2}' "$work/wrk.txt")
http_p50=$(awk '$1=="50%"{print $2}' "$work/wrk.txt")
errors=$(grep -E "Non-2xx|Socket errors" "$work/wrk.txt" || true)
pgbench -i -q -s 10 "$DATABASE_URL" >/dev/null 2>&1
select_tps=$(pgbench -S -M prepared -c 16 -j 2 -T "$DURATION" "$DATABASE_URL" 2>/dev/null | sed -n 's/^tps = \([0-9.]*\).*/\1/p')
route_tps=$(pgbench -n -M prepared -f bench/villa_by_id.pgbench -D villa_id="$villa" -c 16 -j 2 -T "$DURATION" "$DATABASE_URL" 2>/dev/null | sed -n 's/^tps = \([0-9.]*\).*/\1/p')
printf 'http.get_villa_rps            %.0f   p50 %s  p99 %s  (wrk, 32 connections)%s\n' "$http_rps" "$http_p50" "$http_p99" "${errors:+  ERRORS: $errors}"
printf 'pgbench.select_only_tps       %.0f   (pgbench -S -M prepared -c 16)\n' "$select_tps"
printf 'pgbench.route_sql_tps         %.0f   (the route'"'"'s own SELECT, -M prepared -c 16)\n' "$route_tps"
printf 'ratio.http_vs_pgbench_S       %.2f   (target >= 0.5)\n' "$(awk -v a="$http_rps" -v b="$select_tps" 'BEGIN{print a/b}')"
