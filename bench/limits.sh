#!/usr/bin/env bash
# What input far larger than any valid one costs the API (issue 27), on the release build:
#   1. POST /reporting/export (a read: a viewer may send it) with {"type": "reservations",
#      "listingIds": [0,0,...]} of 6 MB and of 40 MB (the API's whole-body limit): the status,
#      the time to the answer, the answer's size, and the API's resident memory before and at
#      its peak (VmHWM) after each. Targets: 413 for both, each under 1 s, the API's peak under
#      100 MB. Beside them, the largest body a JSON route reads: 1 MiB of 500,000 members, a
#      400 counted before its members are read (target: under 1 s, an answer under 1 KB).
#   2. Refused-then-valid pairs on one keep-alive connection (Python requests, as a generated
#      client would): PAIRS (400) of each refusal made before the body is read (no token 401,
#      a viewer's schedule 403, a viewer's multipart field note 403), each followed by a valid
#      GET. Target: no request finds the connection closed without an answer.
# Uses a scratch database and a private redis-server; leaves nothing behind. Exits non-zero when
# a target is missed.   Usage: bench/limits.sh     PAIRS=400
set -euo pipefail
[ -n "${BENCH_DEBUG:-}" ] && set -x
cd "$(dirname "$0")/.."
source scripts/services.sh
source scripts/python-tools.sh
ensure_postgres
command -v redis-server >/dev/null || apt_install redis-server
ensure_python_venv
PAIRS=${PAIRS:-400}
venv=$(python_venv "${LIMITS_VENV:-$PYTHON_VENVS/villa-limits-venv}" 'requests>=2.31,<3')

echo "building release binaries..."
cargo build --release -p api --bins -q

work=$(mktemp -d)
db="villa_limits_bench_$$"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port=$(free_port)
redis_port=$(free_port)
pg_base=${PG_ADMIN_URL%/*}
export APP_ENV=development DEV_DIR="$work/dev" PORT=$port RUST_LOG=warn LOG_FORMAT=json \
  DATABASE_URL="$pg_base/$db" REDIS_URL="redis://127.0.0.1:$redis_port" \
  STORAGE_LOCAL_DIR="$work/storage"
api_pid=
redis_pid=
cleanup() {
  for pid in $api_pid $redis_pid; do kill -TERM "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  psql "$PG_ADMIN_URL" -qc "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no >/dev/null &
redis_pid=$!
psql "$PG_ADMIN_URL" -qc "CREATE DATABASE \"$db\""
./target/release/villa-api >>"$work/api.log" 2>&1 &
api_pid=$!
wait_for "villa-api" curl -sf "http://127.0.0.1:$port/healthz"
viewer=$(./target/release/villa-api mint-token --role viewer)
admin=$(./target/release/villa-api mint-token --role admin)

"$venv/bin/python" - "$port" "$api_pid" "$viewer" "$admin" "$PAIRS" <<'PY'
import json, sys, time, uuid
import requests

port, pid, viewer, admin, pairs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
base = f"http://127.0.0.1:{port}"
failed = []

def memory():
    fields = {}
    for line in open(f"/proc/{pid}/status"):
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0]) * 1024
    return fields["VmRSS"], fields["VmHWM"]

def zeros(size):
    head, tail = b'{"type":"reservations","listingIds":[', b"0]}"
    n = (size - len(head) - len(tail)) // 2
    return head + b"0," * n + tail

print("== bodies far larger than any valid one: POST /reporting/export as a viewer")
print(f"{'body':>12} {'status':>6} {'seconds':>8} {'answer B':>9} {'RSS before MB':>14} {'peak after MB':>14}")
for label, body, want in [("1 MiB", zeros(1024 * 1024 - 16), 400), ("6 MB", zeros(6_000_000), 413),
                          ("40 MB", zeros(40 * 1024 * 1024), 413)]:
    before, _ = memory()
    started = time.monotonic()
    res = requests.post(f"{base}/reporting/export", data=body,
                        headers={"Authorization": f"Bearer {viewer}", "Content-Type": "application/json"})
    took = time.monotonic() - started
    _, peak = memory()
    print(f"{label:>12} {res.status_code:>6} {took:>8.3f} {len(res.content):>9} {before / 1e6:>14.1f} {peak / 1e6:>14.1f}")
    if res.status_code != want:
        failed.append(f"{label}: {res.status_code}, expected {want}: {res.text[:200]}")
    if took >= 1:
        failed.append(f"{label}: {took:.2f} s")
    if len(res.content) >= 1000:
        failed.append(f"{label}: an answer of {len(res.content)} bytes")
    if peak >= 100e6:
        failed.append(f"{label}: the API's peak is {peak / 1e6:.0f} MB")

print(f"== refused-then-valid pairs on one keep-alive connection ({pairs} each)")
order = json.dumps({"villaId": str(uuid.UUID(int=0)), "title": "Leaking tap", "priority": "HIGH",
                    "description": "The guest bathroom tap drips all night long. " * 4})
session = requests.Session()
cases = {
    "401 no token": lambda: session.post(f"{base}/maintenance/work-orders", data=order,
                                          headers={"Content-Type": "application/json"}),
    "403 schedule": lambda: session.post(f"{base}/maintenance/pmp/schedules", data=order,
                                          headers={"Content-Type": "application/json",
                                                   "Authorization": f"Bearer {viewer}"}),
    "403 multipart": lambda: session.post(f"{base}/maintenance/field-notes",
                                           files={"file": ("note.txt", b"The pump hums. " * 200)},
                                           data={"workOrderId": str(uuid.UUID(int=0))},
                                           headers={"Authorization": f"Bearer {viewer}"}),
}
for name, refused in cases.items():
    lost = 0
    for _ in range(pairs):
        try:
            refused()
        except requests.ConnectionError:
            lost += 1
            continue
        try:
            session.get(f"{base}/maintenance/work-orders", headers={"Authorization": f"Bearer {admin}"})
        except requests.ConnectionError:
            lost += 1
    print(f"  {name}: {lost} of {2 * pairs} requests found the connection closed without an answer")
    if lost:
        failed.append(f"{name}: {lost} lost")

if failed:
    print("FAILED:\n  " + "\n  ".join(failed))
    sys.exit(1)
print("every target met")
PY
