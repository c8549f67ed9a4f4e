"""Seconds per test file of a pytest run, read from its JUnit XML report.

Usage: ``.venv/bin/pytest ... --junitxml=report.xml`` then
``.venv/bin/python benchmark/suite_times.py report.xml [other.xml]``. Prints each test file's
seconds (setup, call and teardown of its tests, session fixtures included in the first test
that needs them), slowest first, and the total; with a second report, the two side by side
and their difference (a before/after comparison of the same files).
"""

from __future__ import annotations

import argparse
import xml.etree.ElementTree as ET
from pathlib import Path


def file_seconds(report: Path) -> dict[str, float]:
    """Seconds per test file (``tests/.../test_x.py``) of the JUnit XML ``report``."""
    seconds: dict[str, float] = {}
    for case in ET.parse(report).iter("testcase"):
        name = case.get("classname", "").replace(".", "/") + ".py"
        seconds[name] = seconds.get(name, 0.0) + float(case.get("time", "0"))
    return seconds


def table(before: dict[str, float], after: dict[str, float] | None) -> list[str]:
    """Lines of seconds per file, slowest (before) first, then the total."""
    files = sorted(before.keys() | (after or {}).keys(), key=lambda f: -before.get(f, 0.0))
    if after is None:
        lines = [f"{before[f]:8.1f} s  {f}" for f in files]
        return [*lines, f"{sum(before.values()):8.1f} s  total"]
    lines = [f"{before.get(f, 0.0):8.1f} {after.get(f, 0.0):8.1f} "
             f"{after.get(f, 0.0) - before.get(f, 0.0):+8.1f}  {f}" for f in files]
    total_before, total_after = sum(before.values()), sum(after.values())
    return [f"{'before':>8} {'after':>8} {'change':>8}  file (s)", *lines,
            f"{total_before:8.1f} {total_after:8.1f} {total_after - total_before:+8.1f}  total"]


def main() -> None:
    """Print the table of one report, or of two side by side."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path, help="JUnit XML report (pytest --junitxml)")
    parser.add_argument("other", type=Path, nargs="?", help="a second report to compare")
    arguments = parser.parse_args()
    after = file_seconds(arguments.other) if arguments.other else None
    print("\n".join(table(file_seconds(arguments.report), after)))


if __name__ == "__main__":
    main()
