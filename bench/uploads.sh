#!/usr/bin/env bash
# Upload benchmarks of the onboarding API, in one run on this machine:
#   1. the API's peak RSS (VmHWM) while accepting 25 MB documents from 8 concurrent clients,
#      against the target of 8 times the payload in flight (8 x 25 MB);
#   2. acceptance latency p50/p99 of 1 MB documents from 20 concurrent clients, and the time
#      until all 200 are in the document store with 2 worker-documents processes, next to the
#      database's own figure (the same 1 MB rows inserted straight into Postgres);
#   3. thumbnail throughput for 12-megapixel JPEGs, per core (the media worker's function).
# Uses a scratch database, a private redis-server and a temporary store; leaves nothing behind.
#   Usage: bench/uploads.sh
set -euo pipefail
[ -n "${BENCH_DEBUG:-}" ] && set -x
cd "$(dirname "$0")/.."
source scripts/services.sh
ensure_postgres
echo "building release binaries..."
cargo build --release --workspace --bins -q

work=$(mktemp -d)
db="villa_upload_bench_$$"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port=$(free_port)
redis_port=$(free_port)
pg_base=${PG_ADMIN_URL%/*}
export APP_ENV=development DEV_DIR="$work/dev" PORT=$port RUST_LOG=warn LOG_FORMAT=json \
  DATABASE_URL="$pg_base/$db" REDIS_URL="redis://127.0.0.1:$redis_port" \
  STORAGE_LOCAL_DIR="$work/storage" BENCH_API="http://127.0.0.1:$port"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  psql "$PG_ADMIN_URL" -qc "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

psql "$PG_ADMIN_URL" -qc "CREATE DATABASE \"$db\""
redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no >"$work/redis.log" 2>&1 &
pids+=($!)
./target/release/villa-api >"$work/api.log" 2>&1 &
api_pid=$!
pids+=($api_pid)
for _ in $(seq 1 150); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.2; done
BENCH_TOKEN=$(./target/release/villa-api mint-token --role admin)
export BENCH_TOKEN
kib() { awk -v k="$1" '/^'"$1"':/{print $2}' "/proc/$api_pid/status"; }

echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB; PostgreSQL $(psql "$DATABASE_URL" -tAc 'SHOW server_version')"
echo
echo "== 1. API memory while accepting 25 MB uploads (no workers running: the API alone)"
idle=$(kib VmRSS)
./target/release/upload-bench large --clients 8 --uploads 32
peak=$(kib VmHWM)
awk -v i="$idle" -v p="$peak" 'BEGIN {
  printf "api.rss_idle_mb               %.0f\n", i / 1024
  printf "api.rss_peak_mb               %.0f   (payload in flight 8 x 25 MB = 200 MB; target < 1600 MB: %.1fx the payload)\n", p / 1024, p / 1024 / 200 }'

echo
echo "== 2. 1 MB uploads: acceptance, then into the store with 2 worker-documents processes"
for i in 1 2; do
  ./target/release/worker-documents >"$work/worker-documents-$i.log" 2>&1 &
  pids+=($!)
done
./target/release/worker-media >"$work/worker-media.log" 2>&1 &
pids+=($!)
sleep 1
./target/release/upload-bench accept --clients 20 --uploads 200

echo
echo "== 3. thumbnails"
./target/release/upload-bench thumbnails --images 10
