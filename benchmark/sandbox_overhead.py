"""Run: ``.venv/bin/python benchmark/sandbox_overhead.py [--runs 30]`` (root, runtime built).

Measures, in one run, the wall time of a trivial script that imports geopandas and prints the
output protocol, (a) through the sandbox (``BubblewrapSandbox.run``: run folder, bwrap,
limits, seccomp, protocol parsing, artifact scan and cleanup included) and (b) as plain
``python`` without isolation, using the same interpreter and libraries (the sandbox runtime's
``bin/python``) and the same environment variables (thread-pool sizes, MPLBACKEND), so the
difference is the isolation alone. Runs alternate (a, b, a, b, ...) so that drift in machine
load hits both equally. A second pair runs a script without imports, to show the fixed cost of
isolation alone. Prints p50/p95 and the targets of issue #4: isolation adds at most 100 ms at
p50, and the sandboxed total is at most 1.0 s at p50.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from geoask.settings import get_settings
from sandbox.bubblewrap import BubblewrapSandbox, sandbox_environment

EMPTY_SCRIPT = (
    "import json\n"
    "print(json.dumps({'status': 'success', 'summary': 'nothing', 'result': {}}))\n"
)
SCRIPT = (
    "import json\n"
    "import geopandas\n"
    "print(json.dumps({'status': 'success', 'summary': 'imported', "
    "'result': {'geopandas': geopandas.__version__}}))\n"
)


def percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile of ``values`` (``fraction`` in 0..1)."""
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def main() -> None:
    """Measure both variants interleaved and print the table and the verdicts."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="runs per variant (default 30)")
    args = parser.parse_args()

    settings = get_settings()
    sandbox = BubblewrapSandbox.from_settings(settings)
    python = settings.sandbox_runtime_path / "bin" / "python"
    with tempfile.TemporaryDirectory() as folder:
        script_path = Path(folder) / "trivial.py"
        script_path.write_text(SCRIPT)
        empty_path = Path(folder) / "empty.py"
        empty_path.write_text(EMPTY_SCRIPT)
        environment = sandbox_environment() | {"HOME": folder, "TMPDIR": folder,
                                               "MPLCONFIGDIR": folder}

        def sandboxed(source: str = SCRIPT) -> float:
            started = time.perf_counter()
            outcome = sandbox.run(source)
            elapsed = time.perf_counter() - started
            if outcome.status != "success":
                raise SystemExit(f"sandboxed run failed: {outcome.model_dump_json(indent=1)}")
            return elapsed

        def plain(path: Path = script_path) -> float:
            started = time.perf_counter()
            completed = subprocess.run(
                [str(python), "-I", str(path)], capture_output=True, text=True,
                check=True, env=environment,
            )
            elapsed = time.perf_counter() - started
            json.loads(completed.stdout.strip().splitlines()[-1])
            return elapsed

        for _ in range(2):  # warm the page cache for both
            sandboxed()
            plain()
        sandbox_times: list[float] = []
        plain_times: list[float] = []
        empty_sandbox_times: list[float] = []
        empty_plain_times: list[float] = []
        for _ in range(args.runs):
            sandbox_times.append(sandboxed())
            plain_times.append(plain())
            empty_sandbox_times.append(sandboxed(EMPTY_SCRIPT))
            empty_plain_times.append(plain(empty_path))

    rows = [
        ("sandboxed (bwrap)", sandbox_times), ("plain python", plain_times),
        ("empty, sandboxed", empty_sandbox_times), ("empty, plain", empty_plain_times),
    ]
    print(f"'import geopandas' and empty scripts, {args.runs} runs each, interleaved")
    print(f"{'variant':<20}{'p50 ms':>10}{'p95 ms':>10}{'mean ms':>10}{'min ms':>10}")
    for name, values in rows:
        print(f"{name:<20}{percentile(values, 0.5) * 1000:>10.1f}"
              f"{percentile(values, 0.95) * 1000:>10.1f}{statistics.mean(values) * 1000:>10.1f}"
              f"{min(values) * 1000:>10.1f}")
    overhead = (percentile(sandbox_times, 0.5) - percentile(plain_times, 0.5)) * 1000
    total = percentile(sandbox_times, 0.5)
    fixed = (percentile(empty_sandbox_times, 0.5) - percentile(empty_plain_times, 0.5)) * 1000
    print(f"fixed isolation cost at p50 (empty script): {fixed:.1f} ms")
    print(f"isolation overhead at p50: {overhead:.1f} ms (target <= 100 ms: "
          f"{'met' if overhead <= 100 else 'MISSED'})")
    print(f"sandboxed total at p50: {total:.3f} s (target <= 1.0 s: "
          f"{'met' if total <= 1.0 else 'MISSED'})")


if __name__ == "__main__":
    main()
