#!/usr/bin/env bash
# The inventory surface, in one run on this machine, next to the database's own figure:
#   1. POST /inventory/movements (wrk, 32 connections) spread over 1,000 items: movements per
#      second, next to pgbench at 32 connections running the same transaction
#      (bench/inventory_movement.pgbench: the ledger statement and the alert evaluation's
#      enqueue). Target: at least half of pgbench's throughput.
#   2. The same with all 32 connections on one item: its figure, and that it is correct.
#   Both runs are checked against what wrk received (it counts the statuses): every movement
#   answered 201 is in the ledger, every movement in the ledger was answered 201 or was still
#   unanswered when wrk stopped, the quantity went down by exactly the movements recorded, and
#   every item's quantity is the sum of its movements. Any difference makes the bench exit 1.
#   3. A full stock alert evaluation (worker-alerts, the scheduler's job) over 100,000 items:
#      its run time from the job row, then a second run with nothing changed. Target: under 5 s.
# Uses a scratch database and a private redis-server; leaves nothing behind.
#   Usage: bench/inventory.sh            DURATION=15 ITEMS=1000 ALERT_ITEMS=100000
set -euo pipefail
[ -n "${BENCH_DEBUG:-}" ] && set -x
cd "$(dirname "$0")/.."
source scripts/services.sh
ensure_postgres
command -v wrk >/dev/null || apt_install wrk
command -v pgbench >/dev/null || apt_install postgresql
command -v redis-server >/dev/null || apt_install redis-server

DURATION=${DURATION:-15}
ITEMS=${ITEMS:-1000}
ALERT_ITEMS=${ALERT_ITEMS:-100000}
echo "building release binaries..."
cargo build --release -p api -p workers --bins -q

work=$(mktemp -d)
db="villa_bench_$$"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
redis_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
pg_base=${PG_ADMIN_URL%/*}
export APP_ENV=development DEV_DIR="$work/dev" PORT=$port RUST_LOG=warn LOG_FORMAT=json \
  DATABASE_URL="$pg_base/$db" REDIS_URL="redis://127.0.0.1:$redis_port" \
  STORAGE_LOCAL_DIR="$work/storage" ALERT_EVALUATION_INTERVAL_SECS=86400 PM_GENERATE_INTERVAL_SECS=86400
# The API's pool at the platform's default (20), not at 2 x cores as the read benchmarks set it:
# a movement waits for its commit's WAL flush, and a pool sized to the cores leaves the disk idle
# between flushes (measured here: 4 connections 2,010/s, 8 2,380/s, 16 2,570/s).
export DB_MAX_CONNECTIONS=${DB_MAX_CONNECTIONS:-20}
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

echo "loading $ITEMS items with ample stock..."
psql "$DATABASE_URL" -q <<SQL
INSERT INTO villas (id, villa_code, villa_name, bedrooms, bathrooms, max_guests, property_type, status)
SELECT ('00000000-0000-7000-8000-' || lpad(n::text, 12, '0'))::uuid, 'BI-' || lpad(n::text, 4, '0'),
       'Villa ' || n, 3, 2, 6, 'VILLA', 'APPROVED'
FROM generate_series(1, 20) n;
INSERT INTO inventory_locations (id, property_id, name, type)
SELECT ('00000000-0000-7000-9000-' || lpad(n::text, 12, '0'))::uuid,
       ('00000000-0000-7000-8000-' || lpad(n::text, 12, '0'))::uuid, 'Store', 'STORAGE'
FROM generate_series(1, 20) n;
INSERT INTO inventory_items (id, property_id, location_id, name, sku, category, unit, quantity, unit_cost)
SELECT ('00000000-0000-7000-a000-' || lpad(n::text, 12, '0'))::uuid,
       ('00000000-0000-7000-8000-' || lpad((1 + n % 20)::text, 12, '0'))::uuid,
       ('00000000-0000-7000-9000-' || lpad((1 + n % 20)::text, 12, '0'))::uuid,
       'Item ' || n, 'SKU-' || n, 'LINENS', 'EACH', 1000000000, 10
FROM generate_series(1, $ITEMS) n;
INSERT INTO inventory_movements (id, item_id, type, change, balance_after, unit_cost, created_by)
SELECT uuid_v7(), id, 'INITIAL', quantity, quantity, unit_cost, 'bench' FROM inventory_items;
VACUUM ANALYZE;
SQL
token=$(./target/release/villa-api mint-token --role staff)
base="http://127.0.0.1:$port"
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB; PostgreSQL $(psql "$DATABASE_URL" -tAc 'SHOW server_version'); API pool: $DB_MAX_CONNECTIONS connections"

ms() { awk -v v="$1" 'BEGIN{ if (v ~ /us$/) {sub(/us$/,"",v); print v/1000} else if (v ~ /ms$/) {sub(/ms$/,"",v); print v+0} else if (v ~ /s$/) {sub(/s$/,"",v); print v*1000} else print v }'; }
# wrk posts a withdrawal of 1 from item 1..ITEMS (ITEMS=1: all on one item) and counts what it
# sent and each status it received (each thread in a Lua state of its own, added up in done()),
# so that every run is checked against the ledger below.
cat >"$work/move.lua" <<'LUA'
local items = tonumber(os.getenv("WRK_ITEMS"))
math.randomseed(os.time())
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
sent, created, refused, other = 0, 0, 0, 0
local threads = {}
function setup(thread)
  table.insert(threads, thread)
end
request = function()
  sent = sent + 1
  local id = string.format("00000000-0000-7000-a000-%012d", math.random(items))
  return wrk.format(nil, "/inventory/movements", nil, '{"itemId":"' .. id .. '","type":"USE","quantity":1}')
end
response = function(status, headers, body)
  if status == 201 then
    created = created + 1
  elseif status == 409 then
    refused = refused + 1
  else
    other = other + 1
  end
end
done = function(summary, latency, requests)
  local s, c, r, o = 0, 0, 0, 0
  for _, t in ipairs(threads) do
    s = s + t:get("sent")
    c = c + t:get("created")
    r = r + t:get("refused")
    o = o + t:get("other")
  end
  io.write(string.format("statuses: sent %d created %d refused %d other %d\n", s, c, r, o))
end
LUA
run_wrk() { # items seconds -> wrk output file
  WRK_ITEMS=$1 wrk -t2 -c32 -H "Authorization: Bearer $token" -s "$work/move.lua" -d"$2s" --latency "$base" >"$work/wrk.txt" 2>&1 || true
}
# A count done() printed: sent, created (201), refused (409), other.
counted() { awk -v k="$1" '$1 == "statuses:" { for (i = 2; i < NF; i += 2) if ($i == k) print $(i + 1) }' "$work/wrk.txt"; }
rps() { sed -n 's/^Requests\/sec:[[:space:]]*\([0-9.]*\)/\1/p' "$work/wrk.txt"; }
p99() { ms "$(awk '$1=="99%"{print $2}' "$work/wrk.txt")"; }
ledger_check() {
  psql "$DATABASE_URL" -tAc "SELECT count(*) FROM inventory_items i
    WHERE i.quantity <> coalesce((SELECT sum(change) FROM inventory_movements m WHERE m.item_id = i.id), 0)"
}
# "movements quantity" of the bench's items 1..n: how many movements they have, their summed quantity.
ledger_state() {
  psql "$DATABASE_URL" -tA -F ' ' -c "WITH x AS (SELECT array_agg(('00000000-0000-7000-a000-' || lpad(n::text, 12, '0'))::uuid) AS ids
      FROM generate_series(1, $1) n)
    SELECT (SELECT count(*) FROM inventory_movements WHERE item_id = ANY (x.ids)),
           (SELECT sum(quantity) FROM inventory_items WHERE id = ANY (x.ids)) FROM x"
}
failed=0
# One wrk run against the ledger, not the database against itself: every movement answered 201 is
# recorded (none lost); every movement recorded was answered 201 or was still unanswered when wrk
# stopped (none written for a request answered 409 or an error); and the items' quantity went
# down by exactly the movements recorded (each a withdrawal of 1). Any difference fails the bench.
check_run() { # label items movements_before quantity_before
  local label=$1 moves_after quantity_after recorded drop sent created refused other unanswered verdict=ok
  sleep 1 # answers still in flight when wrk stopped
  read -r moves_after quantity_after < <(ledger_state "$2")
  recorded=$((moves_after - $3))
  drop=$(awk -v a="$4" -v b="$quantity_after" 'BEGIN{print a-b}')
  sent=$(counted sent); created=$(counted created); refused=$(counted refused); other=$(counted other)
  if [ -z "$sent" ] || [ -z "$created" ]; then
    verdict="FAILED: wrk printed no status counts (see its output below)"
    cat "$work/wrk.txt"
  else
    unanswered=$((sent - created - refused - other))
    if [ "$recorded" -lt "$created" ]; then
      verdict="FAILED: $((created - recorded)) movements answered 201 are not in the ledger"
    elif [ "$recorded" -gt $((created + unanswered)) ]; then
      verdict="FAILED: $((recorded - created - unanswered)) movements recorded without a 201"
    elif [ "$drop" != "$recorded" ]; then
      verdict="FAILED: the quantity went down by $drop for $recorded movements of 1"
    fi
    printf '%-29s %s   409 %s, other %s, unanswered when wrk stopped %s (of %s sent)\n' "$label.answered_201" "$created" "$refused" "$other" "$unanswered" "$sent"
  fi
  printf '%-29s %s   quantity drop %s: %s\n' "$label.movements_recorded" "$recorded" "$drop" "$verdict"
  [ "$verdict" = ok ] || failed=1
}

run_wrk "$ITEMS" 3
read -r spread_moves spread_quantity < <(ledger_state "$ITEMS")
run_wrk "$ITEMS" "$DURATION"
spread_rps=$(rps); spread_p99=$(p99)
echo
echo "== 1. POST /inventory/movements over $ITEMS items"
check_run spread "$ITEMS" "$spread_moves" "$spread_quantity"
tps=$(pgbench -n -M prepared -f bench/inventory_movement.pgbench -D items="$ITEMS" -c 32 -j 2 -T "$DURATION" "$DATABASE_URL" 2>/dev/null | sed -n 's/^tps = \([0-9.]*\).*/\1/p')
printf 'http.movements_per_s          %.0f   p99 %.2f ms  (wrk, 32 connections, counting statuses)\n' "$spread_rps" "$spread_p99"
printf 'pgbench.movement_tps          %.0f   (the same transaction, -M prepared -c 32)\n' "$tps"
printf 'ratio.movements_http_vs_sql   %.2f   (target >= 0.5)\n' "$(awk -v a="$spread_rps" -v b="$tps" 'BEGIN{print a/b}')"

read -r one_moves one_quantity < <(ledger_state 1)
run_wrk 1 "$DURATION"
echo
echo "== 2. POST /inventory/movements, all 32 connections on one item"
printf 'http.one_item_movements_per_s %.0f   p99 %.2f ms\n' "$(rps)" "$(p99)"
check_run one_item 1 "$one_moves" "$one_quantity"
one_tps=$(pgbench -n -M prepared -f bench/inventory_movement.pgbench -D items=1 -c 32 -j 2 -T "$DURATION" "$DATABASE_URL" 2>/dev/null | sed -n 's/^tps = \([0-9.]*\).*/\1/p')
printf 'pgbench.one_item_tps          %.0f   (the same transaction on one item: every movement waits for the one before)\n' "$one_tps"
items_off=$(ledger_check)
printf 'ledger.items_off              %s   (items whose quantity is not the sum of their movements: must be 0)\n' "$items_off"
[ "$items_off" = 0 ] || failed=1

echo
echo "== 3. full stock alert evaluation over $ALERT_ITEMS items"
psql "$DATABASE_URL" -q <<SQL
-- A storeroom's usual mix: 10% at or below their minimum (a fifth of those empty), 5% in poor or
-- damaged condition, 5% expiring within 30 days (a fifth of those expired), the rest fine.
INSERT INTO inventory_items (id, property_id, location_id, name, sku, category, unit, quantity, min_stock, condition, expiry_date)
SELECT gen_random_uuid(), ('00000000-0000-7000-8000-' || lpad((1 + n % 20)::text, 12, '0'))::uuid,
       ('00000000-0000-7000-9000-' || lpad((1 + n % 20)::text, 12, '0'))::uuid,
       'Stock ' || n, 'ALERT-' || n, 'TOILETRIES', 'EACH',
       CASE WHEN n % 50 = 0 THEN 0 WHEN n % 10 = 0 THEN 3 ELSE 50 END, 5,
       CASE WHEN n % 20 = 1 THEN 'DAMAGED' ELSE 'GOOD' END,
       CASE WHEN n % 100 = 2 THEN current_date - 1 WHEN n % 20 = 2 THEN current_date + 10 ELSE current_date + 400 END
FROM generate_series(1, $ALERT_ITEMS) n;
DELETE FROM jobs;
VACUUM ANALYZE;
SQL
./target/release/worker-alerts >"$work/worker.log" 2>&1 &
pids+=($!)
run_evaluation() { # tick -> "seconds opened resolved status"
  local id
  id=$(psql "$DATABASE_URL" -qtAc "INSERT INTO jobs (id, kind, queue, payload, dedupe_key, max_attempts)
    VALUES (gen_random_uuid(), 'alerts.evaluate_stock', 'alerts', '{\"tick\": \"$1\"}', 'bench:$1', 5) RETURNING id")
  for _ in $(seq 1 600); do
    status=$(psql "$DATABASE_URL" -tAc "SELECT status FROM jobs WHERE id = '$id'")
    [ "$status" = SUCCEEDED ] || [ "$status" = FAILED ] && break
    sleep 0.1
  done
  psql "$DATABASE_URL" -tAc "SELECT round(extract(epoch FROM finished_at - started_at)::numeric, 3), result->>'opened', result->>'resolved', status FROM jobs WHERE id = '$id'" | tr '|' ' '
}
read -r first_s first_opened first_resolved first_status < <(run_evaluation first)
read -r second_s second_opened second_resolved second_status < <(run_evaluation second)
items_total=$(psql "$DATABASE_URL" -tAc "SELECT count(*) FROM inventory_items WHERE archived_at IS NULL")
open=$(psql "$DATABASE_URL" -tAc "SELECT string_agg(type || ' ' || n, ', ' ORDER BY type) FROM (SELECT type, count(*) n FROM inventory_alerts WHERE status <> 'RESOLVED' GROUP BY type) t")
printf 'job.alert_evaluation_s        %s   over %s items, opened %s, resolved %s (%s; target < 5 s)\n' "$first_s" "$items_total" "$first_opened" "$first_resolved" "$first_status"
printf 'job.alert_evaluation_again_s  %s   opened %s, resolved %s (%s; nothing changed: 0 and 0)\n' "$second_s" "$second_opened" "$second_resolved" "$second_status"
printf 'alerts.open                   %s\n' "$open"

if [ "$failed" != 0 ]; then
  echo "FAILED: the ledger does not match what wrk was answered (see the lines marked FAILED above)" >&2
  exit 1
fi
