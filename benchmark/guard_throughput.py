"""Measure SQL guard throughput (statements per second) over the fixture statements.

Run: ``.venv/bin/python benchmark/guard_throughput.py [--rounds 5]``

Every allowed and rejected fixture statement is checked under each policy its file names;
prints statements/second for the whole set and for each half, plus per-statement latency.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from geoask.sql import GuardContext, find_violation
from geoask.sql.casefile import load_case_folder

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "sql"


def _workload(kind: str) -> list[tuple[str, GuardContext]]:
    return [
        (case.sql, GuardContext(policy=policy, contract=case.contract))
        for case in load_case_folder(FIXTURES / kind)
        for policy in case.policies
    ]


def _measure(work: list[tuple[str, GuardContext]], rounds: int) -> tuple[float, list[float]]:
    latencies: list[float] = []
    started = time.perf_counter()
    for _ in range(rounds):
        for sql, context in work:
            t0 = time.perf_counter()
            find_violation(sql, context)
            latencies.append(time.perf_counter() - t0)
    elapsed = time.perf_counter() - started
    return len(latencies) / elapsed, latencies


def main() -> None:
    """Parse options, run the measurement and print one line per statement set."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="passes over the fixture set")
    args = parser.parse_args()
    allowed, rejected = _workload("allowed"), _workload("rejected")
    _measure(allowed + rejected, 1)  # warm-up: imports, sqlglot caches
    for label, work in (("all", allowed + rejected), ("allowed", allowed),
                        ("rejected", rejected)):
        rate, latencies = _measure(work, args.rounds)
        latencies.sort()
        p50 = statistics.median(latencies) * 1e3
        p99 = latencies[int(len(latencies) * 0.99) - 1] * 1e3
        print(
            f"{label:9s} {len(work):4d} statements x {args.rounds} rounds: "
            f"{rate:8.0f} statements/s  (p50 {p50:.2f} ms, p99 {p99:.2f} ms)"
        )


if __name__ == "__main__":
    main()
