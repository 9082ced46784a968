# Sourced by the benchmarks: the platform on a scratch database and a private redis-server, with
# everything undone when the script exits.
#   bench_platform NAME WORKERS   exports APP_ENV, PORT, DATABASE_URL, REDIS_URL, ... and sets
#                                 `work` (a temporary folder) and `port`; starts redis-server,
#                                 villa-api (which applies the migrations) and WORKERS
#                                 worker-system processes from target/release.

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

bench_pids=()
bench_db=
bench_cleanup() {
  for pid in "${bench_pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -n "$bench_db" ] && psql "$PG_ADMIN_URL" -qc "DROP DATABASE IF EXISTS \"$bench_db\" WITH (FORCE)" >/dev/null 2>&1
  rm -rf "$work"
}

bench_platform() { # name workers
  work=$(mktemp -d)
  bench_db="villa_${1}_$$"
  port=$(free_port)
  local redis_port
  redis_port=$(free_port)
  export APP_ENV=development DEV_DIR="$work/dev" PORT=$port RUST_LOG=warn LOG_FORMAT=json \
    DATABASE_URL="${PG_ADMIN_URL%/*}/$bench_db" REDIS_URL="redis://127.0.0.1:$redis_port" \
    STORAGE_LOCAL_DIR="$work/storage" DB_MAX_CONNECTIONS=${DB_MAX_CONNECTIONS:-20}
  trap bench_cleanup EXIT
  psql "$PG_ADMIN_URL" -qc "CREATE DATABASE \"$bench_db\""
  redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no >"$work/redis.log" 2>&1 &
  bench_pids+=($!)
  ./target/release/villa-api >"$work/api.log" 2>&1 &
  bench_pids+=($!)
  for _ in $(seq 1 150); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.2; done
  local i
  for i in $(seq 1 "$2"); do
    ./target/release/worker-system >"$work/worker-$i.log" 2>&1 &
    bench_pids+=($!)
  done
  sleep 1
}
