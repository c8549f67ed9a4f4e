#!/usr/bin/env bash
# make test-latest: install the newest versions pyproject.toml allows into a throw-away venv, list
# where they differ from uv.lock, and run the SQL-guard and sandbox suites on them. The sandbox
# runtime is built from those versions too, in its own folder, so the locked one is left alone.
# Exit status: that of pytest (0 = the upgrade would pass these suites). Needs .venv (make setup).
set -euo pipefail
cd "$(dirname "$0")/.."
UV=${UV:-.tools/bin/uv}
PYTHON=${PYTHON:-python3}
work=$(mktemp -d /tmp/geoask-latest.XXXXXX)
trap 'rm -rf "$work"' EXIT

"$UV" venv --quiet --python "$PYTHON" "$work/venv"
"$UV" pip install --quiet --python "$work/venv/bin/python" --resolution highest -e '.[dev]'

"$UV" pip freeze --python .venv/bin/python --exclude-editable >"$work/locked.txt"
"$UV" pip freeze --python "$work/venv/bin/python" --exclude-editable >"$work/latest.txt"
echo "== versions that differ from the locked .venv (locked -> newest allowed) =="
"$work/venv/bin/python" - "$work/locked.txt" "$work/latest.txt" <<'PY'
import sys
from packaging.utils import canonicalize_name

def pins(path):
    lines = open(path, encoding="utf-8").read().split()
    return {canonicalize_name(n): v for n, _, v in (line.partition("==") for line in lines)}

locked, latest = pins(sys.argv[1]), pins(sys.argv[2])
rows = [(n, locked.get(n, "-"), latest.get(n, "-")) for n in sorted(locked.keys() | latest.keys())
        if locked.get(n) != latest.get(n)]
for name, old, new in rows:
    print(f"  {name:28} {old} -> {new}")
print(f"  ({len(rows)} of {len(latest)} packages differ)")
PY

# The sandbox runtime must be readable by the sandbox's uid: keep it under geoask's service home.
home=$("$work/venv/bin/python" -c 'from geoask.settings import Settings; print(Settings().service_home)')
export GEOASK_SANDBOX_RUNTIME_DIR="$home/sandbox-runtime-latest"
echo "== guard and sandbox suites on the newest versions =="
"$work/venv/bin/python" -m pytest -q -p no:cacheprovider tests/sql tests/sandbox
