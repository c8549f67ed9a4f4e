"""Peak memory of ``geoask sql run`` on the two raster attacks of issue 31 (target < 500 MB).

Run: ``.venv/bin/python benchmark/raster_attacks.py [--code DIR] [--limit-gib 3]``
(the embedded PostGIS up).

The attacks are the fixtures in ``tests/fixtures/raster_attacks/``: a 378-byte GeoTIFF that
declares 60,000 x 60,000 pixels (``geotiff_60000.sql``) and two 1 x 1 GeoTIFF tiles 100,000
pixels apart in one ``UNION ALL`` (``far_tiles.sql``). Each runs as ``python -m geoask sql run``
in a child process under an address-space limit (``--limit-gib``, so that an unprotected
checkout fails its allocation instead of taking the machine's memory); the child's peak
resident set (``ru_maxrss``), exit code, wall time and the last line it printed are shown.
``--code DIR`` runs another checkout's code (e.g. ``main`` before the caps) on the same
fixtures.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ATTACKS = ("geotiff_60000", "far_tiles")


def run_attack(name: str, code: Path, limit_bytes: int) -> tuple[float, int, float, str]:
    """``(peak RSS MiB, exit code, seconds, last line)`` of one attack in a child process."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))

    fixture = ROOT / "tests" / "fixtures" / "raster_attacks" / f"{name}.sql"
    with tempfile.TemporaryDirectory(prefix="geoask-raster-attack-") as out:
        command = [sys.executable, "-m", "geoask", "sql", "run", str(fixture), "--out", out,
                   "--name", name]
        begin = time.perf_counter()
        child = subprocess.Popen(command, cwd=code, env={**os.environ, "PYTHONPATH": str(code)},
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 preexec_fn=limit)
        output = child.stdout.read() if child.stdout else b""
        _, status, usage = os.wait4(child.pid, 0)  # this child's own peak, not all children's
        seconds = time.perf_counter() - begin
    lines = [line for line in output.decode(errors="replace").splitlines() if line.strip()]
    code = os.waitstatus_to_exitcode(status)
    return usage.ru_maxrss / 1024, code, seconds, (lines or [""])[-1][:160]


def main() -> None:
    """Run both attacks and print a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--code", type=Path, default=ROOT, help="checkout whose code runs")
    parser.add_argument("--limit-gib", type=float, default=3.0,
                        help="address-space limit of each child (GiB)")
    args = parser.parse_args()
    limit = int(args.limit_gib * 2**30)
    print(f"code: {args.code}; address-space limit {args.limit_gib} GiB")
    print("| attack | peak RSS (MiB) | exit | seconds | last line |")
    print("|---|---:|---:|---:|---|")
    for name in ATTACKS:
        rss, code, seconds, last = run_attack(name, args.code, limit)
        print(f"| {name} | {rss:,.0f} | {code} | {seconds:.1f} | {last} |")


if __name__ == "__main__":
    main()
