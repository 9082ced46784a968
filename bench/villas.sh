#!/usr/bin/env bash
# The management villa reads at 100,000 villas, in one run on this machine, each next to the
# database's own figure measured in the same run:
#   1. GET /management/villas?search=<term>&limit=20 (wrk, 32 connections): throughput and p99,
#      next to pgbench at 32 connections running the SQL the route runs per request (version read
#      and page, bench/villa_search_page.pgbench) and the page and count it would run without its
#      cache of totals (bench/villa_search.pgbench). Target: p99 < 20 ms, throughput >= half of
#      pgbench's. The route batches concurrent identical requests into one load
#      (domain::batch), so the same search at 32 connections is also measured over 40 different
#      terms, where little is shared.
#   2. GET /management/villas/{id} over random ids (wrk, 32 connections) next to
#      `pgbench -S -M prepared` at 32 connections. Target: throughput >= half of pgbench's.
#      Concurrent reads by id are batched into one `id = ANY($1)` query (domain::batch).
# Uses a scratch database and a private redis-server; leaves nothing behind.
#   Usage: bench/villas.sh            TERM_=sunset DURATION=15 VILLAS=100000
set -euo pipefail
[ -n "${BENCH_DEBUG:-}" ] && set -x
cd "$(dirname "$0")/.."
source scripts/services.sh
ensure_postgres
command -v wrk >/dev/null || apt_install wrk
command -v pgbench >/dev/null || apt_install postgresql

DURATION=${DURATION:-15}
VILLAS=${VILLAS:-100000}
SEARCH=${SEARCH:-sunset}
echo "building release binaries..."
cargo build --release -p api --bins -q

work=$(mktemp -d)
db="villa_bench_$$"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
redis_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
pg_base=${PG_ADMIN_URL%/*}
export APP_ENV=development DEV_DIR="$work/dev" PORT=$port RUST_LOG=warn LOG_FORMAT=json \
  DATABASE_URL="$pg_base/$db" REDIS_URL="redis://127.0.0.1:$redis_port" \
  STORAGE_LOCAL_DIR="$work/storage"
# The API's pool sized by the PostgreSQL wiki's rule, 2 x the database machine's cores (here the
# same machine): more backends than cores only queue inside Postgres. DB_MAX_CONNECTIONS=20 to
# compare with the default.
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

echo "loading $VILLAS villas..."
# Names from 40 words x 2,500 numbers, 24 cities in 8 countries: a word matches 1 villa in 40.
psql "$DATABASE_URL" -q <<SQL
INSERT INTO villas (id, villa_code, villa_name, city, country, bedrooms, bathrooms, max_guests,
                    property_type, villa_style, status, is_active, created_at)
SELECT gen_random_uuid(), 'BV-' || lpad(i::text, 6, '0'),
       'Villa ' || (ARRAY['Sunset','Azure','Coral','Lotus','Frangipani','Bamboo','Jasmine','Teak',
         'Mango','Orchid','Banyan','Lagoon','Reef','Palm','Monsoon','Saffron','Ivory','Jade','Amber',
         'Cinnamon','Hibiscus','Papaya','Tamarind','Coconut','Pandan','Ginger','Nutmeg','Vanilla',
         'Lime','Basil','Cedar','Willow','Pebble','Driftwood','Seashell','Tide','Breeze','Horizon',
         'Serenity','Harmony'])[1 + i % 40] || ' ' || (i / 40),
       (ARRAY['Ubud','Canggu','Seminyak','Uluwatu','Phuket','Koh Samui','Krabi','Hua Hin','Hoi An',
         'Da Nang','Nha Trang','Phu Quoc','Langkawi','Penang','Boracay','Palawan','Siargao','Galle',
         'Bentota','Goa','Kerala','Maldives','Lombok','Sumba'])[1 + i % 24],
       (ARRAY['Indonesia','Thailand','Vietnam','Malaysia','Philippines','Sri Lanka','India','Maldives'])[1 + i % 8],
       1 + i % 8, 1 + i % 6, 2 + i % 14, 'VILLA', 'MODERN',
       CASE WHEN i % 5 = 0 THEN 'DRAFT' ELSE 'APPROVED' END, i % 5 <> 0,
       now() - i * interval '1 minute'
FROM generate_series(1, $VILLAS) i;
VACUUM ANALYZE villas;
SQL
psql "$DATABASE_URL" -tAc "SELECT id FROM villas ORDER BY random() LIMIT 10000" >"$work/ids.txt"
token=$(./target/release/villa-api mint-token --role viewer)
base="http://127.0.0.1:$port"
matches=$(curl -sf -H "Authorization: Bearer $token" "$base/management/villas?search=$SEARCH&limit=20" \
  | python3 -c 'import json,sys; b=json.load(sys.stdin); print(b["pagination"]["total"], len(b["data"]))')
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB; PostgreSQL $(psql "$DATABASE_URL" -tAc 'SHOW server_version'); villas: $(psql "$DATABASE_URL" -tAc 'SELECT count(*) FROM villas'); API pool: $DB_MAX_CONNECTIONS connections"
echo "search=$SEARCH matches (total, page): $matches"
echo "plan of the page query: $(psql "$DATABASE_URL" -tAc "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) SELECT id FROM villas WHERE search_text LIKE '%$SEARCH%' ORDER BY created_at DESC, id DESC LIMIT 20" | tr -s ' ' | paste -sd' ' | cut -c1-300)"

# wrk: latency in ms from its --latency table ("99%  12.34ms" / "1.02s" / "850.00us").
ms() { awk -v v="$1" 'BEGIN{ if (v ~ /us$/) {sub(/us$/,"",v); print v/1000} else if (v ~ /ms$/) {sub(/ms$/,"",v); print v+0} else if (v ~ /s$/) {sub(/s$/,"",v); print v*1000} else print v }'; }
run_wrk() { # url [script] -> rps p50 p99 errors
  local url=$1 script=${2:-}
  local args=(-t2 -c32 -H "Authorization: Bearer $token")
  [ -n "$script" ] && args+=(-s "$script")
  wrk "${args[@]}" -d3s "$url" >/dev/null   # warm-up
  wrk "${args[@]}" -d"${DURATION}s" --latency "$url" >"$work/wrk.txt"
  echo "$(sed -n 's/^Requests\/sec:[[:space:]]*\([0-9.]*\)/\1/p' "$work/wrk.txt") \
$(ms "$(awk '$1=="50%"{print $2}' "$work/wrk.txt")") $(ms "$(awk '$1=="99%"{print $2}' "$work/wrk.txt")") \
$(grep -cE "Non-2xx|Socket errors" "$work/wrk.txt" || true)"
}

echo
echo "== 1. search: GET /management/villas?search=$SEARCH&limit=20"
read -r s_rps s_p50 s_p99 s_err < <(run_wrk "$base/management/villas?search=$SEARCH&limit=20")
s_tps=$(pgbench -n -M prepared -f bench/villa_search_page.pgbench -D term="$SEARCH" -c 32 -j 2 -T "$DURATION" "$DATABASE_URL" 2>/dev/null | sed -n 's/^tps = \([0-9.]*\).*/\1/p')
c_tps=$(pgbench -n -M prepared -f bench/villa_search.pgbench -D term="$SEARCH" -c 32 -j 2 -T "$DURATION" "$DATABASE_URL" 2>/dev/null | sed -n 's/^tps = \([0-9.]*\).*/\1/p')
printf 'http.search_rps               %.0f   p50 %.2f ms  p99 %.2f ms  (wrk, 32 connections; target p99 < 20 ms)%s\n' "$s_rps" "$s_p50" "$s_p99" "$( [ "$s_err" != 0 ] && echo '  ERRORS in wrk output')"
printf 'pgbench.search_sql_tps        %.0f   (the route'"'"'s per-request SQL: version + page, -M prepared -c 32)\n' "$s_tps"
printf 'pgbench.search_uncached_tps   %.0f   (page + count, what it would run without its totals cache)\n' "$c_tps"
printf 'ratio.search_http_vs_sql      %.2f   (target >= 0.5)\n' "$(awk -v a="$s_rps" -v b="$s_tps" 'BEGIN{print a/b}')"
cat >"$work/terms.lua" <<'LUA'
local terms = {"sunset","azure","coral","lotus","frangipani","bamboo","jasmine","teak","mango",
  "orchid","banyan","lagoon","reef","palm","monsoon","saffron","ivory","jade","amber","cinnamon",
  "hibiscus","papaya","tamarind","coconut","pandan","ginger","nutmeg","vanilla","lime","basil",
  "cedar","willow","pebble","driftwood","seashell","tide","breeze","horizon","serenity","harmony"}
local i = 0
request = function()
  i = i % #terms + 1
  return wrk.format("GET", "/management/villas?search=" .. terms[i] .. "&limit=20")
end
LUA
read -r v_rps v_p50 v_p99 v_err < <(run_wrk "$base" "$work/terms.lua")
printf 'http.search_40_terms_rps      %.0f   p50 %.2f ms  p99 %.2f ms  (each connection cycling through 40 terms; no target)%s\n' "$v_rps" "$v_p50" "$v_p99" "$( [ "$v_err" != 0 ] && echo '  ERRORS in wrk output')"

echo
echo "== 2. by id: GET /management/villas/{id}, 10,000 random ids"
cat >"$work/ids.lua" <<LUA
local ids = {}
for line in io.lines("$work/ids.txt") do if #line > 0 then ids[#ids + 1] = line end end
math.randomseed(os.time())
request = function()
  return wrk.format("GET", "/management/villas/" .. ids[math.random(#ids)])
end
LUA
read -r g_rps g_p50 g_p99 g_err < <(run_wrk "$base" "$work/ids.lua")
pgbench -i -q -s 10 "$DATABASE_URL" >/dev/null 2>&1
g_tps=$(pgbench -S -M prepared -c 32 -j 2 -T "$DURATION" "$DATABASE_URL" 2>/dev/null | sed -n 's/^tps = \([0-9.]*\).*/\1/p')
printf 'http.get_villa_rps            %.0f   p50 %.2f ms  p99 %.2f ms  (wrk, 32 connections)%s\n' "$g_rps" "$g_p50" "$g_p99" "$( [ "$g_err" != 0 ] && echo '  ERRORS in wrk output')"
printf 'pgbench.select_only_tps       %.0f   (pgbench -S -M prepared -c 32)\n' "$g_tps"
printf 'ratio.get_http_vs_pgbench_S   %.2f   (target >= 0.5)\n' "$(awk -v a="$g_rps" -v b="$g_tps" 'BEGIN{print a/b}')"
