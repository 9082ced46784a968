#!/usr/bin/env bash
# The maintenance surface, in one run on this machine, next to the database's own figure:
#   1. GET /maintenance/work-orders?villaId=..&status=.. (wrk, 32 connections) over 200,000 work
#      orders (200 villas x 6 statuses), throughput and p99, next to pgbench at 32 connections
#      running the statement the route runs (bench/work_orders_list.pgbench: total and page as
#      JSON in one statement, values bound as parameters). Target: at least half of pgbench's
#      throughput, p99 under 20 ms.
#   2. The planned-maintenance generation job (worker-maintenance), one tick, its run time from the
#      job row, each followed by a second tick that must create nothing:
#      a. 10,000 fresh schedules due at once (MONTHLY, starting today). Target: under 10 s.
#      b. 10,000 schedules that have run for a year, as a year of ticks left them: DAILY, started
#         365 days ago, every occurrence up to yesterday's horizon with its work order (372 each)
#         and their cursor past it, so the tick has one new occurrence each (today + PM_LEAD_DAYS).
#         Target: the same order as a, since the work is what is due, not the schedules' age.
#      c. The worst case: 10,000 DAILY schedules started 365 days ago that were never generated
#         (cursor at their start): only PM_CATCH_UP_DAYS back to PM_LEAD_DAYS ahead get work orders
#         (39 each with the defaults), not the 372 occurrences since the start.
# Uses a scratch database and a private redis-server; leaves nothing behind.
#   Usage: bench/maintenance.sh            DURATION=15 ORDERS=200000 SCHEDULES=10000
set -euo pipefail
[ -n "${BENCH_DEBUG:-}" ] && set -x
cd "$(dirname "$0")/.."
source scripts/services.sh
ensure_postgres
command -v wrk >/dev/null || apt_install wrk
command -v pgbench >/dev/null || apt_install postgresql
command -v redis-server >/dev/null || apt_install redis-server

DURATION=${DURATION:-15}
ORDERS=${ORDERS:-200000}
SCHEDULES=${SCHEDULES:-10000}
echo "building release binaries..."
cargo build --release -p api -p workers --bins -q

work=$(mktemp -d)
db="villa_bench_$$"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
redis_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
pg_base=${PG_ADMIN_URL%/*}
export APP_ENV=development DEV_DIR="$work/dev" PORT=$port RUST_LOG=warn LOG_FORMAT=json \
  DATABASE_URL="$pg_base/$db" REDIS_URL="redis://127.0.0.1:$redis_port" \
  STORAGE_LOCAL_DIR="$work/storage" PM_GENERATE_INTERVAL_SECS=86400 BUSINESS_TIME_ZONE=UTC \
  PM_LEAD_DAYS=${PM_LEAD_DAYS:-7} PM_CATCH_UP_DAYS=${PM_CATCH_UP_DAYS:-31}
# The API's pool at 2 x cores, as bench/villas.sh explains.
export DB_MAX_CONNECTIONS=${DB_MAX_CONNECTIONS:-$((2 * $(nproc)))}
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
pids+=($!)
for _ in $(seq 1 150); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.2; done

echo "loading 200 villas and $ORDERS work orders..."
psql "$DATABASE_URL" -q <<SQL
INSERT INTO villas (id, villa_code, villa_name, bedrooms, bathrooms, max_guests, property_type, status)
SELECT ('00000000-0000-7000-8000-' || lpad(n::text, 12, '0'))::uuid, 'BM-' || lpad(n::text, 4, '0'),
       'Villa ' || n, 3, 2, 6, 'VILLA', 'APPROVED'
FROM generate_series(1, 200) n;
INSERT INTO work_orders (id, villa_id, title, category, priority, status, created_by, created_at)
SELECT gen_random_uuid(), ('00000000-0000-7000-8000-' || lpad((1 + i % 200)::text, 12, '0'))::uuid,
       'Job ' || i, (ARRAY['HVAC','ELECTRICAL','PLUMBING','POOL','GARDEN','GENERAL'])[1 + i % 6],
       (ARRAY['LOW','MEDIUM','HIGH','URGENT'])[1 + i % 4],
       (ARRAY['OPEN','ASSIGNED','IN_PROGRESS','ON_HOLD','COMPLETED','CANCELLED'])[1 + (i / 200) % 6],
       'bench', now() - i * interval '10 seconds'
FROM generate_series(1, $ORDERS) i;
VACUUM ANALYZE;
SQL
token=$(./target/release/villa-api mint-token --role viewer)
base="http://127.0.0.1:$port"
sample=$(curl -sf -H "Authorization: Bearer $token" \
  "$base/maintenance/work-orders?villaId=00000000-0000-7000-8000-000000000007&status=OPEN" \
  | python3 -c 'import json,sys; b=json.load(sys.stdin); print(b["pagination"]["total"], len(b["data"]))')
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB; PostgreSQL $(psql "$DATABASE_URL" -tAc 'SHOW server_version'); work orders: $(psql "$DATABASE_URL" -tAc 'SELECT count(*) FROM work_orders'); API pool: $DB_MAX_CONNECTIONS connections"
echo "one villa and status (total, page): $sample"

ms() { awk -v v="$1" 'BEGIN{ if (v ~ /us$/) {sub(/us$/,"",v); print v/1000} else if (v ~ /ms$/) {sub(/ms$/,"",v); print v+0} else if (v ~ /s$/) {sub(/s$/,"",v); print v*1000} else print v }'; }
cat >"$work/list.lua" <<'LUA'
local statuses = {"OPEN", "ASSIGNED", "IN_PROGRESS", "ON_HOLD", "COMPLETED", "CANCELLED"}
math.randomseed(os.time())
request = function()
  local villa = string.format("00000000-0000-7000-8000-%012d", math.random(200))
  return wrk.format("GET", "/maintenance/work-orders?villaId=" .. villa .. "&status=" .. statuses[math.random(6)])
end
LUA
args=(-t2 -c32 -H "Authorization: Bearer $token" -s "$work/list.lua")
wrk "${args[@]}" -d3s "$base" >/dev/null
wrk "${args[@]}" -d"${DURATION}s" --latency "$base" >"$work/wrk.txt"
rps=$(sed -n 's/^Requests\/sec:[[:space:]]*\([0-9.]*\)/\1/p' "$work/wrk.txt")
p50=$(ms "$(awk '$1=="50%"{print $2}' "$work/wrk.txt")")
p99=$(ms "$(awk '$1=="99%"{print $2}' "$work/wrk.txt")")
errors=$(grep -cE "Non-2xx|Socket errors" "$work/wrk.txt" || true)
tps=$(pgbench -n -M prepared -f bench/work_orders_list.pgbench -c 32 -j 2 -T "$DURATION" "$DATABASE_URL" 2>/dev/null | sed -n 's/^tps = \([0-9.]*\).*/\1/p')
echo
echo "== 1. GET /maintenance/work-orders?villaId=..&status=.. over $ORDERS work orders"
printf 'http.list_rps                 %.0f   p50 %.2f ms  p99 %.2f ms  (wrk, 32 connections; target p99 < 20 ms)%s\n' "$rps" "$p50" "$p99" "$( [ "$errors" != 0 ] && echo '  ERRORS in wrk output')"
printf 'pgbench.list_sql_tps          %.0f   (the statement the route runs: total + page, -M prepared -c 32)\n' "$tps"
printf 'ratio.list_http_vs_sql        %.2f   (target >= 0.5)\n' "$(awk -v a="$rps" -v b="$tps" 'BEGIN{print a/b}')"

echo
echo "== 2. planned-maintenance generation: one tick over $SCHEDULES schedules, fresh and a year old"
# The company's day of the worker (BUSINESS_TIME_ZONE=UTC above), not the database session's.
today=$(date -u +%F)
psql "$DATABASE_URL" -q <<SQL
INSERT INTO assets (id, villa_id, name, category)
SELECT ('00000000-0000-7000-9000-' || lpad(n::text, 12, '0'))::uuid,
       ('00000000-0000-7000-8000-' || lpad((1 + n % 200)::text, 12, '0'))::uuid, 'Pump ' || n, 'POOL'
FROM generate_series(1, $SCHEDULES) n;
INSERT INTO pm_schedules (id, template_id, asset_id, frequency, start_date, created_by, next_due)
SELECT gen_random_uuid(), '019a0000-0000-7000-8000-000000000001',
       ('00000000-0000-7000-9000-' || lpad(n::text, 12, '0'))::uuid, 'MONTHLY', '$today', 'bench', '$today'
FROM generate_series(1, $SCHEDULES) n;
ANALYZE;
SQL
./target/release/worker-maintenance >"$work/worker.log" 2>&1 &
pids+=($!)
run_generation() { # tick -> "seconds created status"
  local id
  id=$(psql "$DATABASE_URL" -qtAc "INSERT INTO jobs (id, kind, queue, payload, dedupe_key, max_attempts)
    VALUES (gen_random_uuid(), 'maintenance.generate_planned_work', 'maintenance', '{\"tick\": \"$1\"}', 'bench:$1', 5) RETURNING id")
  for _ in $(seq 1 1200); do
    status=$(psql "$DATABASE_URL" -tAc "SELECT status FROM jobs WHERE id = '$id'")
    [ "$status" = SUCCEEDED ] || [ "$status" = FAILED ] && break
    sleep 0.1
  done
  psql "$DATABASE_URL" -tAc "SELECT round(extract(epoch FROM finished_at - started_at)::numeric, 3), result->>'created', status FROM jobs WHERE id = '$id'" | tr '|' ' '
}
read -r first_s first_created first_status < <(run_generation first)
read -r second_s second_created second_status < <(run_generation second)
total=$(psql "$DATABASE_URL" -tAc "SELECT count(*) FROM work_orders WHERE schedule_id IS NOT NULL")

# b. The same assets, schedules that have run for a year: the fresh ones and their work orders go.
echo "loading $SCHEDULES DAILY schedules started 365 days ago with a year of work orders..."
seed_started=$(date +%s)
psql "$DATABASE_URL" -q <<SQL
DELETE FROM work_orders WHERE schedule_id IS NOT NULL;
DELETE FROM pm_schedules;
INSERT INTO pm_schedules (id, template_id, asset_id, frequency, start_date, created_by, created_at, next_due)
SELECT gen_random_uuid(), '019a0000-0000-7000-8000-000000000001',
       ('00000000-0000-7000-9000-' || lpad(n::text, 12, '0'))::uuid, 'DAILY', '$today'::date - 365, 'bench-year',
       now() - interval '365 days', '$today'::date + $PM_LEAD_DAYS
FROM generate_series(1, $SCHEDULES) n;
-- What a year of ticks left: every occurrence up to yesterday's horizon, completed before today.
INSERT INTO work_orders (id, villa_id, asset_id, title, category, priority, status, due_date, completed_at,
                         schedule_id, occurrence_date, created_by, created_at, updated_at)
SELECT uuid_v7(), a.villa_id, a.id, 'Pool pump service', 'POOL', 'MEDIUM',
       CASE WHEN o.d < '$today'::date THEN 'COMPLETED' ELSE 'OPEN' END, o.d::timestamptz,
       CASE WHEN o.d < '$today'::date THEN o.d + interval '10 hours' END,
       s.id, o.d, 'planned-maintenance', o.d - $PM_LEAD_DAYS * interval '1 day', o.d::timestamptz
FROM pm_schedules s JOIN assets a ON a.id = s.asset_id,
     LATERAL (SELECT g::date AS d FROM generate_series(s.start_date::timestamp,
              ('$today'::date + $PM_LEAD_DAYS - 1)::timestamp, interval '1 day') g) o;
VACUUM ANALYZE;
SQL
seed_s=$(( $(date +%s) - seed_started ))
year_orders=$(psql "$DATABASE_URL" -tAc "SELECT count(*) FROM work_orders WHERE schedule_id IS NOT NULL")
read -r year_s year_created year_status < <(run_generation year-old)
read -r year2_s year2_created year2_status < <(run_generation year-old-second)

# c. The worst case beside them: as many schedules a year old that were never generated.
psql "$DATABASE_URL" -q <<SQL
INSERT INTO pm_schedules (id, template_id, asset_id, frequency, start_date, created_by, created_at, next_due)
SELECT gen_random_uuid(), '019a0000-0000-7000-8000-000000000001',
       ('00000000-0000-7000-9000-' || lpad(n::text, 12, '0'))::uuid, 'DAILY', '$today'::date - 365, 'bench-stale',
       now() - interval '365 days', '$today'::date - 365
FROM generate_series(1, $SCHEDULES) n;
ANALYZE;
SQL
read -r stale_s stale_created stale_status < <(run_generation stale)
read -r stale2_s stale2_created stale2_status < <(run_generation stale-second)
window_days=$((PM_CATCH_UP_DAYS + PM_LEAD_DAYS + 1))

printf 'job.generation_first_s        %s   created %s (%s; %s fresh MONTHLY schedules starting today; target < 10 s)\n' "$first_s" "$first_created" "$first_status" "$SCHEDULES"
printf 'job.generation_second_s       %s   created %s (%s; target: 0 created)\n' "$second_s" "$second_created" "$second_status"
printf 'work_orders_from_schedules    %s   (one per schedule and occurrence)\n' "$total"
printf 'job.generation_year_old_s     %s   created %s (%s; %s DAILY schedules started 365 days ago, up to date: %s work orders, seeded in %s s; target: %s created, same order as the fresh tick)\n' "$year_s" "$year_created" "$year_status" "$SCHEDULES" "$year_orders" "$seed_s" "$SCHEDULES"
printf 'job.generation_year_old_2_s   %s   created %s (%s; target: 0 created)\n' "$year2_s" "$year2_created" "$year2_status"
printf 'job.generation_stale_s        %s   created %s (%s; worst case: %s DAILY schedules started 365 days ago, never generated; target: %s created, %s days each, PM_CATCH_UP_DAYS=%s)\n' "$stale_s" "$stale_created" "$stale_status" "$SCHEDULES" "$((SCHEDULES * window_days))" "$window_days" "$PM_CATCH_UP_DAYS"
printf 'job.generation_stale_2_s      %s   created %s (%s; target: 0 created)\n' "$stale2_s" "$stale2_created" "$stale2_status"
