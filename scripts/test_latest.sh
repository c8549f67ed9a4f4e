#!/usr/bin/env bash
# make test-latest: install the newest versions pyproject.toml allows into a throw-away venv, list
# where they differ from uv.lock, and run the SQL-guard and sandbox suites on them. The sandbox
# runtime is built from those versions too, in its own folder, so the locked one is left alone.
# Exit status: that of pytest (0 = the upgrade would pass these suites).
set -euo pipefail
cd "$(dirname "$0")/.."
UV=${UV:-.tools/bin/uv}
PYTHON=${PYTHON:-python3}
work=$(mktemp -d /tmp/geoask-latest.XXXXXX)
trap 'rm -rf "$work"' EXIT

"$UV" venv --quiet --python "$PYTHON" "$work/venv"
"$UV" pip install --quiet --python "$work/venv/bin/python" --resolution highest -e '.[dev]'

"$UV" export --frozen --extra dev --no-hashes --no-emit-project --no-header --no-annotate \
  | sed -E 's/ *;.*$//' | grep -E '^[A-Za-z0-9_.-]+==' | sort >"$work/locked.txt"
"$UV" pip freeze --python "$work/venv/bin/python" --exclude-editable | sort >"$work/latest.txt"
echo "== versions that differ from uv.lock (locked -> newest allowed) =="
join -t= -j1 <(sed 's/==/=/' "$work/locked.txt") <(sed 's/==/=/' "$work/latest.txt") \
  | awk -F= '$2 != $3 { printf "  %-28s %s -> %s\n", $1, $2, $3; n++ } END { if (!n) print "  (none)" }'

# The sandbox runtime must be readable by the sandbox's uid: keep it under geoask's service home.
home=$("$work/venv/bin/python" -c 'from geoask.settings import Settings; print(Settings().service_home)')
export GEOASK_SANDBOX_RUNTIME_DIR="$home/sandbox-runtime-latest"
echo "== guard and sandbox suites on the newest versions =="
"$work/venv/bin/python" -m pytest -q -p no:cacheprovider tests/sql tests/sandbox
