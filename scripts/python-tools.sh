# Sourced by the scripts that run Python tools from PyPI (scripts/fuzz: schemathesis;
# scripts/openapi-check: openapi-spec-validator and openapi-python-client). Each tool set lives
# in its own virtual environment under PYTHON_VENVS (default ~/.cache), made on first use and
# brought to the requested versions when they change, so a pin bumped in a script takes effect
# on the next run without anyone clearing a cache.

PYTHON_VENVS=${PYTHON_VENVS:-${XDG_CACHE_HOME:-$HOME/.cache}}

# python_venv DIR REQUIREMENT...: prints DIR once it is a virtual environment holding the
# requirements (pip specifiers). Progress goes to stderr, so `venv=$(python_venv ...)` reads
# the path alone; a failed install returns non-zero and is retried on the next run.
python_venv() {
  local venv=$1
  shift
  local wanted="$*"
  if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.villa-requirements" 2>/dev/null)" != "$wanted" ]; then
    echo "installing $wanted into $venv..." >&2
    if ! python3 -m venv "$venv" >&2 ||
      ! "$venv/bin/pip" install -q --disable-pip-version-check "$@" >&2 ||
      ! printf '%s\n' "$wanted" >"$venv/.villa-requirements"; then
      echo "could not install $wanted into $venv (python3 -m venv, then pip from PyPI)" >&2
      return 1
    fi
  fi
  printf '%s\n' "$venv"
}
