# Sourced by scripts/run, scripts/test and the benches: makes sure PostgreSQL and Redis answer on
# 127.0.0.1:5432 and 127.0.0.1:6379, installing them from Debian's packages and starting them
# when they are absent, and (for the scripts that run Python tools) that python3 can make
# virtual environments. Nothing here runs when all of that is already so.

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    echo "need root (or sudo) to: $*" >&2; return 1; fi
}

apt_updated=0
apt_install() {
  if [ "$apt_updated" = 0 ]; then as_root apt-get update -qq; apt_updated=1; fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

wait_for() { # what, command...
  local what=$1; shift
  for _ in $(seq 1 100); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  echo "$what did not come up" >&2; return 1
}

ensure_postgres() {
  if command -v pg_isready >/dev/null && pg_isready -q -h 127.0.0.1 -p 5432; then return 0; fi
  local installed=0
  if ! command -v pg_ctlcluster >/dev/null; then
    echo "installing PostgreSQL from Debian's packages..."
    apt_install postgresql postgresql-client
    installed=1
  fi
  local version
  version=$(ls /etc/postgresql | sort -V | tail -n 1)
  echo "starting PostgreSQL $version..."
  as_root pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
  wait_for PostgreSQL pg_isready -q -h 127.0.0.1 -p 5432
  if [ "$installed" = 1 ]; then
    # A fresh Debian cluster asks for a password over TCP: give postgres the one our URLs use.
    as_root su postgres -c "psql -q -c \"ALTER USER postgres PASSWORD 'postgres'\""
  fi
}

ensure_redis() {
  if command -v redis-cli >/dev/null && redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then return 0; fi
  if ! command -v redis-server >/dev/null; then
    echo "installing Redis from Debian's packages..."
    apt_install redis-server redis-tools
  fi
  echo "starting Redis..."
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no \
    --logfile /tmp/villa-redis.log
  wait_for Redis redis-cli -h 127.0.0.1 -p 6379 ping
}

# python3, able to make the virtual environments of scripts/python-tools.sh. Debian's python3
# leaves venv's ensurepip to the python3-venv package, without which `python3 -m venv` fails
# half-way: its absence shows as ensurepip failing to import.
ensure_python_venv() {
  if command -v python3 >/dev/null && python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then return 0; fi
  echo "installing python3 with venv and pip from Debian's packages..."
  apt_install python3 python3-venv python3-pip
}

# The postgres superuser URL; the password is ignored where the server trusts local TCP.
PG_ADMIN_URL=${PG_ADMIN_URL:-postgres://postgres:postgres@127.0.0.1:5432/postgres}
