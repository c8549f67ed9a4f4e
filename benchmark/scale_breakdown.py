"""Run ``python benchmark/scale_breakdown.py [--size 2000000] [--cases scale-001 ...]``.

Where FULL's wall time goes per scale question (the reference program: SQL screen, then the
exact refine in the sandbox), printed per question and as medians, next to POSTGIS's whole
time. Phases, in seconds of wall time:

- ``guard``, ``sql``, ``export``: the SQL step (the guard's check, the read-only execution
  and fetch - for a streamed result its first batch -, the rest: export and later batches);
- ``start``: from handing the script to the sandbox to the script's first line: for a fresh
  run the run folder, bwrap's namespaces and mounts, the interpreter, the bootstrap (seccomp);
  for a sandbox started ahead (the default now) only what of its start and preloaded imports
  was still running at the hand-over, plus the script and inputs written into its folder - from
  the third question on one taken ready from :mod:`sandbox.ready` (``GEOASK_SANDBOX_READY``);
- ``imports``: the analysis libraries the script imports (geopandas, shapely, pyproj, numpy,
  pandas, pyarrow - timed by a prelude the benchmark adds to the script);
- ``script``: the script's own work after its imports;
- ``exit``: from the script's end to the host seeing the process gone;
- ``scan``: the outcome (protocol parsing, artifact scan and copy);
- ``teardown``: killing leftovers, unmounting, removing the run folder;
- ``other``: the rest of the program runner's time (saving results, reading records).

Clocks: the sandbox shares the host's realtime clock (``time.time``), so the prelude's and the
marker's times line up with the host's. Nothing here is a timed test; it prints measurements.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import geoask.cases.runner as runner_module
import geoask.sql.step as step_module
from geoask.base import heap
from geoask.cases.loader import load_cases, run_target
from geoask.cases.runner import ProgramRunner
from geoask.run.composition import program_runner, settings_for_target
from geoask.settings import get_settings
from geoask.sql.step import StatementRun
from sandbox.bubblewrap import BubblewrapSandbox
from sandbox.host import Finished
from sandbox.models import SandboxLimits, SandboxOutcome, StartedSandbox

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import case_file, database_name, ensure_database  # beside this script

PHASES = ("guard", "sql", "export", "start", "imports", "script", "exit", "scan", "teardown",
          "other")
MARK = "@@scale-breakdown@@"
_RUN_STATEMENT = runner_module.run_statement
_CHECK_SQL = step_module.check_sql
PRELUDE = (
    "import time as _bd_time\n"
    "_bd_t0 = _bd_time.time()\n"
    "import geopandas, shapely, pyproj, numpy, pandas, pyarrow  # noqa\n"
    "_bd_t1 = _bd_time.time()\n"
)
EPILOGUE = (
    "\nimport sys as _bd_sys\n"
    f"print('{MARK}', _bd_t0, _bd_t1, _bd_time.time(), file=_bd_sys.stderr)\n"
)


@dataclass
class Phases:
    """Seconds per phase of one FULL run."""

    seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(PHASES, 0.0))

    def add(self, phase: str, value: float) -> None:
        """Add ``value`` seconds to ``phase``."""
        self.seconds[phase] += max(0.0, value)


class TimedSandbox(BubblewrapSandbox):
    """The real sandbox, with each phase of a run timed into :attr:`phases`."""

    phases: Phases
    marks: dict[str, float]

    def run(self, script: str, inputs: Sequence[Path] = (),
            limits: SandboxLimits | None = None) -> SandboxOutcome:
        """A fresh run of the script with the timing prelude and epilogue."""
        self.marks = {"handover": time.time()}
        outcome = super().run(PRELUDE + script + EPILOGUE, inputs, limits)
        self.record(outcome)
        return outcome

    def start(self, limits: SandboxLimits | None = None) -> TimedStarted:  # type: ignore[override]
        """A run started ahead, timed from its hand-over."""
        return TimedStarted(self, super().start(limits))

    def read_outcome(self, run_dir: Path, run_id: str, finished: Finished,
                     limits: SandboxLimits) -> SandboxOutcome:
        """The outcome, its reading timed."""
        self.marks["exited"] = time.time()
        outcome = super().read_outcome(run_dir, run_id, finished, limits)
        self.marks["scanned"] = time.time()
        return outcome

    def record(self, outcome: SandboxOutcome) -> None:
        """Add the run's phases (from the marks and the script's own times)."""
        ended, marks = time.time(), self.marks
        line = next((row for row in outcome.stderr.text.splitlines() if row.startswith(MARK)),
                    None)
        if line is None:
            raise SystemExit(f"no timing from the sandbox: {outcome.model_dump_json()[:800]}")
        t0, t1, t2 = (float(v) for v in line.split()[1:4])
        add = self.phases.add
        add("start", t0 - marks["handover"])
        add("imports", t1 - t0)
        add("script", t2 - t1)
        add("exit", marks["exited"] - t2)
        add("scan", marks["scanned"] - marks["exited"])
        add("teardown", ended - marks["scanned"])


@dataclass
class TimedStarted:
    """A started run whose script gets the timing prelude and epilogue."""

    sandbox: TimedSandbox
    inner: StartedSandbox

    def run(self, script: str, inputs: Sequence[Path] = ()) -> SandboxOutcome:
        """Hand the script over; record the phases."""
        self.sandbox.marks = {"handover": time.time()}
        outcome = self.inner.run(PRELUDE + script + EPILOGUE, inputs)
        self.sandbox.record(outcome)
        return outcome

    def close(self) -> None:
        """Close the started run."""
        self.inner.close()

    def __enter__(self) -> TimedStarted:
        """Itself."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close it."""
        self.close()


def _timed_statement(phases: Phases) -> Any:
    """``run_statement`` recording guard, SQL and export time into ``phases``."""
    def run(*args: Any, **kwargs: Any) -> StatementRun:
        events: dict[str, float] = {}

        def on_event(tool: str, _status: str, _detail: str, milliseconds: float) -> None:
            events[tool] = events.get(tool, 0.0) + milliseconds / 1000

        def check(*check_args: Any) -> Any:
            begin = time.perf_counter()
            checked = _CHECK_SQL(*check_args)
            events["guard"] = time.perf_counter() - begin
            return checked

        step_module.check_sql = check  # type: ignore[assignment]
        begin = time.perf_counter()
        result = _RUN_STATEMENT(*args, on_event=on_event, **kwargs)
        whole = time.perf_counter() - begin
        guard, sql = events.get("guard", 0.0), events.get("executor", 0.0)
        phases.add("guard", guard)
        phases.add("sql", sql)
        phases.add("export", whole - sql - guard)
        return result

    return run


def measure(size: int, cases: list[str], repeat: int) -> list[tuple[str, Phases, float, float]]:
    """FULL's phases, FULL's and POSTGIS's wall time per case at ``size``."""
    database = ensure_database(size)
    scratch = Path(tempfile.mkdtemp(prefix="geoask-breakdown-"))
    loaded = load_cases(case_file(database, scratch), ())
    settings = settings_for_target(get_settings(), run_target(loaded))
    base = program_runner(settings)
    sandbox = TimedSandbox.from_settings(settings)
    runner = ProgramRunner(base.sql_runner, sandbox, base.guard)
    rows = []
    for item in loaded:
        case = item.case
        if cases and case.id not in cases:
            continue
        assert case.cross_check is not None
        for attempt in range(repeat):
            phases = Phases()
            sandbox.phases = phases
            runner_module.run_statement = _timed_statement(phases)  # type: ignore[assignment]
            work = scratch / f"{case.id}-{attempt}"
            begin = time.perf_counter()
            runner.run(case.reference, "separated", work / "full")
            full = time.perf_counter() - begin
            runner_module.run_statement = _RUN_STATEMENT  # type: ignore[assignment]
            phases.add("other", full - sum(phases.seconds.values()))
            begin = time.perf_counter()
            runner.run(case.cross_check.program, case.cross_check.policy, work / "postgis")
            postgis = time.perf_counter() - begin
            rows.append((case.id, phases, full, postgis))
            print_row(case.id, phases, full, postgis)
    return rows


def print_row(case_id: str, phases: Phases, full: float, postgis: float) -> None:
    """One line: the phases, FULL, POSTGIS and their ratio."""
    cells = " ".join(f"{phases.seconds[p]:>7.3f}" for p in PHASES)
    print(f"{case_id:<10} {cells} | {full:>6.2f} {postgis:>6.2f} {full / postgis:>5.2f}",
          flush=True)


def main(argv: list[str] | None = None) -> int:
    """Measure and print the breakdown; 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=2_000_000)
    parser.add_argument("--cases", nargs="*", default=[])
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args(argv)
    print(f"database {database_name(args.size)}; seconds of wall time per phase")
    print(f"{'case':<10} " + " ".join(f"{p:>7}" for p in PHASES) + " |   FULL POSTGS   F/P")
    rows = measure(args.size, args.cases, args.repeat)
    medians = {p: statistics.median(r[1].seconds[p] for r in rows) for p in PHASES}
    ratios = [r[2] / r[3] for r in rows]
    print(f"{'median':<10} " + " ".join(f"{medians[p]:>7.3f}" for p in PHASES) +
          f" | {statistics.median(r[2] for r in rows):>6.2f} "
          f"{statistics.median(r[3] for r in rows):>6.2f} {statistics.median(ratios):>5.2f}")
    print(json.dumps({"median_ratio": statistics.median(ratios), "worst_ratio": max(ratios)}))
    return 0


if __name__ == "__main__":
    with heap.owned():  # measured as the geoask command runs it
        sys.exit(main())
