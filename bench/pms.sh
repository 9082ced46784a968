#!/usr/bin/env bash
# The PMS sync and the reporting reads (issue 17), in one run on this machine, next to the
# database's own figure:
#   1. A full sync of 100,000 reservations (36 listings) from fake-pms with its rate limit lifted
#      (PMS_RATE_LIMIT=0, PMS_PAGE_SIZE=1000) by one worker-pms, triggered with
#      POST /reporting/sync/trigger and polled with GET /reporting/sync/status/:id until COMPLETED:
#      reservations per second over the run row's finished_at - started_at. Target: at least
#      10,000/s. The PMS token (it lives for months) is fetched first by a listings-only sync,
#      so that the full sync finds it stored, as every sync but the platform's first does.
#   2. Postgres upserting the same rows: the stored reservations upserted again into the emptied
#      table by the sync's own statement, in batches of the page size, one transaction each
#      (bench/pms_upsert.sql): rows per second, and the sync's figure over it.
#   3. The same full sync with Hostaway's limits on (the fake: 15 requests per 10 s per IP, 20
#      per account; PMS_RATE_LIMIT=15, PMS_RATE_WINDOW_SECS=10) over 5,000 new reservations at
#      100 a page: the requests the PMS admitted (N, the token's included, from the fake's
#      counters), the fastest time the limit allows (floor((N - 1) / 15) x 10 s: 15 requests at
#      once, then 15 more every 10 s), the time taken (the run row), and fastest / taken.
#      Target: at least 0.9; the fake's 429s should be 0.
#   4. GET /reporting/listings (cached: X-Cache HIT after the first call) with wrk at 32
#      connections: requests per second and p99. The reporting limits allow 60 listing reads a
#      minute per caller, so the load comes from thousands of callers in turn (tokens with
#      distinct subjects, signed by bench/pms_tokens.py); wrk's non-2xx answers must be 0.
# Uses a scratch database and a private redis-server; leaves nothing behind. Exits 1 when a sync
# does not complete, the rows stored are not the rows the fake holds, the listings are not
# served from the cache, or wrk saw an answer other than 2xx.
#   Usage: bench/pms.sh     RESERVATIONS=100000 PMS_PAGE_SIZE=1000 (1..1000, e.g. 100)
#                           LIMITED_RESERVATIONS=5000 LIMITED_PAGE_SIZE=100 DURATION=15
set -euo pipefail
[ -n "${BENCH_DEBUG:-}" ] && set -x
cd "$(dirname "$0")/.."
source scripts/services.sh
ensure_postgres
command -v wrk >/dev/null || apt_install wrk
command -v redis-server >/dev/null || apt_install redis-server
command -v redis-cli >/dev/null || apt_install redis-tools

DURATION=${DURATION:-15}
LISTINGS=${LISTINGS:-36}
RESERVATIONS=${RESERVATIONS:-100000}
PAGE_SIZE=${PMS_PAGE_SIZE:-1000}
LIMITED_RESERVATIONS=${LIMITED_RESERVATIONS:-5000}
LIMITED_PAGE_SIZE=${LIMITED_PAGE_SIZE:-100}
# Hostaway's limits (the fake's defaults), and what the worker is told to stay within.
IP_LIMIT=15 ACCOUNT_LIMIT=20 LIMIT_WINDOW=10
echo "building release binaries..."
cargo build --release -p api -p workers -p fake-pms --bins -q

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
work=$(mktemp -d)
db="villa_bench_$$"
port=$(free_port)
redis_port=$(free_port)
fake_port=$(free_port)
fake2_port=$(free_port)
pg_base=${PG_ADMIN_URL%/*}
export APP_ENV=development DEV_DIR="$work/dev" PORT=$port RUST_LOG=warn LOG_FORMAT=json \
  DATABASE_URL="$pg_base/$db" REDIS_URL="redis://127.0.0.1:$redis_port" STORAGE_LOCAL_DIR="$work/storage" \
  PMS_BASE_URL="http://127.0.0.1:$fake_port/v1" PMS_CLIENT_ID=10450 PMS_CLIENT_SECRET=fake-pms-secret \
  PMS_RATE_LIMIT=0 PMS_RATE_WINDOW_SECS=$LIMIT_WINDOW PMS_PAGE_SIZE=$PAGE_SIZE PMS_SYNC_INTERVAL_SECS=86400
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
stop() { # pid: a process this script started
  kill -TERM "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}
start_fake() { # port log args...: fake-pms, once it answers; sets fake_pid and fake_reservations
  local at=$1 log=$2
  shift 2
  ./target/release/fake-pms --port "$at" --listings "$LISTINGS" "$@" >"$log" 2>&1 &
  pids+=($!)
  fake_pid=$!
  for _ in $(seq 1 600); do curl -sf "http://127.0.0.1:$at/_fake/stats" >/dev/null && break; sleep 0.2; done
  fake_reservations=$(curl -sf "http://127.0.0.1:$at/_fake/stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["reservations"])' 2>/dev/null) ||
    die "fake-pms did not come up on port $at"
}
start_worker() { # log settings... (NAME=value): worker-pms, once its consumers start
  local log=$1
  shift
  env RUST_LOG=warn,workers=info "$@" ./target/release/worker-pms >"$log" 2>&1 &
  pids+=($!)
  worker_pid=$!
  for _ in $(seq 1 150); do grep -q 'worker starting' "$log" && break; sleep 0.2; done
  sleep 1
}

psql "$PG_ADMIN_URL" -qc "CREATE DATABASE \"$db\""
redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no >"$work/redis.log" 2>&1 &
pids+=($!)
echo "starting fake-pms with $LISTINGS listings and $RESERVATIONS reservations, rate limits lifted..."
start_fake "$fake_port" "$work/fake.log" --reservations "$RESERVATIONS" --no-rate-limit
./target/release/villa-api >"$work/api.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 150); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.2; done
curl -sf "http://127.0.0.1:$port/healthz" >/dev/null || die "villa-api did not come up"
start_worker "$work/worker.log"
base="http://127.0.0.1:$port"
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB; PostgreSQL $(psql "$DATABASE_URL" -tAc 'SHOW server_version')"

mint() { # role subject: a development token
  ./target/release/villa-api mint-token --role "$1" --subject "$2" --ttl 7200
}
# The reporting limits allow 5 sync calls a minute per caller: each call below is a caller of
# its own (subject bench-<what>-<nanoseconds>).
trigger() { # entities (a JSON array) -> the new run's id
  local answer="$work/trigger.json" code id
  code=$(curl -s -o "$answer" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
    -H "Authorization: Bearer $(mint admin "bench-trigger-$(date +%s%N)")" \
    -d "{\"type\":\"full\",\"entities\":$1}" "$base/reporting/sync/trigger")
  [ "$code" = 202 ] || die "POST /reporting/sync/trigger answered $code: $(cat "$answer")"
  id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["syncId"])' "$answer")
  [[ "$id" =~ ^[0-9a-f-]{36}$ ]] || die "POST /reporting/sync/trigger answered no syncId: $(cat "$answer")"
  echo "$id"
}
# Polled as a client would, every 2 s (the status route's Retry-After): the figures come from the
# run row, and a poll costs two processes' CPU that the sync would otherwise have.
wait_run() { # id seconds -> COMPLETED, FAILED or TIMEOUT
  local id=$1 deadline=$(($(date +%s) + $2)) status
  while :; do
    status=$(curl -sf -H "Authorization: Bearer $(mint viewer "bench-poll-$(date +%s%N)")" "$base/reporting/sync/status/$id" \
      | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])' 2>/dev/null) || status=
    case "$status" in COMPLETED | FAILED) break ;; esac
    if [ "$(date +%s)" -ge "$deadline" ]; then status=TIMEOUT; break; fi
    sleep 2
  done
  echo "$status"
}
# "seconds status fetched created updated unchanged listing_pages reservation_pages error" of a run.
run_row() {
  psql "$DATABASE_URL" -tA -F ' ' -c "SELECT coalesce(round(extract(epoch FROM finished_at - started_at)::numeric, 3)::text, 'none'),
      status, coalesce(progress #>> '{reservations,fetched}', '0'), coalesce(progress #>> '{reservations,created}', '0'),
      coalesce(progress #>> '{reservations,updated}', '0'), coalesce(progress #>> '{reservations,unchanged}', '0'),
      coalesce(progress #>> '{listings,pagesDone}', '0'), coalesce(progress #>> '{reservations,pagesDone}', '0'),
      replace(coalesce(error, '-'), E'\n', ' ')
    FROM pms_sync_runs WHERE id = '$1'"
}
sync_to_end() { # label id seconds: waits for the run, dies unless it COMPLETED
  local status
  status=$(wait_run "$2" "$3")
  [ "$status" = COMPLETED ] || die "$1 ended $status (seconds status fetched created updated unchanged pages error: $(run_row "$2"))"
}
div() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0) print 0; else print a / b }'; }
failed=0

echo "fetching the PMS token (a listings-only sync)..."
token_run=$(trigger '["listings"]')
sync_to_end "the listings-only sync" "$token_run" 120
read -r token_s _ < <(run_row "$token_run")
# The sync starts from a checkpoint, as Postgres' figure does (bench/pms_upsert.sql).
psql "$DATABASE_URL" -qc 'CHECKPOINT'
echo "full sync of $RESERVATIONS reservations, $PAGE_SIZE a page..."
full_run=$(trigger '["listings","reservations"]')
sync_to_end "the full sync" "$full_run" 1800
read -r full_s _ fetched created updated unchanged listing_pages reservation_pages _ < <(run_row "$full_run")
stored=$(psql "$DATABASE_URL" -tAc 'SELECT count(*) FROM pms_reservations')
sync_rate=$(div "$fetched" "$full_s")
verdict=ok
if [ "$fetched" != "$fake_reservations" ] || [ "$stored" != "$fake_reservations" ]; then
  verdict="FAILED: the fake holds $fake_reservations"
  failed=1
fi
echo
echo "== 1. full sync of $RESERVATIONS reservations ($LISTINGS listings) from fake-pms, rate limit lifted, $PAGE_SIZE a page, one worker-pms"
printf 'sync.token_fetch_s            %s   (a listings-only sync first: it fetches the token the full sync finds stored)\n' "$token_s"
printf 'sync.full_s                   %s   reservations fetched %s, created %s, updated %s, unchanged %s; pages: listings %s, reservations %s; stored %s: %s\n' \
  "$full_s" "$fetched" "$created" "$updated" "$unchanged" "$listing_pages" "$reservation_pages" "$stored" "$verdict"
printf 'sync.reservations_per_s       %.0f   (finished_at - started_at of the run row; target >= 10,000)\n' "$sync_rate"

echo
echo "== 2. Postgres upserting the same $stored rows with the sync's statement, $PAGE_SIZE a batch, one transaction each"
psql -X -q -tA -F ' ' -v page="$PAGE_SIZE" -f bench/pms_upsert.sql "$DATABASE_URL" >"$work/upsert.txt" 2>"$work/upsert.log" ||
  die "bench/pms_upsert.sql failed"
read -r pg_rows pg_s <"$work/upsert.txt"
pg_rate=$(div "$pg_rows" "$pg_s")
reloaded=$(psql "$DATABASE_URL" -tAc 'SELECT count(*) FROM pms_reservations')
verdict=ok
if [ "$pg_rows" != "$stored" ] || [ "$reloaded" != "$stored" ]; then
  verdict="FAILED: $stored rows exported"
  failed=1
fi
printf 'postgres.upsert_s             %s   rows written %s, table holds %s: %s\n' "$pg_s" "$pg_rows" "$reloaded" "$verdict"
printf 'postgres.upsert_rows_per_s    %.0f   (bench/pms_upsert.sql)\n' "$pg_rate"
printf 'ratio.sync_vs_postgres        %.2f   (the sync also fetches and maps every page and records its progress)\n' "$(div "$sync_rate" "$pg_rate")"

echo
echo "full sync of $LIMITED_RESERVATIONS new reservations with Hostaway's limits, $LIMITED_PAGE_SIZE a page..."
stop "$worker_pid"
stop "$fake_pid"
start_fake "$fake2_port" "$work/fake-limited.log" --reservations "$LIMITED_RESERVATIONS"
curl -sf -X POST -H 'Content-Type: application/json' \
  -d "{\"ip\":{\"limit\":$IP_LIMIT,\"windowSecs\":$LIMIT_WINDOW},\"account\":{\"limit\":$ACCOUNT_LIMIT,\"windowSecs\":$LIMIT_WINDOW}}" \
  "http://127.0.0.1:$fake2_port/_fake/limits" >/dev/null || die "POST /_fake/limits failed"
# New rows and no token: the token request is one of the requests the limit counts.
psql "$DATABASE_URL" -qc 'TRUNCATE pms_listings, pms_reservations, pms_tokens'
redis-cli -p "$redis_port" --scan --pattern '*pms:rate*' | xargs -r redis-cli -p "$redis_port" DEL >/dev/null
start_worker "$work/worker-limited.log" PMS_BASE_URL="http://127.0.0.1:$fake2_port/v1" \
  PMS_RATE_LIMIT=$IP_LIMIT PMS_RATE_WINDOW_SECS=$LIMIT_WINDOW PMS_PAGE_SIZE="$LIMITED_PAGE_SIZE"
limited_run=$(trigger '["listings","reservations"]')
sync_to_end "the rate-limited sync" "$limited_run" $((LIMITED_RESERVATIONS * LIMIT_WINDOW / LIMITED_PAGE_SIZE / IP_LIMIT + 300))
read -r limited_s _ limited_fetched _ _ _ limited_listing_pages limited_reservation_pages _ < <(run_row "$limited_run")
read -r requests token_requests refused < <(curl -sf "http://127.0.0.1:$fake2_port/_fake/stats" \
  | python3 -c 'import json,sys; s=json.load(sys.stdin); print(s["requests"], s["tokenRequests"], s["rateLimited"])')
admitted=$((requests - refused))
[ "$admitted" -ge 1 ] || die "the fake counted no request"
# Whole windows: request k (from 0) goes out at floor(k / limit) x window at the earliest.
# shellcheck disable=SC2017
fastest=$(((admitted - 1) / IP_LIMIT * LIMIT_WINDOW))
limited_stored=$(psql "$DATABASE_URL" -tAc 'SELECT count(*) FROM pms_reservations')
verdict=ok
if [ "$limited_fetched" != "$fake_reservations" ] || [ "$limited_stored" != "$fake_reservations" ]; then
  verdict="FAILED: the fake holds $fake_reservations"
  failed=1
fi
echo
echo "== 3. the same sync with Hostaway's limits: fake-pms $IP_LIMIT per ${LIMIT_WINDOW} s per IP and $ACCOUNT_LIMIT per account, PMS_RATE_LIMIT=$IP_LIMIT PMS_RATE_WINDOW_SECS=$LIMIT_WINDOW, $LIMITED_RESERVATIONS reservations, $LIMITED_PAGE_SIZE a page"
others=$((admitted - token_requests - limited_listing_pages - limited_reservation_pages))
printf 'limited.requests              %s   admitted by the fake: %s for the token, pages stored: listings %s, reservations %s, and %s more (pages with nothing to store: the empty one that ends a pass); refused with 429: %s (should be 0)\n' \
  "$admitted" "$token_requests" "$limited_listing_pages" "$limited_reservation_pages" "$others" "$refused"
printf 'limited.fastest_s             %s   (floor((%s - 1) / %s) x %s s: the last request is that late at best)\n' "$fastest" "$admitted" "$IP_LIMIT" "$LIMIT_WINDOW"
printf 'limited.taken_s               %s   (finished_at - started_at) reservations fetched %s, stored %s: %s\n' "$limited_s" "$limited_fetched" "$limited_stored" "$verdict"
printf 'ratio.limited_fastest_taken   %.2f   (target >= 0.9)\n' "$(div "$fastest" "$limited_s")"

echo
echo "minting callers for the listings load..."
check_token() { curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $1" "$base/reporting/sync/runs?limit=1"; }
mint_many() { # prefix count file: viewer tokens with distinct subjects, one a line
  local template
  template=$(mint viewer "$1-template")
  if ! python3 bench/pms_tokens.py "$template" "$DEV_DIR/jwt-dev-key.pem" "$1" "$2" >"$3" 2>"$work/mint.err"; then
    echo "(bench/pms_tokens.py could not sign: $(tail -n 1 "$work/mint.err"); minting $2 tokens with villa-api, one process each)"
  elif [ "$(check_token "$(head -n 1 "$3")")" != 200 ]; then
    echo "(the API refused a token bench/pms_tokens.py signed; minting $2 tokens with villa-api, one process each)"
  else
    return 0
  fi
  seq 1 "$2" | xargs -P "$(nproc)" -I{} ./target/release/villa-api mint-token --role viewer --subject "$1-{}" --ttl 7200 >"$3"
}
cache_of() { # token -> the X-Cache header of GET /reporting/listings
  curl -s -o /dev/null -D - -H "Authorization: Bearer $1" "$base/reporting/listings" | tr -d '\r' |
    awk -F': ' 'tolower($1) == "x-cache" { print $2 }'
}
first_cache=$(cache_of "$(mint viewer bench-cache-1)") || first_cache=
second_cache=$(cache_of "$(mint viewer bench-cache-2)") || second_cache=
listings=$(psql "$DATABASE_URL" -tAc 'SELECT count(*) FROM pms_listings')
cat >"$work/listings.lua" <<'LUA'
-- Each thread takes its share of the callers (thread t the lines t, t + threads, ...) and sends
-- their requests in turn, one each, so that every caller's allowance is spent evenly. The
-- requests are formatted once, in init.
local requests = {}
local turn = 1
local created = 0
function setup(thread)
  thread:set("tid", created)
  created = created + 1
end
function init(args)
  local threads = tonumber(os.getenv("WRK_THREADS"))
  local i = 0
  for token in io.lines(os.getenv("WRK_TOKENS")) do
    if i % threads == tid then
      requests[#requests + 1] = wrk.format("GET", wrk.path, {["Authorization"] = "Bearer " .. token})
    end
    i = i + 1
  end
  if #requests == 0 then
    error("no token for thread " .. tid .. " in " .. os.getenv("WRK_TOKENS"))
  end
end
function request()
  local r = requests[turn]
  turn = turn % #requests + 1
  return r
end
LUA
run_wrk() { # tokens seconds output
  WRK_TOKENS=$1 WRK_THREADS=2 wrk -t2 -c32 -d"$2s" --latency -s "$work/listings.lua" "$base/reporting/listings" >"$3" 2>&1 || true
}
rps_of() { sed -n 's/^Requests\/sec:[[:space:]]*\([0-9.]*\).*/\1/p' "$1"; }
ms() { awk -v v="$1" 'BEGIN{ if (v ~ /us$/) {sub(/us$/,"",v); print v/1000} else if (v ~ /ms$/) {sub(/ms$/,"",v); print v+0} else if (v ~ /s$/) {sub(/s$/,"",v); print v*1000} else print v }'; }
# A warm-up with callers of its own, whose rate sizes the measured run's callers: each may send
# 60 in any 60 seconds (a sliding window), so over DURATION at most 60 x ceil(DURATION / 60),
# and N callers in turn carry rate x DURATION requests when
# N >= rate x DURATION / (60 x ceil(DURATION / 60)); half as many again for a faster run. At most
# 8,000, with the warm-up's 1,500 under the 10,000 tokens the API keeps verified.
mint_many bench-warm 1500 "$work/warm.tokens"
run_wrk "$work/warm.tokens" 3 "$work/wrk-warm.txt"
warm_rps=$(rps_of "$work/wrk-warm.txt")
callers=$(awk -v r="${warm_rps:-0}" -v d="$DURATION" 'BEGIN { n = int(r * d * 1.5 / (60 * int((d + 59) / 60))) + 1; if (n < 64) n = 64; if (n > 8000) n = 8000; print n }')
mint_many bench-load "$callers" "$work/load.tokens"
run_wrk "$work/load.tokens" "$DURATION" "$work/wrk.txt"
rps=$(rps_of "$work/wrk.txt")
p50=$(ms "$(awk '$1=="50%"{print $2}' "$work/wrk.txt")")
p99=$(ms "$(awk '$1=="99%"{print $2}' "$work/wrk.txt")")
non2xx=$(sed -n 's/^[[:space:]]*Non-2xx or 3xx responses:[[:space:]]*\([0-9]*\).*/\1/p' "$work/wrk.txt")
non2xx=${non2xx:-0}
socket_errors=$(sed -n 's/^[[:space:]]*Socket errors:[[:space:]]*//p' "$work/wrk.txt")
after_cache=$(cache_of "$(mint viewer bench-cache-3)") || after_cache=
echo
echo "== 4. GET /reporting/listings ($listings listings, first page), cached, wrk 32 connections, ${DURATION} s"
printf 'http.listings_rps             %.0f   p50 %.2f ms  p99 %.2f ms  (%s callers in turn)\n' "${rps:-0}" "${p50:-0}" "${p99:-0}" "$callers"
printf 'http.listings_non_2xx         %s   (must be 0: a 429 means too few callers)%s\n' "$non2xx" "${socket_errors:+; socket errors: $socket_errors}"
printf 'cache                         X-Cache %s, then %s; after the load %s\n' "${first_cache:-none}" "${second_cache:-none}" "${after_cache:-none}"
if [ -z "$rps" ] || [ "$non2xx" != 0 ] || [ "$second_cache" != HIT ] || [ "$after_cache" != HIT ]; then
  echo "FAILED: the listings load was not all cached 2xx answers (wrk's output follows)" >&2
  cat "$work/wrk.txt" >&2
  failed=1
fi

if [ "$failed" != 0 ]; then
  echo "FAILED: see the lines marked FAILED above" >&2
  exit 1
fi
