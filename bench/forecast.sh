#!/usr/bin/env bash
# The supplies forecast, in one run on this machine, next to the database's own figure:
#   1. GET /inventory/reports/forecast for a villa with 300 items and a year of stays (about 90
#      stays, three task rules with consumables, a third of the items with their own use per
#      night, a fifth per stay), days=30 and days=120 (the most), the 300 items in 3 pages of 100:
#      the time of the whole villa (the 3 pages one after another) over RUNS runs, p50 and p95,
#      next to Postgres running the forecast's statement for the villa alone (PREPARE/EXECUTE).
#      Target: under 200 ms for the villa.
#   2. A full stock alert evaluation (worker-alerts, the scheduler's job) over about 100,000 items
#      in 300 villas with such forecasts (a tenth of the items projected below their minimum
#      within FORECAST_ALERT_DAYS, a fiftieth running out within days): its run time from the job
#      row, then a second run with nothing changed, next to Postgres computing the forecast's
#      causes alone. Target: under 10 s.
# Exits 1 when a target is missed. Uses a scratch database and a private redis-server.
#   Usage: bench/forecast.sh            RUNS=20 VILLAS=300 ITEMS_PER_VILLA=334
set -euo pipefail
[ -n "${BENCH_DEBUG:-}" ] && set -x
cd "$(dirname "$0")/.."
source scripts/services.sh
ensure_postgres
command -v redis-server >/dev/null || apt_install redis-server
source bench/lib.sh

RUNS=${RUNS:-20}
VILLAS=${VILLAS:-300}
ITEMS_PER_VILLA=${ITEMS_PER_VILLA:-334}
echo "building release binaries..."
cargo build --release -p api -p workers -p bench --bins -q
export ALERT_EVALUATION_INTERVAL_SECS=86400 TURNOVER_INTERVAL_SECS=86400
bench_platform forecast 0
failed=0

echo "loading $VILLAS villas with a year of stays and about $((VILLAS * ITEMS_PER_VILLA)) items..."
psql "$DATABASE_URL" -q <<SQL
INSERT INTO villas (id, villa_code, villa_name, bedrooms, bathrooms, max_guests, property_type, status)
SELECT ('00000000-0000-7000-8000-' || lpad(n::text, 12, '0'))::uuid, 'FC-' || lpad(n::text, 4, '0'),
       'Villa ' || n, 3, 2, 6, 'VILLA', 'APPROVED'
FROM generate_series(1, $VILLAS) n;
INSERT INTO pms_listings (id, pms_id, name, status, currency, raw, synced_at, villa_id)
SELECT gen_random_uuid(), 500000 + n, 'Listing ' || n, 'ACTIVE', 'USD', '{}', now(),
       ('00000000-0000-7000-8000-' || lpad(n::text, 12, '0'))::uuid
FROM generate_series(1, $VILLAS) n;
-- Three nights every four days, from a month ago to a year ahead.
INSERT INTO pms_reservations (id, pms_id, listing_pms_id, check_in, check_out, nights, channel,
                              total_amount, net_amount, currency, status, raw, synced_at)
SELECT gen_random_uuid(), n * 1000 + k, 500000 + n, current_date - 30 + 4 * k, current_date - 27 + 4 * k, 3,
       'AIRBNB', 900, 810, 'USD', CASE WHEN k % 17 = 0 THEN 'OWNER_STAY' ELSE 'CONFIRMED' END, '{}', now()
FROM generate_series(1, $VILLAS) n, generate_series(0, 98) k;
INSERT INTO inventory_locations (id, property_id, name, type)
SELECT ('00000000-0000-7000-9000-' || lpad(n::text, 12, '0'))::uuid,
       ('00000000-0000-7000-8000-' || lpad(n::text, 12, '0'))::uuid, 'Store', 'STORAGE'
FROM generate_series(1, $VILLAS) n;
-- Villa 1 holds 300 items (the report's case); the others ITEMS_PER_VILLA.
INSERT INTO inventory_items (id, property_id, location_id, name, sku, category, unit, quantity, min_stock,
                             max_stock, use_per_stay, use_per_night)
SELECT gen_random_uuid(), ('00000000-0000-7000-8000-' || lpad(n::text, 12, '0'))::uuid,
       ('00000000-0000-7000-9000-' || lpad(n::text, 12, '0'))::uuid,
       'Item ' || lpad(i::text, 3, '0'), 'SKU-' || i, 'LINENS', 'EACH',
       -- A tenth run short within the alert window (a fiftieth out within days), the rest last.
       CASE WHEN i % 50 = 0 THEN 2 WHEN i % 10 = 0 THEN 24 ELSE 60 + i % 200 END, 20, 400,
       CASE WHEN i % 5 = 0 THEN 1 END, CASE WHEN i % 3 = 0 THEN 0.5 END
FROM generate_series(1, $VILLAS) n,
     LATERAL generate_series(1, CASE WHEN n = 1 THEN 300 ELSE $ITEMS_PER_VILLA END) i;
-- A checkout clean (10 SKUs), an inspection the day before arrival (10) and a refresh every 2
-- nights (5), for every villa.
INSERT INTO task_rules (id, name, trigger, offset_days, every_nights, category, priority, consumables, created_by)
VALUES
  (gen_random_uuid(), 'Checkout clean', 'CHECKOUT', 0, NULL, 'CLEANING', 'MEDIUM',
   (SELECT jsonb_agg(jsonb_build_object('itemSku', 'SKU-' || s, 'perStay', 2, 'perNight', 0.5)) FROM generate_series(1, 10) s), 'bench'),
  (gen_random_uuid(), 'Arrival check', 'CHECKIN', -1, NULL, 'INSPECTION', 'MEDIUM',
   (SELECT jsonb_agg(jsonb_build_object('itemSku', 'SKU-' || s, 'perStay', 1, 'perNight', 0)) FROM generate_series(11, 20) s), 'bench'),
  (gen_random_uuid(), 'Refresh', 'MID_STAY', 0, 2, 'CLEANING', 'LOW',
   (SELECT jsonb_agg(jsonb_build_object('itemSku', 'SKU-' || s, 'perStay', 1, 'perNight', 0)) FROM generate_series(21, 25) s), 'bench');
VACUUM ANALYZE;
SQL
items_total=$(psql "$DATABASE_URL" -tAc "SELECT count(*) FROM inventory_items")
stays_total=$(psql "$DATABASE_URL" -tAc "SELECT count(*) FROM pms_reservations")
villa1=00000000-0000-7000-8000-000000000001
token=$(./target/release/villa-api mint-token --role viewer)
base="http://127.0.0.1:$port"
today=$(psql "$DATABASE_URL" -tAc "SELECT current_date")

percentile() { # p (0-100) < numbers
  sort -n | awk -v p="$1" '{a[NR]=$1} END {i=int((NR*p+99)/100); if (i<1) i=1; printf "%.1f", a[i]}'
}

echo
echo "== 1. the forecast of a villa with 300 items ($stays_total stays on the books over $VILLAS villas)"
for days in 30 120; do
  # Warm up, and check the answer: 300 items, each with its days.
  curl -sf -H "Authorization: Bearer $token" "$base/inventory/reports/forecast?propertyId=$villa1&days=$days&limit=100" \
    | python3 -c "import json,sys; a=json.load(sys.stdin); assert a['pagination']['total']==300, a['pagination']; assert all(len(i['days'])==$days for i in a['data']); print('   checked: 300 items, %d days each, %d items with a run-out on page 1' % ($days, sum(1 for i in a['data'] if i['runOutDate'])))"
  : >"$work/villa-$days.ms"
  for _ in $(seq 1 "$RUNS"); do
    total=0
    for page in 1 2 3; do
      t=$(curl -sf -o /dev/null -w '%{time_total}' -H "Authorization: Bearer $token" \
        "$base/inventory/reports/forecast?propertyId=$villa1&days=$days&limit=100&page=$page")
      total=$(python3 -c "print($total + $t * 1000)")
    done
    echo "$total" >>"$work/villa-$days.ms"
  done
  p50=$(percentile 50 <"$work/villa-$days.ms")
  p95=$(percentile 95 <"$work/villa-$days.ms")
  # The database's own figure: the forecast's statement for the whole villa, alone.
  sql=$(./target/release/forecast-sql daily)
  db_ms=$(psql "$DATABASE_URL" -qAt <<SQL 2>&1 | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -n +2 | percentile 50
PREPARE daily (uuid, uuid[], date, date) AS $sql;
\timing on
EXECUTE daily('$villa1', NULL, '$today', date '$today' + $days);
EXECUTE daily('$villa1', NULL, '$today', date '$today' + $days);
EXECUTE daily('$villa1', NULL, '$today', date '$today' + $days);
EXECUTE daily('$villa1', NULL, '$today', date '$today' + $days);
EXECUTE daily('$villa1', NULL, '$today', date '$today' + $days);
EXECUTE daily('$villa1', NULL, '$today', date '$today' + $days);
SQL
)
  printf 'forecast.villa_%s_days_ms      p50 %s  p95 %s   (300 items, 3 pages; Postgres alone: %s ms; target < 200)\n' \
    "$days" "$p50" "$p95" "$db_ms"
  if python3 -c "import sys; sys.exit(0 if float('$p50') < 200 else 1)"; then :; else failed=1; fi
done

echo
echo "== 2. a full stock alert evaluation over $items_total items with forecasts"
./target/release/worker-alerts >"$work/worker.log" 2>&1 &
bench_pids+=($!)
run_evaluation() { # tick -> "seconds opened resolved status"
  local id status
  id=$(psql "$DATABASE_URL" -qtAc "INSERT INTO jobs (id, kind, queue, payload, dedupe_key, max_attempts)
    VALUES (gen_random_uuid(), 'alerts.evaluate_stock', 'alerts', '{\"tick\": \"$1\"}', 'bench:$1', 5) RETURNING id")
  for _ in $(seq 1 1200); do
    status=$(psql "$DATABASE_URL" -tAc "SELECT status FROM jobs WHERE id = '$id'")
    { [ "$status" = SUCCEEDED ] || [ "$status" = FAILED ]; } && break
    sleep 0.1
  done
  psql "$DATABASE_URL" -tAc "SELECT round(extract(epoch FROM finished_at - started_at)::numeric, 3), result->>'opened', result->>'resolved', status FROM jobs WHERE id = '$id'" | tr '|' ' '
}
read -r first_s first_opened first_resolved first_status < <(run_evaluation first)
read -r second_s second_opened second_resolved second_status < <(run_evaluation second)
sql=$(./target/release/forecast-sql alert)
causes_ms=$(psql "$DATABASE_URL" -qAt <<SQL 2>&1 | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -1
PREPARE causes (uuid, uuid[], date, date, date) AS $sql;
\timing on
EXECUTE causes(NULL, NULL, '$today', date '$today' + 14, date '$today' + 3);
SQL
)
[ -n "$causes_ms" ] || { echo "FAILED: Postgres did not run the forecast's causes alone" >&2; failed=1; }
open=$(psql "$DATABASE_URL" -tAc "SELECT string_agg(type || ' ' || severity || ' ' || n, ', ' ORDER BY type, severity) FROM (SELECT type, severity, count(*) n FROM inventory_alerts WHERE status <> 'RESOLVED' GROUP BY 1, 2) t")
printf 'job.alert_evaluation_s        %s   over %s items, opened %s, resolved %s (%s; target < 10 s)\n' "$first_s" "$items_total" "$first_opened" "$first_resolved" "$first_status"
printf 'job.alert_evaluation_again_s  %s   opened %s, resolved %s (%s; nothing changed: 0 and 0)\n' "$second_s" "$second_opened" "$second_resolved" "$second_status"
printf 'db.forecast_causes_ms         %s   (the forecast part of the evaluation, Postgres alone)\n' "$causes_ms"
printf 'alerts.open                   %s\n' "$open"
for s in "$first_s" "$second_s"; do
  if [ -z "$s" ] || ! python3 -c "import sys; sys.exit(0 if float('$s') < 10 else 1)"; then failed=1; fi
done
[ "$first_status" = SUCCEEDED ] || failed=1

if [ "$failed" != 0 ]; then
  echo "FAILED: a target was missed (above)" >&2
  exit 1
fi
echo "targets met"
