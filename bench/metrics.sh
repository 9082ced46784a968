#!/usr/bin/env bash
# What the Prometheus metrics cost, in one run on this machine:
#   1. The authenticated read path, GET /management/villas/{id} over 10,000 random ids with a
#      bearer token (wrk -t2 -c32), with METRICS_ENABLED=true and with METRICS_ENABLED=false over
#      the same data. The API is started afresh for each run, on and off alternating, ROUNDS (3)
#      times each; the median of each side is compared. While metrics are on, /metrics is
#      scraped every SCRAPE_EVERY (5) seconds, as Prometheus would. Target: on at most 3% below
#      off.
#   2. One scrape of the API's GET /metrics with 1,000,000 finished job rows (SUCCEEDED, 2%
#      FAILED) and 10,000 QUEUED ones: after a first scrape that warms up, 20 scrapes with curl,
#      each more than METRICS_QUEUE_REFRESH_SECS=1 after the last so that each reads the job
#      table again; median and max. Target: under 50 ms (the median gates, the max is shown).
#      Beside it, Postgres' own time for the gauges' statement (EXPLAIN ANALYZE, median of 5):
#      the SQL of domain::job_store::queue_gauges, read from that file between its
#      `queue-gauges-sql-begin` and `queue-gauges-sql-end` markers when the bench runs.
# Uses a scratch database and a private redis-server; leaves nothing behind. Exits non-zero when
# a target is missed.
#   Usage: bench/metrics.sh            DURATION=15 ROUNDS=3 SCRAPE_EVERY=5 VILLAS=10000
set -euo pipefail
[ -n "${BENCH_DEBUG:-}" ] && set -x
cd "$(dirname "$0")/.."
source scripts/services.sh
ensure_postgres
command -v wrk >/dev/null || apt_install wrk
command -v redis-server >/dev/null || apt_install redis-server

DURATION=${DURATION:-15}
ROUNDS=${ROUNDS:-3}
SCRAPE_EVERY=${SCRAPE_EVERY:-5}
VILLAS=${VILLAS:-10000}
FINISHED_JOBS=1000000
QUEUED_JOBS=10000
SCRAPES=20
echo "building release binaries..."
cargo build --release -p api --bins -q

# The gauges' statement, as the API runs it (fails here, not halfway, if the markers moved).
gauge_sql=$(python3 - <<'PY'
import re, sys
src = open("domain/src/job_store.rs").read()
try:
    block = src.split("queue-gauges-sql-begin", 1)[1].split("queue-gauges-sql-end", 1)[0]
except IndexError:
    sys.exit("domain/src/job_store.rs: the queue-gauges-sql markers are gone")
m = re.search(r'"(.*)"', block, re.S)
if not m:
    sys.exit("domain/src/job_store.rs: no SQL string between the queue-gauges-sql markers")
print(m.group(1).replace('\\"', '"'))
PY
)

work=$(mktemp -d)
db="villa_metrics_bench_$$"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port=$(free_port)
redis_port=$(free_port)
pg_base=${PG_ADMIN_URL%/*}
base="http://127.0.0.1:$port"
export APP_ENV=development DEV_DIR="$work/dev" PORT=$port RUST_LOG=warn LOG_FORMAT=json \
  DATABASE_URL="$pg_base/$db" REDIS_URL="redis://127.0.0.1:$redis_port" \
  STORAGE_LOCAL_DIR="$work/storage" METRICS_TOKEN="bench-metrics-token-$$-0123456789" \
  METRICS_QUEUE_REFRESH_SECS=1
export DB_MAX_CONNECTIONS=${DB_MAX_CONNECTIONS:-$((2 * $(nproc)))}
pids=()
api_pid=
scraper_pid=
cleanup() {
  for pid in $scraper_pid $api_pid "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  psql "$PG_ADMIN_URL" -qc "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

start_api() { # METRICS_ENABLED
  METRICS_ENABLED=$1 ./target/release/villa-api >>"$work/api.log" 2>&1 &
  api_pid=$!
  wait_for "villa-api" curl -sf "$base/healthz"
}
stop_api() {
  kill -TERM "$api_pid" 2>/dev/null || true
  wait "$api_pid" 2>/dev/null || true
  api_pid=
}
scrape() { # curl -w format
  curl -s -o "$work/metrics.txt" -w "$1" -H "Authorization: Bearer $METRICS_TOKEN" "$base/metrics"
}
median() { sort -n | awk '{a[NR]=$1} END{ if (NR == 0) print "nan"; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2] + a[NR/2+1]) / 2 }'; }

psql "$PG_ADMIN_URL" -qc "CREATE DATABASE \"$db\""
redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no >"$work/redis.log" 2>&1 &
pids+=($!)
start_api true # applies the migrations
echo "loading $VILLAS villas..."
psql "$DATABASE_URL" -q <<SQL
INSERT INTO villas (id, villa_code, villa_name, city, country, bedrooms, bathrooms, max_guests,
                    property_type, villa_style, status, is_active, created_at)
SELECT gen_random_uuid(), 'MV-' || lpad(i::text, 6, '0'),
       'Villa ' || (ARRAY['Sunset','Azure','Coral','Lotus','Bamboo','Jasmine','Teak','Orchid'])[1 + i % 8] || ' ' || i,
       (ARRAY['Ubud','Canggu','Phuket','Koh Samui','Hoi An','Penang'])[1 + i % 6],
       (ARRAY['Indonesia','Thailand','Vietnam','Malaysia'])[1 + i % 4],
       1 + i % 8, 1 + i % 6, 2 + i % 14, 'VILLA', 'MODERN', 'APPROVED', true,
       now() - i * interval '1 minute'
FROM generate_series(1, $VILLAS) i;
VACUUM ANALYZE villas;
SQL
psql "$DATABASE_URL" -tAc "SELECT id FROM villas ORDER BY random() LIMIT 10000" >"$work/ids.txt"
token=$(./target/release/villa-api mint-token --role viewer)
stop_api
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB; PostgreSQL $(psql "$DATABASE_URL" -tAc 'SHOW server_version'); API pool: $DB_MAX_CONNECTIONS connections"

cat >"$work/ids.lua" <<LUA
local ids = {}
for line in io.lines("$work/ids.txt") do if #line > 0 then ids[#ids + 1] = line end end
math.randomseed(os.time())
request = function()
  return wrk.format("GET", "/management/villas/" .. ids[math.random(#ids)])
end
LUA

status=0
: >"$work/scrapes-during-wrk.txt"
echo
echo "== 1. GET /management/villas/{id}, metrics on and off ($ROUNDS rounds of ${DURATION}s each, alternating)"
run_once() { # METRICS_ENABLED -> rps (appended to $work/rps-<mode>.txt)
  local mode=$1
  start_api "$mode"
  local args=(-t2 -c32 -H "Authorization: Bearer $token" -s "$work/ids.lua")
  wrk "${args[@]}" -d3s "$base" >/dev/null # warm-up
  if [ "$mode" = true ]; then
    (while :; do scrape '%{http_code}\n' >>"$work/scrapes-during-wrk.txt" || true; sleep "$SCRAPE_EVERY"; done) &
    scraper_pid=$!
  fi
  wrk "${args[@]}" -d"${DURATION}s" "$base" >"$work/wrk.txt"
  if [ -n "$scraper_pid" ]; then
    kill -TERM "$scraper_pid" 2>/dev/null || true
    wait "$scraper_pid" 2>/dev/null || true
    scraper_pid=
  fi
  stop_api
  if grep -qE "Non-2xx|Socket errors" "$work/wrk.txt"; then
    echo "  errors in wrk's output (metrics $mode):" >&2
    cat "$work/wrk.txt" >&2
    status=1
  fi
  local rps
  rps=$(sed -n 's/^Requests\/sec:[[:space:]]*\([0-9.]*\)/\1/p' "$work/wrk.txt")
  echo "$rps" >>"$work/rps-$mode.txt"
  printf '  round %d  metrics %-5s  %8.0f requests/s\n' "$round" "$mode" "$rps"
}
for round in $(seq 1 "$ROUNDS"); do
  # Each round swaps which side goes first, so that a drift of the machine favours neither.
  if [ $((round % 2)) = 1 ]; then order="true false"; else order="false true"; fi
  for mode in $order; do run_once "$mode"; done
done
on=$(median <"$work/rps-true.txt")
off=$(median <"$work/rps-false.txt")
diff=$(awk -v on="$on" -v off="$off" 'BEGIN{ printf "%.2f", (off - on) / off * 100 }')
scrapes_ok=$(grep -c '^200$' "$work/scrapes-during-wrk.txt" || true)
scrapes_all=$(wc -l <"$work/scrapes-during-wrk.txt")
verdict=PASS
awk -v d="$diff" 'BEGIN{ exit !(d <= 3) }' || verdict=FAIL
[ "$scrapes_ok" = "$scrapes_all" ] || { verdict=FAIL; echo "  scrapes during wrk: $scrapes_ok of $scrapes_all answered 200" >&2; }
[ "$verdict" = PASS ] || status=1
printf 'http.get_villa_rps.metrics_on    %.0f   (median of %d; %d scrapes of /metrics meanwhile)\n' "$on" "$ROUNDS" "$scrapes_all"
printf 'http.get_villa_rps.metrics_off   %.0f   (median of %d)\n' "$off" "$ROUNDS"
printf 'http.metrics_cost_percent        %s   (off minus on, of off; target <= 3)  %s\n' "$diff" "$verdict"

echo
echo "== 2. one scrape of GET /metrics with $FINISHED_JOBS finished and $QUEUED_JOBS queued job rows"
echo "loading job rows..."
psql "$DATABASE_URL" -q <<SQL
INSERT INTO jobs (id, kind, queue, payload, status, attempts, max_attempts, result, error,
                  run_at, pushed_at, created_at, started_at, finished_at, updated_at, request_id)
SELECT gen_random_uuid(), 'system.diagnostic',
       (ARRAY['system','documents','media','maintenance','alerts','pms','exports'])[1 + i % 7],
       '{"sleepMs": 0}'::jsonb,
       CASE WHEN i % 50 = 0 THEN 'FAILED' ELSE 'SUCCEEDED' END,
       CASE WHEN i % 50 = 0 THEN 3 ELSE 1 END, 3,
       CASE WHEN i % 50 = 0 THEN NULL ELSE '{"attempt": 1}'::jsonb END,
       CASE WHEN i % 50 = 0 THEN 'diagnostic failure requested' END,
       now() - i * interval '2 seconds', now() - i * interval '2 seconds',
       now() - i * interval '2 seconds', now() - i * interval '2 seconds',
       now() - i * interval '2 seconds' + interval '1 second',
       now() - i * interval '2 seconds' + interval '1 second', 'bench-' || i
FROM generate_series(1, $FINISHED_JOBS) i;
INSERT INTO jobs (id, kind, queue, payload, max_attempts, run_at, pushed_at, created_at, request_id)
SELECT gen_random_uuid(), 'system.diagnostic',
       (ARRAY['system','documents','media','maintenance','alerts','pms','exports'])[1 + i % 7],
       '{"sleepMs": 0}'::jsonb, 3,
       now() - (i % 600) * interval '1 second', now(), now() - (i % 600) * interval '1 second',
       'bench-q-' || i
FROM generate_series(1, $QUEUED_JOBS) i;
VACUUM ANALYZE jobs;
SQL
echo "jobs: $(psql "$DATABASE_URL" -tAc "SELECT string_agg(status || ' ' || n, ', ' ORDER BY status) FROM (SELECT status, count(*) n FROM jobs GROUP BY status) s")"
start_api true
# A registry like a long-running API's: every documented route answered a few times, with and
# without a token (ids that match nothing: 404s, 401s and 403s are series too), so that the
# scrape renders every route template's counters and histogram buckets, not a fresh process's few.
python3 - "$base" "$token" <<'PY'
import json, sys, urllib.request, urllib.error
base, token = sys.argv[1], sys.argv[2]
doc = json.load(urllib.request.urlopen(base + "/openapi.json"))
uuid = "00000000-0000-7000-8000-000000000000"
sent = 0
for path, ops in doc["paths"].items():
    concrete = "/".join(uuid if part.startswith("{") else part for part in path.split("/"))
    for method in ops:
        if method not in ("get", "post", "put", "patch", "delete"):
            continue
        for auth in (None, token):
            req = urllib.request.Request(base + concrete, method=method.upper(),
                                         data=b"{}" if method in ("post", "put", "patch") else None)
            req.add_header("Content-Type", "application/json")
            if auth:
                req.add_header("Authorization", "Bearer " + auth)
            try:
                urllib.request.urlopen(req, timeout=10).read()
            except urllib.error.HTTPError:
                pass
            except Exception:
                pass
            sent += 1
print(f"warm-up: {sent} requests over every documented route")
PY
code=$(scrape '%{http_code}')
[ "$code" = 200 ] || { echo "GET /metrics answered $code" >&2; cat "$work/metrics.txt" >&2; exit 1; }
# The gauges must show the table: all the queued rows and the failed ones.
shown_queued=$(awk '/^villa_queue_jobs\{/ && /status="queued"/ {s += $NF} END{print s + 0}' "$work/metrics.txt")
shown_failed=$(awk '/^villa_queue_jobs\{/ && /status="failed"/ {s += $NF} END{print s + 0}' "$work/metrics.txt")
expected_failed=$(psql "$DATABASE_URL" -tAc "SELECT count(*) FROM jobs WHERE status = 'FAILED'")
if [ "$shown_queued" != "$QUEUED_JOBS" ] || [ "$shown_failed" != "$expected_failed" ]; then
  echo "the gauges show $shown_queued queued and $shown_failed failed; the table holds $QUEUED_JOBS and $expected_failed" >&2
  status=1
fi
: >"$work/scrape-ms.txt"
for _ in $(seq 1 "$SCRAPES"); do
  sleep 1.2 # past METRICS_QUEUE_REFRESH_SECS=1: this scrape reads the job table again
  read -r code secs bytes < <(scrape '%{http_code} %{time_total} %{size_download}\n')
  [ "$code" = 200 ] || { echo "GET /metrics answered $code" >&2; status=1; }
  awk -v s="$secs" 'BEGIN{ printf "%.3f\n", s * 1000 }' >>"$work/scrape-ms.txt"
done
stop_api
scrape_median=$(median <"$work/scrape-ms.txt")
scrape_max=$(sort -n "$work/scrape-ms.txt" | tail -n 1)
: >"$work/explain-ms.txt"
for _ in 1 2 3 4 5; do
  psql -X "$DATABASE_URL" -tAc "EXPLAIN (ANALYZE, BUFFERS) $gauge_sql" >"$work/plan.txt"
  sed -n 's/^Execution Time: \([0-9.]*\) ms$/\1/p' "$work/plan.txt" >>"$work/explain-ms.txt"
done
pg_median=$(median <"$work/explain-ms.txt")
scans=$(grep -oE '(Index Only Scan|Index Scan|Bitmap Index Scan|Seq Scan) (using|on) [a-z_]+' "$work/plan.txt" | sort -u | paste -sd ';' -)
verdict=PASS
awk -v m="$scrape_median" 'BEGIN{ exit !(m < 50) }' || { verdict=FAIL; status=1; }
max_ok=$(awk -v m="$scrape_max" 'BEGIN{ print (m < 50) ? "yes" : "no" }')
printf 'metrics.scrape_samples           %d   (sample lines in one answer, after the warm-up over every route)\n' \
  "$(grep -vc '^#' "$work/metrics.txt")"
printf 'metrics.scrape_ms                median %.2f  max %.2f   (%d scrapes, %s bytes each, each re-reading the job table; target < 50; max under it: %s)  %s\n' \
  "$scrape_median" "$scrape_max" "$SCRAPES" "$bytes" "$max_ok" "$verdict"
printf 'pg.queue_gauges_ms               median %.2f   (EXPLAIN ANALYZE of job_store::queue_gauges, 5 runs; %s)\n' "$pg_median" "$scans"
exit "$status"
