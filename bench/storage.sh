#!/usr/bin/env bash
# The document store's backends (issue 19), in one run on this machine:
#   1. 200 x 1 MB documents uploaded through POST /api/documents/upload (20 clients), until every
#      one is in the store, with 2 worker-documents processes: on the local backend, then on an
#      S3-compatible server on loopback (moto's, as the tests use), each over its own database.
#      Beside them, the database's own figure: the same 1 MB rows inserted straight into Postgres
#      (upload-bench accept prints it).
#   2. The API's peak resident memory (VmHWM) while serving 25 MB files from S3 to 8 concurrent
#      clients (8 files, each client reading them all 3 times), and its growth over the idle
#      figure; target: a growth under 4 x the bytes in flight (8 x 25 MB). Beside it, the RSS an
#      API holding each file whole would reach (idle + the bytes in flight), and the share of the
#      bytes in flight the growth amounts to: gated under 100% too, since an API holding each file
#      whole grows by about the bytes in flight and would pass the 4 x target.
# Uses scratch databases, a private redis-server, a temporary local store and an S3 bucket on a
# private moto server; leaves nothing behind.
#   Usage: bench/storage.sh
set -euo pipefail
[ -n "${BENCH_DEBUG:-}" ] && set -x
cd "$(dirname "$0")/.."
source scripts/services.sh
source scripts/python-tools.sh
ensure_postgres
# The bench runs a redis-server of its own; this makes sure there is one to run.
ensure_redis
ensure_python_venv
# moto, as scripts/test gets it: when this machine's python3 lacks it, from a virtual environment
# of its own, first on PATH.
if ! python3 -c 'import moto.server' >/dev/null 2>&1; then
  venv=$(python_venv "${MOTO_VENV:-$PYTHON_VENVS/villa-moto-venv}" 'moto[server]>=5.1,<6')
  export PATH="$venv/bin:$PATH"
fi
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
# Unlike the tests' (tests/src/s3_server.rs), this moto checks no signatures: the bench measures
# the store's throughput and the API's memory, not its signing, and plain curl can then create the
# bucket and list it. The credentials below are signed with and ignored.
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
# Judged on the growth over idle: the idle RSS is no part of what serving the files costs.
awk -v i="$idle_kb" -v p="$peak_kb" -v t="$took" 'BEGIN {
  flight = 8 * 25
  idle = i / 1024; peak = p / 1024; growth = peak - idle
  printf "api.rss_idle_mb               %.0f\n", idle
  printf "api.rss_peak_mb               %.0f   (8 clients x 8 files x 3 rounds of 25 MB from S3 in %.1f s: %.0f MB/s)\n", peak, t, 8 * 8 * 3 * 25 / t
  printf "api.rss_if_buffered_mb        %.0f   (idle + the bytes in flight, 8 x 25 MB = %d MB: the least an API holding each file whole reaches)\n", idle + flight, flight
  printf "api.rss_growth_mb             %.0f   (peak - idle: %.0f MB of the %d MB in flight, %.0f%%; target < 4 x = %d MB: %.2fx)\n", growth, growth, flight, 100 * growth / flight, 4 * flight, growth / flight
  if (growth >= 4 * flight) { print "FAILED: the growth is over 4 x the bytes in flight"; exit 1 }
  # The 4 x target alone would pass an API that holds each file whole (about 1 x): streaming
  # is what keeps the growth under the bytes in flight, so that is gated too.
  if (growth >= flight) { print "FAILED: the growth reaches the bytes in flight, as if files were held whole"; exit 1 } }'
