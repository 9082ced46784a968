#!/usr/bin/env bash
# The document store's backends (issue 19), in one run on this machine:
#   1. 200 x 1 MB documents uploaded through POST /api/documents/upload (20 clients), until every
#      one is in the store, with 2 worker-documents processes: on the local backend, then on an
#      S3-compatible server on loopback (moto's, as the tests use), each over its own database.
#      Beside them, the database's own figure: the same 1 MB rows inserted straight into Postgres
#      (upload-bench accept prints it).
#   2. The API's peak resident memory (VmHWM) while serving 25 MB files from S3 to 8 concurrent
#      clients (8 files, each client reading them all 3 times), over its idle figure; target:
#      under 4 x the bytes in flight (8 x 25 MB), so files are streamed, not buffered.
# Uses scratch databases, a private redis-server, a temporary local store and an S3 bucket on a
# private moto server; leaves nothing behind.
#   Usage: bench/storage.sh
set -euo pipefail
[ -n "${BENCH_DEBUG:-}" ] && set -x
cd "$(dirname "$0")/.."
source scripts/services.sh
ensure_postgres
python3 -c 'import moto.server' 2>/dev/null || pip install -q 'moto[server]>=5.1,<6'
echo "building release binaries..."
cargo build --release -p api -p workers -p bench --bins -q

work=$(mktemp -d)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
redis_port=$(free_port)
s3_port=$(free_port)
pg_base=${PG_ADMIN_URL%/*}
dbs=()
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  for db in "${dbs[@]}"; do psql "$PG_ADMIN_URL" -qc "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT
die() {
  echo "FAILED: $*" >&2
  for log in "$work"/*.log; do [ -f "$log" ] && { echo "--- $(basename "$log")" >&2; tail -n 10 "$log" >&2; }; done
  exit 1
}
stop() { kill -TERM "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }

redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no >"$work/redis.log" 2>&1 &
pids+=($!)
python3 -c "
from moto.server import ThreadedMotoServer
import time
server = ThreadedMotoServer(ip_address='127.0.0.1', port=$s3_port)
server.start()
time.sleep(10**9)" >"$work/moto.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:$s3_port/" && break; sleep 0.2; done
curl -sf -X PUT "http://127.0.0.1:$s3_port/villa-bench" >/dev/null || die "moto did not create the bucket"
S3_ENV=(STORAGE_BACKEND=s3 S3_ENDPOINT="http://127.0.0.1:$s3_port" S3_BUCKET=villa-bench S3_REGION=us-east-1
  AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing S3_PREFIX=bench)
LOCAL_ENV=(STORAGE_BACKEND=local)
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB; PostgreSQL $(psql "$PG_ADMIN_URL" -tAc 'SHOW server_version')"

start_platform() { # name env...: a database, the API and 2 worker-documents with that store
  name=$1
  shift
  db="villa_storage_bench_${name}_$$"
  dbs+=("$db")
  psql "$PG_ADMIN_URL" -qc "CREATE DATABASE \"$db\""
  port=$(free_port)
  common=(APP_ENV=development DEV_DIR="$work/dev" PORT="$port" RUST_LOG=warn LOG_FORMAT=json
    DATABASE_URL="$pg_base/$db" REDIS_URL="redis://127.0.0.1:$redis_port" REDIS_QUEUE_PREFIX="bench-$name"
    STORAGE_LOCAL_DIR="$work/storage-$name")
  start_api "$@"
  workers=()
  for i in 1 2; do
    env "${common[@]}" "$@" ./target/release/worker-documents >"$work/worker-$name-$i.log" 2>&1 &
    pids+=($!)
    workers+=($!)
  done
  export DATABASE_URL="$pg_base/$db" BENCH_API="http://127.0.0.1:$port"
  BENCH_TOKEN=$(env "${common[@]}" ./target/release/villa-api mint-token --role admin)
  export BENCH_TOKEN
  sleep 1
}
start_api() { # env...
  env "${common[@]}" "$@" ./target/release/villa-api >"$work/api-$name.log" 2>&1 &
  pids+=($!)
  api_pid=$!
  for _ in $(seq 1 150); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.2; done
  curl -sf "http://127.0.0.1:$port/healthz" >/dev/null || die "villa-api ($name) did not come up"
}
stop_platform() { stop "$api_pid"; for w in "${workers[@]}"; do stop "$w"; done; }
stored() { psql "$DATABASE_URL" -tAc "SELECT count(*) FROM documents WHERE storage_file_id IS NOT NULL AND file_size $1"; }

for backend in local s3; do
  echo
  echo "== 1. 200 x 1 MB documents into the store, 2 worker-documents, $backend backend"
  if [ "$backend" = local ]; then start_platform local "${LOCAL_ENV[@]}"; else start_platform s3 "${S3_ENV[@]}"; fi
  ./target/release/upload-bench accept --clients 20 --uploads 200 | sed "s/^/$backend./"
  [ "$(stored '= 1048576')" = 200 ] || die "not every 1 MB document reached the $backend store"
  [ "$backend" = s3 ] || stop_platform
done
objects=$(curl -s "http://127.0.0.1:$s3_port/villa-bench?list-type=2&prefix=bench/" | grep -o '<Key>' | wc -l)
echo "s3.objects_under_prefix       $objects   (200 documents and the villas' folder markers)"

echo
echo "== 2. the API's memory serving 25 MB files from S3 to 8 concurrent clients"
./target/release/upload-bench large --clients 8 --uploads 8 >/dev/null
for _ in $(seq 1 600); do [ "$(stored '> 20000000')" = 8 ] && break; sleep 0.5; done
[ "$(stored '> 20000000')" = 8 ] || die "the 25 MB documents did not reach the S3 store"
# A fresh API: its peak is the downloads', not the uploads' before.
stop "$api_pid"
name=s3
start_api "${S3_ENV[@]}"
ids=$(psql "$DATABASE_URL" -tAc "SELECT id FROM documents WHERE file_size > 20000000")
sleep 1
idle_kb=$(awk '/^VmRSS:/ { print $2 }' "/proc/$api_pid/status")
started=$(date +%s.%N)
for c in $(seq 1 8); do
  (for round in 1 2 3; do for id in $ids; do
    curl -sf -o /dev/null -H "Authorization: Bearer $BENCH_TOKEN" "$BENCH_API/api/documents/$id/file" || echo fail >>"$work/download-failures"
  done; done) &
done
wait_for_clients() { for job in $(jobs -p); do case " ${pids[*]} " in *" $job "*) ;; *) wait "$job" || true ;; esac; done; }
wait_for_clients
took=$(awk -v s="$started" -v e="$(date +%s.%N)" 'BEGIN { print e - s }')
[ ! -f "$work/download-failures" ] || die "$(wc -l <"$work/download-failures") downloads failed"
peak_kb=$(awk '/^VmHWM:/ { print $2 }' "/proc/$api_pid/status")
awk -v i="$idle_kb" -v p="$peak_kb" -v t="$took" 'BEGIN {
  printf "api.rss_idle_mb               %.0f\n", i / 1024
  printf "api.rss_peak_mb               %.0f   (8 clients x 8 files x 3 rounds of 25 MB from S3 in %.1f s: %.0f MB/s; bytes in flight 8 x 25 MB = 200 MB; target < 800 MB: %.2fx)\n", p / 1024, t, 8 * 8 * 3 * 25 / t, p / 1024 / 200
  if (p / 1024 >= 800) { print "FAILED: over 4 x the bytes in flight"; exit 1 } }'
