#!/usr/bin/env bash
# The turnover generation (issue 29), in one run on this machine, next to the database's own
# figure. 500 villas with a year of stays on the books (today - 180 days to today + 185, about
# 48,000 stays, bench/turnovers_seed.sql) and three task rules created through
# POST /maintenance/task-rules: a CHECKOUT clean (10 checklist items, 5 consumables), a CHECKIN -1
# inspection (20 items, 5 PHOTO_REQUIRED, owner stays included) and a MID_STAY service every 4
# nights (3 items). TURNOVER_HORIZON_DAYS=60 (the default), BUSINESS_TIME_ZONE=UTC.
#   1. The first run: the rules are created while no worker runs (their enqueues coalesce into
#      one job, the dedupe key `queued:`), then one worker-maintenance runs it: its run time from
#      the job row (finished_at - started_at), the work orders, checklist items and history rows
#      it wrote. Target: under 10 s.
#   2. A second run right after, that must create nothing: once as a job (a row inserted as
#      bench/maintenance.sh does, pushed by the worker's dispatcher), its run time from the row;
#      and 5 times through `turnover-gen` (bench/src/bin/turnover-gen.rs: the domain function the
#      job runs, called directly), median and worst. Target: under 1 s, 0 created.
#   3. Postgres inserting the same rows: the work orders, checklist items and history rows of 1
#      by plain INSERT ... SELECT in one transaction (bench/turnovers_insert.sql), and 1 over it.
#   4. A webhook delivery's time to the board, with the API and one worker-maintenance running
#      (no scheduler): POST /reporting/webhooks/hostaway moving a future stay's checkout a day
#      earlier (a new updatedOn), then GET /maintenance/turnovers?from=D&to=D&villaId=V polled until
#      the stay's checkout work order shows at the new date D (bench/turnovers_webhooks.py):
#      a. DELIVERIES deliveries one after the other (each once the previous one shows);
#      b. DELIVERIES more, RATE a second whatever the others do (Hostaway's bursts): deliveries
#         that arrive while a run waits in the queue coalesce into it (`queued:`), those that
#         arrive while it works wait for the next.
#      p50, p99 and worst from the POST to the board; the generation runs they caused and their
#      run times (job rows). Target: p99 under 2 s, none lost.
#   5. Where a run's time goes: a first run again (the turnover work orders deleted) and a second
#      run through `turnover-gen --explain`, each statement of the run with its time
#      (auto_explain, ANALYZE: slower than the plain run). EXPLAIN_OUT=file keeps the plans.
# Uses a scratch database and a private redis-server; leaves nothing behind. Exits 1 when a
# target is missed, a second run creates anything, or a delivery never shows on the board.
#   Usage: bench/turnovers.sh     VILLAS=500 DELIVERIES=100 RATE=4 EXPLAIN_OUT=
set -euo pipefail
[ -n "${BENCH_DEBUG:-}" ] && set -x
cd "$(dirname "$0")/.."
source scripts/services.sh
ensure_postgres
command -v redis-server >/dev/null || apt_install redis-server

VILLAS=${VILLAS:-500}
DELIVERIES=${DELIVERIES:-100}
RATE=${RATE:-4}
HORIZON=${TURNOVER_HORIZON_DAYS:-60}
echo "building release binaries..."
cargo build --release -p api -p workers -p bench --bins -q

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
work=$(mktemp -d)
db="villa_bench_$$"
port=$(free_port)
redis_port=$(free_port)
pg_base=${PG_ADMIN_URL%/*}
account=10450 hook_user=hostaway hook_password=bench-webhook-secret
# The PMS itself is never called: its settings only make the webhook route present.
export APP_ENV=development DEV_DIR="$work/dev" PORT=$port RUST_LOG=warn LOG_FORMAT=json \
  DATABASE_URL="$pg_base/$db" REDIS_URL="redis://127.0.0.1:$redis_port" STORAGE_LOCAL_DIR="$work/storage" \
  BUSINESS_TIME_ZONE=UTC TURNOVER_HORIZON_DAYS=$HORIZON \
  PMS_BASE_URL=http://127.0.0.1:9/v1 PMS_CLIENT_ID=$account PMS_CLIENT_SECRET=bench-unused \
  PMS_WEBHOOK_USER=$hook_user PMS_WEBHOOK_PASSWORD=$hook_password
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
die() {
  echo "FAILED: $*" >&2
  for log in "$work"/*.log; do
    case "$log" in */redis.log) continue ;; esac
    [ -f "$log" ] || continue
    echo "--- last lines of $(basename "$log")" >&2
    tail -n 15 "$log" >&2
  done
  exit 1
}
div() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0) print 0; else print a / b }'; }
over() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }'; } # a >= b
q() { psql "$DATABASE_URL" -X -qtAc "$1"; }
failed=0
fail() { echo "FAILED: $*" >&2; failed=1; }

psql "$PG_ADMIN_URL" -qc "CREATE DATABASE \"$db\""
redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no >"$work/redis.log" 2>&1 &
pids+=($!)
./target/release/villa-api >"$work/api.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 150); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.2; done
curl -sf "http://127.0.0.1:$port/healthz" >/dev/null || die "villa-api did not come up"
base="http://127.0.0.1:$port"
today=$(date -u +%F)
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB, load average $(cut -d' ' -f1-3 /proc/loadavg); PostgreSQL $(q 'SHOW server_version')"
echo "seeding $VILLAS villas with a year of stays ($today - 180 days to $today + 185)..."
psql "$DATABASE_URL" -X -q -v villas="$VILLAS" -v today="$today" -v back=180 -v ahead=185 -f bench/turnovers_seed.sql >/dev/null
read -r stays confirmed window_stays < <(q "SELECT count(*), count(*) FILTER (WHERE status = 'CONFIRMED'),
    count(*) FILTER (WHERE check_out >= '$today'::date - 31 AND check_in <= '$today'::date + $HORIZON + 31)
  FROM pms_reservations" | tr '|' ' ')
echo "stays: $stays ($confirmed CONFIRMED; $window_stays near the horizon, what a run reads)"

token=$(./target/release/villa-api mint-token --role admin --subject bench-turnovers --ttl 7200)
rule() { # body -> the new rule's id
  local code
  code=$(curl -s -o "$work/rule.json" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
    -H "Authorization: Bearer $token" -d "$1" "$base/maintenance/task-rules")
  [ "$code" = 201 ] || die "POST /maintenance/task-rules answered $code: $(cat "$work/rule.json")"
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$work/rule.json"
}
checklist() { # count photos category -> a checklist of count items, the first photos PHOTO_REQUIRED
  python3 -c 'import json,sys; n,p,c=int(sys.argv[1]),int(sys.argv[2]),sys.argv[3]; print(json.dumps([{"text": f"Item {i + 1}: check it", "kind": "PHOTO_REQUIRED" if i < p else "CHECK", "failCategory": c} for i in range(n)]))' "$@"
}
consumables='[{"itemSku":"LINEN-SET","perStay":1},{"itemSku":"TOWEL","perNight":0.5,"perStay":2},{"itemSku":"SOAP","perStay":2},{"itemSku":"COFFEE-POD","perNight":4},{"itemSku":"TRASH-BAG","perStay":3}]'
# No worker yet: the three enqueues coalesce into one queued run.
checkout_rule=$(rule "{\"name\":\"Checkout clean\",\"trigger\":\"CHECKOUT\",\"category\":\"CLEANING\",\"checklist\":$(checklist 10 0 CLEANING),\"consumables\":$consumables}")
rule "{\"name\":\"Pre-arrival inspection\",\"trigger\":\"CHECKIN\",\"offsetDays\":-1,\"category\":\"INSPECTION\",\"priority\":\"HIGH\",\"includeOwnerStays\":true,\"checklist\":$(checklist 20 5 GENERAL)}" >/dev/null
rule "{\"name\":\"Mid-stay service\",\"trigger\":\"MID_STAY\",\"everyNights\":4,\"category\":\"CLEANING\",\"priority\":\"LOW\",\"checklist\":$(checklist 3 0 CLEANING)}" >/dev/null
first_job=$(q "SELECT id FROM jobs WHERE kind = 'maintenance.generate_turnovers' AND status = 'QUEUED'")
[[ "$first_job" =~ ^[0-9a-f-]{36}$ ]] || die "not one queued generation after creating the rules: '$first_job'"

wait_job() { # id seconds -> "seconds status created moved cancelled" of the job's row
  local status
  for _ in $(seq 1 $(($2 * 10))); do
    status=$(q "SELECT status FROM jobs WHERE id = '$1'")
    [ "$status" = SUCCEEDED ] || [ "$status" = FAILED ] && break
    sleep 0.1
  done
  q "SELECT coalesce(round(extract(epoch FROM finished_at - started_at)::numeric, 3)::text, 'none'), status,
      coalesce(result #>> '{generated,created}', '-'), coalesce(result #>> '{generated,moved}', '-'),
      coalesce(result #>> '{generated,cancelled}', '-') FROM jobs WHERE id = '$1'" | tr '|' ' '
}
# Both the run and Postgres' figure (3) start from a checkpoint.
q 'CHECKPOINT'
env RUST_LOG=warn,workers=info ./target/release/worker-maintenance >"$work/worker.log" 2>&1 &
pids+=($!)
read -r first_s first_status first_created _ < <(wait_job "$first_job" 300)
[ "$first_status" = SUCCEEDED ] || die "the first generation ended $first_status"
read -r orders items history < <(q "SELECT count(*), (SELECT count(*) FROM work_order_checklist_items),
    (SELECT count(*) FROM work_order_history h JOIN work_orders w ON w.id = h.work_order_id WHERE w.source = 'TURNOVER')
  FROM work_orders WHERE source = 'TURNOVER'" | tr '|' ' ')
by_rule=$(q "SELECT string_agg(format('%s %s', r.trigger, n), ', ' ORDER BY r.created_at)
  FROM (SELECT task_rule_id, count(*) n FROM work_orders GROUP BY 1) w JOIN task_rules r ON r.id = w.task_rule_id")
same_day=$(q "SELECT count(*) FROM work_orders WHERE same_day_turnover")
echo
echo "== 1. first generation run: 3 rules over $stays stays ($window_stays near the horizon), horizon $HORIZON days, one worker-maintenance"
printf 'job.turnovers_first_s         %s   created %s work orders (%s; %s same-day turnovers), %s checklist items, %s history rows (%s; target < 10 s)\n' \
  "$first_s" "$first_created" "$by_rule" "$same_day" "$items" "$history" "$first_status"
[ "$first_created" = "$orders" ] || fail "the job says it created $first_created work orders, the table holds $orders"
[ "$orders" -gt 0 ] || fail "the first run created no work order"
over "$first_s" 10 && fail "the first run took $first_s s (target < 10 s)"

# ---- 2. a second run, nothing to create
second_job=$(q "INSERT INTO jobs (id, kind, queue, payload, dedupe_key, max_attempts)
  VALUES (gen_random_uuid(), 'maintenance.generate_turnovers', 'maintenance', '{}', 'bench:second', 5) RETURNING id")
read -r second_s second_status second_created second_moved second_cancelled < <(wait_job "$second_job" 120)
./target/release/turnover-gen --runs 5 --today "$today" --horizon-days "$HORIZON" >"$work/gen.txt" || die "turnover-gen failed"
read -r gen_med gen_worst gen_created < <(sort -n "$work/gen.txt" | awk '{ s[NR] = $1; c += $2 + $3 + $4 + $5 } END { print s[int((NR + 1) / 2)], s[NR], c }')
echo
echo "== 2. a second run right after (nothing changed)"
printf 'job.turnovers_second_s        %s   created %s, moved %s, cancelled %s (%s; the job row; target < 1 s, 0 created)\n' \
  "$second_s" "$second_created" "$second_moved" "$second_cancelled" "$second_status"
printf 'gen.turnovers_second_s        median %s  worst %s   (turnover-gen, 5 runs; work orders created, moved, cancelled or restored: %s)\n' \
  "$gen_med" "$gen_worst" "$gen_created"
[ "$second_status" = SUCCEEDED ] || fail "the second run ended $second_status"
[ "$second_created" = 0 ] && [ "$second_moved" = 0 ] && [ "$second_cancelled" = 0 ] || fail "the second run changed work orders"
[ "$gen_created" = 0 ] || fail "turnover-gen's runs changed $gen_created work orders"
over "$second_s" 1 && fail "the second run took $second_s s (target < 1 s)"
over "$gen_med" 1 && fail "turnover-gen's second runs took $gen_med s (median; target < 1 s)"

# ---- 3. Postgres inserting the same rows
# (Into a file: the script deletes its copies after printing the figures, and must be done.)
psql "$DATABASE_URL" -X -q -tA -F ' ' -f bench/turnovers_insert.sql >"$work/insert.txt" 2>"$work/insert.log" ||
  die "bench/turnovers_insert.sql failed: $(cat "$work/insert.log")"
read -r pg_orders pg_items pg_history pg_s <"$work/insert.txt"
echo
echo "== 3. Postgres inserting the same rows: INSERT ... SELECT, one transaction (bench/turnovers_insert.sql)"
printf 'postgres.insert_s             %s   (%s work orders, %s checklist items, %s history rows)\n' "$pg_s" "$pg_orders" "$pg_items" "$pg_history"
printf 'ratio.first_run_vs_insert     %.1f   (1 over 3: a run also reads the stays, computes the occurrences, and checks every open work order)\n' "$(div "$first_s" "$pg_s")"
[ "$pg_orders" = "$orders" ] && [ "$pg_items" = "$items" ] || fail "Postgres inserted $pg_orders work orders and $pg_items items, the run $orders and $items"

# ---- 4. webhook deliveries to the board
# Future stays whose checkout work order is OPEN, one a villa, in random order: each checks out a
# day earlier. Half for a, half for b.
q "SELECT villa_id, listing_pms_id, pms_id, check_in, check_out - 1, nights - 1, guest_name, work_order
   FROM (SELECT DISTINCT ON (l.villa_id) l.villa_id, r.listing_pms_id, r.pms_id, r.check_in, r.check_out, r.nights,
                r.guest_name, w.id AS work_order
         FROM pms_reservations r
         JOIN pms_listings l ON l.pms_id = r.listing_pms_id
         JOIN work_orders w ON w.reservation_id = r.id AND w.task_rule_id = '$checkout_rule' AND w.status = 'OPEN'
         WHERE r.status = 'CONFIRMED' AND r.nights >= 2
           AND r.check_out BETWEEN '$today'::date + 3 AND '$today'::date + $HORIZON - 3
         ORDER BY l.villa_id, r.check_out) s
   ORDER BY md5(pms_id::text) LIMIT $((2 * DELIVERIES))" | tr '|' '\t' >"$work/stays.tsv"
[ "$(wc -l <"$work/stays.tsv")" = $((2 * DELIVERIES)) ] || die "fewer than $((2 * DELIVERIES)) stays to move (one a villa)"
head -n "$DELIVERIES" "$work/stays.tsv" >"$work/sequential.tsv"
tail -n "$DELIVERIES" "$work/stays.tsv" >"$work/paced.tsv"
# A run's time is its job row's, which includes waiting for the runs' advisory lock: the dedupe
# key holds only while a run is queued, so runs claimed while another works wait at the lock
# (the most running at once, themselves included, is "overlap").
runs_since() { # timestamp -> "runs mean_s max_s overlap" of the generation jobs enqueued since
  q "WITH j AS (SELECT started_at, finished_at FROM jobs
               WHERE kind = 'maintenance.generate_turnovers' AND created_at >= '$1' AND finished_at IS NOT NULL)
     SELECT count(*), coalesce(round(avg(extract(epoch FROM finished_at - started_at))::numeric, 3), 0),
       coalesce(round(max(extract(epoch FROM finished_at - started_at))::numeric, 3), 0),
       coalesce((SELECT max(n) FROM (SELECT (SELECT count(*) FROM j k WHERE k.started_at < j.finished_at
                                             AND k.finished_at > j.started_at) AS n FROM j) o), 0)
     FROM j" | tr '|' ' '
}
deliver() { # file rate -> "count p50 p99 max failed"
  python3 bench/turnovers_webhooks.py "$base" "$token" "$hook_user" "$hook_password" "$account" "$1" "$2" 2>>"$work/webhooks.err"
}
mark=$(q 'SELECT now()')
read -r seq_n seq_p50 seq_p99 seq_max seq_failed < <(deliver "$work/sequential.tsv" 0)
read -r seq_runs seq_run_mean seq_run_max seq_overlap < <(runs_since "$mark")
sleep 2
mark=$(q 'SELECT now()')
read -r paced_n paced_p50 paced_p99 paced_max paced_failed < <(deliver "$work/paced.tsv" "$RATE")
sleep 2
read -r paced_runs paced_run_mean paced_run_max paced_overlap < <(runs_since "$mark")
moved=$(q "SELECT count(*) FROM work_order_history WHERE reason LIKE 'reservation moved:%'")
echo
echo "== 4. webhook delivery -> its work order on the board (API + one worker-maintenance, no scheduler)"
printf 'webhook.sequential_ms         p50 %s  p99 %s  max %s   (%s deliveries one after the other, %s shown, %s not; target p99 < 2000)\n' \
  "$seq_p50" "$seq_p99" "$seq_max" "$DELIVERIES" "$seq_n" "$seq_failed"
printf 'webhook.sequential_runs       %s   generation runs, %s s on average, worst %s s (job rows); at most %s running at once\n' "$seq_runs" "$seq_run_mean" "$seq_run_max" "$seq_overlap"
printf 'webhook.paced_ms              p50 %s  p99 %s  max %s   (%s deliveries at %s a second, %s shown, %s not; target p99 < 2000)\n' \
  "$paced_p50" "$paced_p99" "$paced_max" "$DELIVERIES" "$RATE" "$paced_n" "$paced_failed"
printf 'webhook.paced_runs            %s   generation runs for %s deliveries (the rest coalesced), %s s on average, worst %s s (job rows, waits at the runs'"'"' lock included); at most %s running at once\n' \
  "$paced_runs" "$DELIVERIES" "$paced_run_mean" "$paced_run_max" "$paced_overlap"
printf 'work_orders_moved             %s   (history rows "reservation moved", all deliveries)\n' "$moved"
if [ -s "$work/webhooks.err" ]; then
  fail "deliveries failed (first lines follow)"
  head -n 5 "$work/webhooks.err" >&2
fi
[ "$seq_failed" = 0 ] && [ "$paced_failed" = 0 ] || fail "deliveries whose work order never showed on the board"
over "$seq_p99" 2000 && fail "sequential deliveries: p99 $seq_p99 ms (target < 2000)"
over "$paced_p99" 2000 && fail "paced deliveries: p99 $paced_p99 ms (target < 2000)"

# ---- 5. where a run's time goes
stop_worker() { kill -TERM "${pids[-1]}" 2>/dev/null || true; wait "${pids[-1]}" 2>/dev/null || true; }
stop_worker
explained() { # label file: each explained statement's time and its first words, slowest first
  awk -v label="$1" '
    /^duration: / { ms = $2; getline; sub(/^Query Text: */, ""); q = $0
      while (q ~ /^[[:space:]]*$/ && (getline line) > 0) q = line
      if ((getline line) > 0) q = q " " line
      gsub(/[[:space:]]+/, " ", q); printf "%10.1f ms  %s: %s\n", ms, label, substr(q, 1, 90) }' "$2" | sort -rn | sed -n '1,8p'
}
psql "$DATABASE_URL" -X -q -c "DELETE FROM work_orders WHERE source = 'TURNOVER'" -c 'VACUUM ANALYZE work_orders' \
  -c 'VACUUM ANALYZE work_order_checklist_items' -c 'VACUUM ANALYZE work_order_history' -c 'CHECKPOINT' >/dev/null
./target/release/turnover-gen --today "$today" --horizon-days "$HORIZON" --explain 0 >"$work/explain-first.txt" 2>"$work/explain-first.log" ||
  die "turnover-gen --explain failed: $(tail -n 5 "$work/explain-first.log")"
./target/release/turnover-gen --today "$today" --horizon-days "$HORIZON" --explain 0 >"$work/explain-second.txt" 2>"$work/explain-second.log" ||
  die "turnover-gen --explain failed: $(tail -n 5 "$work/explain-second.log")"
echo
echo "== 5. the statements of a run (auto_explain with ANALYZE; runs of $(cut -d' ' -f1 "$work/explain-first.txt") s and $(cut -d' ' -f1 "$work/explain-second.txt") s explained)"
[ -z "${EXPLAIN_OUT:-}" ] || cat "$work/explain-first.log" "$work/explain-second.log" >"$EXPLAIN_OUT"
explained first "$work/explain-first.log"
explained second "$work/explain-second.log"
[ -z "${EXPLAIN_OUT:-}" ] || echo "(the plans: $EXPLAIN_OUT)"

if [ "$failed" != 0 ]; then
  echo "FAILED: see the lines marked FAILED above" >&2
  exit 1
fi
