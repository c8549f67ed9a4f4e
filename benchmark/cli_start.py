"""Wall time of the geoask CLI's start: ``--help``, ``sql check`` of SELECT 1, ``db status``.

Usage: ``.venv/bin/python benchmark/cli_start.py [--runs N]`` (default 5). Each command runs
N times as a fresh process (the console script a person types, interpreter start-up and imports
included) and the median, min and max wall time in seconds are printed. ``db status`` needs the
database to be up (``geoask db up``); its exit code is not checked.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

GEOASK = str(Path(sys.executable).parent / "geoask")
COMMANDS: dict[str, tuple[list[str], str | None]] = {
    "geoask --help": ([GEOASK, "--help"], None),
    "geoask sql check (SELECT 1)": ([GEOASK, "sql", "check", "-"], "SELECT 1\n"),
    "geoask db status": ([GEOASK, "db", "status"], None),
}


def timed(argv: list[str], stdin: str | None) -> float:
    """Wall time (s) of one run of ``argv`` with ``stdin`` as its input."""
    begin = time.perf_counter()
    subprocess.run(argv, input=stdin, text=True, capture_output=True, check=False)
    return time.perf_counter() - begin


def main() -> None:
    """Print one line per command: median (min-max) wall time over ``--runs`` runs."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per command (default 5)")
    runs = parser.parse_args().runs
    timed([GEOASK, "--help"], None)  # warm the file cache once
    print(f"{'command':<30}{'median s':>10}{'min':>8}{'max':>8}   ({runs} runs each)")
    for name, (argv, stdin) in COMMANDS.items():
        times = [timed(argv, stdin) for _ in range(runs)]
        print(f"{name:<30}{statistics.median(times):>10.2f}{min(times):>8.2f}{max(times):>8.2f}")


if __name__ == "__main__":
    main()
