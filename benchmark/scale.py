"""Run ``make scale-benchmark`` (or ``python benchmark/scale.py [--sizes 10000 2000000]``).

The scale benchmark at several database sizes (points of interest; default 10^4, 10^5, 10^6,
2*10^6). For each size it builds the database once (``generate.py`` + ``geoask db
load-dataset``; a database already loaded at that size is reused: its build folder's
``dataset.yaml`` names it), runs ``geoask bench verify`` on the scale cases at 2*10^6 (the size
their expected values were filled at), then answers the same 30 questions three ways and prints
per question and size:

- FULL: the reference program (bounding-box screen in SQL, exact refine in Python in the
  sandbox) through the program runner, under policy ``separated`` (``--full-policy``);
- POSTGIS: the cross-check program (exact PostGIS predicates) through the same runner (guard,
  read-only executor, export);
- SQL: the bare cross-check query over psycopg (no guard, no export).

Columns: wall time (s), FULL's CPU time (s: this process and the sandbox; under load wall
time is mostly waiting), peak memory (MiB: the geoask process's resident-set high-water mark,
and the sandbox's ``peak_memory_mib`` for FULL), bytes and rows exported (the run folder's
files; rows: the screened candidates), ``F/P`` (FULL's wall time over POSTGIS's); per size the
totals, the median and worst ``F/P`` and the most bytes exported per candidate row.

Then, unless ``--no-flow``, the same questions go through the whole question flow with the
reference model under FULL and POSTGIS (``geoask bench``, :mod:`scale_ssa`; at a size other
than 2*10^6 after ``geoask bench fill`` on that database) and SSA is printed per size and
variant. Exit 1 when verification fails, a program fails or SSA is below 100 %.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import yaml

from geoask.base import heap
from geoask.cases.loader import load_cases, run_target
from geoask.cases.model import BenchmarkCase, SqlStep
from geoask.cases.runner import ProgramFailedError, ProgramRunner
from geoask.db.urls import reader_url_for_database
from geoask.run.composition import program_runner, settings_for_target
from geoask.settings import get_settings
from sandbox.models import SandboxLimits, SandboxOutcome, StartedSandbox

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale_ssa import FlowScore, run_flow  # beside this script

ROOT = Path(__file__).resolve().parents[1]
SCALE = ROOT / "benchmark" / "databases" / "scale"
CASES = SCALE / "cases" / "scale.yaml"
FILLED_AT = 2_000_000
"""The size the cases' expected values were filled at (verified there)."""
SIZES = (10_000, 100_000, 1_000_000, 2_000_000)
PYTHON = sys.executable
GEOASK = [PYTHON, "-c", "from geoask.app.cli import main; main()"]


@dataclass
class PeakSandbox:
    """A sandbox that remembers the largest ``peak_memory_mib`` of its runs."""

    inner: Any
    peak_mib: float = 0.0
    cpu_s: float = 0.0

    def run(
        self, script: str, inputs: Sequence[Path] = (), limits: SandboxLimits | None = None
    ) -> SandboxOutcome:
        """Run in the wrapped sandbox and record the outcome's peak memory."""
        return self.record(self.inner.run(script, inputs, limits))

    def start(self, limits: SandboxLimits | None = None) -> PeakStarted:
        """Start the wrapped sandbox ahead; its run is recorded as :meth:`run`'s."""
        return PeakStarted(self, self.inner.start(limits))

    def record(self, outcome: SandboxOutcome) -> SandboxOutcome:
        """Keep the outcome's peak memory and CPU time."""
        self.peak_mib = max(self.peak_mib, outcome.peak_memory_mib)
        self.cpu_s += outcome.cpu_time_s or 0.0
        return outcome

    def __getattr__(self, name: str) -> Any:
        """Everything else is the wrapped sandbox's."""
        return getattr(self.inner, name)


@dataclass
class PeakStarted:
    """A sandbox started ahead whose run :class:`PeakSandbox` records."""

    owner: PeakSandbox
    inner: StartedSandbox

    def run(self, script: str, inputs: Sequence[Path] = ()) -> SandboxOutcome:
        """Run in the started sandbox and record the outcome."""
        return self.owner.record(self.inner.run(script, inputs))

    def close(self) -> None:
        """Close the started sandbox."""
        self.inner.close()

    def __enter__(self) -> PeakStarted:
        """Itself."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close it."""
        self.close()


@dataclass
class Measure:
    """One way of answering one question at one size."""

    seconds: float
    rss_mib: float
    sandbox_mib: float = 0.0
    exported_bytes: int = 0
    exported_rows: int = 0
    cpu_s: float = 0.0
    ok: bool = True
    note: str = ""


@dataclass
class Row:
    """A question at a size, measured three ways."""

    case_id: str
    size: int
    ways: dict[str, Measure] = field(default_factory=dict)


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def _exported_rows(folder: Path) -> int:
    """Rows the SQL steps exported (their previews' row counts): the screened candidates."""
    previews = folder.rglob("*.preview.json")
    return sum(int(json.loads(p.read_text(encoding="utf-8")).get("row_count", 0))
               for p in previews)


def build_folder(size: int) -> Path:
    """The generator's output folder for ``size``."""
    return Path(os.environ.get("GEOASK_HOME", ROOT / ".geoask")) / "scale-build" / str(size)


def database_name(size: int) -> str:
    """Database of ``size``: ``geoask_scale`` at the committed size, else suffixed."""
    return "geoask_scale" if size == FILLED_AT else f"geoask_scale_{size}"


def _loaded(database: str) -> bool:
    try:
        url = reader_url_for_database(get_settings(), database)
        with psycopg.connect(url, connect_timeout=5) as conn:
            row = conn.execute("SELECT to_regclass('scale.poi') IS NOT NULL").fetchone()
            return bool(row and row[0])
    except psycopg.Error:
        return False


def ensure_database(size: int) -> str:
    """Generate and load the database of ``size`` unless it is loaded already."""
    database = database_name(size)
    if _loaded(database):
        print(f"size {size}: reusing database {database}")
        return database
    out = build_folder(size)
    started = time.perf_counter()
    generate = [PYTHON, str(SCALE / "generate.py"), "--size", str(size), "--out", str(out)]
    subprocess.run([*generate, "--database", database], check=True)
    subprocess.run([*GEOASK, "db", "load-dataset", str(out), "--force"], check=True)
    print(f"size {size}: built {database} in {time.perf_counter() - started:.0f} s")
    return database


def case_file(database: str, folder: Path) -> Path:
    """The scale cases pointed at ``database`` (the catalog path made absolute)."""
    doc = yaml.safe_load(CASES.read_text(encoding="utf-8"))
    doc["database"] = database
    doc["catalog"] = str((CASES.parent / doc["catalog"]).resolve())
    path = folder / f"{database}.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def verify(policy: str) -> bool:
    """``geoask bench verify`` on the committed cases; True when all pass."""
    command = [*GEOASK, "bench", "verify", "--quiet", "--reference-policy", policy]
    return subprocess.run([*command, "--tasks-file", str(CASES)], check=False).returncode == 0


def _program(
    runner: ProgramRunner, sandbox: PeakSandbox, program: Any, policy: str, work: Path
) -> Measure:
    sandbox.peak_mib, sandbox.cpu_s = 0.0, 0.0
    started, cpu = time.perf_counter(), time.process_time()
    note, ok = "", True
    try:
        runner.run(program, policy, work)
    except ProgramFailedError as error:  # a failed program is a measured outcome here
        ok, note = False, str(error).splitlines()[0][:80]
    seconds = time.perf_counter() - started
    cpu_s = time.process_time() - cpu + sandbox.cpu_s
    return Measure(seconds, _rss_mib(), sandbox.peak_mib, _folder_bytes(work),
                   _exported_rows(work), ok=ok, note=note, cpu_s=cpu_s)


def _bare(url: str, case: BenchmarkCase) -> Measure:
    assert case.cross_check is not None
    step = case.cross_check.program.steps[0]
    assert isinstance(step, SqlStep)
    sql = step.statements[0].sql
    started = time.perf_counter()
    with psycopg.connect(url) as conn:
        rows = conn.execute(sql).fetchall()
    return Measure(time.perf_counter() - started, _rss_mib(), note=f"{len(rows)} rows")


def measure_size(size: int, database: str, full_policy: str, scratch: Path) -> list[Row]:
    """Answer every scale question at ``size`` three ways."""
    loaded = load_cases(case_file(database, scratch), ())
    settings = settings_for_target(get_settings(), run_target(loaded))
    base = program_runner(settings)
    sandbox = PeakSandbox(base.sandbox)
    runner = ProgramRunner(base.sql_runner, sandbox, base.guard)
    url = reader_url_for_database(get_settings(), database)
    rows = []
    for item in loaded:
        case, work = item.case, scratch / str(size) / item.case.id
        assert case.cross_check is not None
        row = Row(case.id, size)
        row.ways["FULL"] = _program(runner, sandbox, case.reference, full_policy, work / "full")
        row.ways["POSTGIS"] = _program(
            runner, sandbox, case.cross_check.program, case.cross_check.policy, work / "postgis"
        )
        row.ways["SQL"] = _bare(url, case)
        rows.append(row)
        print_row(row)
    return rows


HEADER = (
    f"{'case':<10} {'size':>9} | {'FULL s':>7} {'cpu s':>6} {'sbx MiB':>7} {'KiB out':>8} "
    f"{'rows out':>8} | {'PGIS s':>7} {'KiB out':>8} | {'SQL s':>7} | {'F/P':>5} | {'RSS MiB':>7}"
)


def ratio(row: Row) -> float:
    """FULL's wall time over POSTGIS's for one question."""
    return row.ways["FULL"].seconds / max(row.ways["POSTGIS"].seconds, 1e-3)


def print_row(row: Row) -> None:
    """One line: the three ways side by side."""
    full, pgis, sql = row.ways["FULL"], row.ways["POSTGIS"], row.ways["SQL"]
    flag = "" if full.ok and pgis.ok else f"  FAILED {full.note or pgis.note}"
    print(
        f"{row.case_id:<10} {row.size:>9} | {full.seconds:>7.2f} {full.cpu_s:>6.2f} "
        f"{full.sandbox_mib:>7.0f} {full.exported_bytes / 1024:>8.0f} {full.exported_rows:>8} | "
        f"{pgis.seconds:>7.2f} {pgis.exported_bytes / 1024:>8.1f} | {sql.seconds:>7.3f} | "
        f"{ratio(row):>5.2f} | {sql.rss_mib:>7.0f}{flag}",
        flush=True,
    )


def summary(rows: list[Row]) -> None:
    """Totals per size and way."""
    print("\nper size: total wall s (FULL / POSTGIS / SQL), max sandbox MiB, FULL MiB exported")
    for size in sorted({r.size for r in rows}):
        at = [r for r in rows if r.size == size]
        total = {w: sum(r.ways[w].seconds for r in at) for w in ("FULL", "POSTGIS", "SQL")}
        failed = sum(not (r.ways["FULL"].ok and r.ways["POSTGIS"].ok) for r in at)
        print(
            f"{size:>9}: {total['FULL']:.1f} / {total['POSTGIS']:.1f} / {total['SQL']:.2f} s, "
            f"{max(r.ways['FULL'].sandbox_mib for r in at):.0f} MiB, "
            f"{sum(r.ways['FULL'].exported_bytes for r in at) / 2**20:.1f} MiB out, "
            f"{failed} failed"
        )
        worst = max(at, key=ratio)
        per_row = max(r.ways["FULL"].exported_bytes / max(r.ways["FULL"].exported_rows, 1)
                      for r in at)
        median = statistics.median(map(ratio, at))
        print(f"{'':>9}  FULL/POSTGIS per question: median {median:.2f}, worst "
              f"{ratio(worst):.2f} ({worst.case_id}); at most {per_row:.0f} B exported per "
              "candidate row")


def main(argv: list[str] | None = None) -> int:
    """Build, verify, measure; 1 if verification or a run failed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--full-policy", choices=["separated", "postgis"], default="separated")
    parser.add_argument("--no-verify", action="store_true")
    parser.add_argument("--no-flow", action="store_true",
                        help="skip the question flow (geoask bench: SSA of FULL and POSTGIS)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    databases = {size: ensure_database(size) for size in args.sizes}
    verified = True
    if not args.no_verify and FILLED_AT in databases:
        verified = verify(args.full_policy)
    rows: list[Row] = []
    print(HEADER)
    with tempfile.TemporaryDirectory(prefix="geoask-scale-") as scratch:
        for size, database in databases.items():
            rows += measure_size(size, database, args.full_policy, Path(scratch))
        summary(rows)
        flows = [] if args.no_flow else [
            score for size, database in databases.items()
            for score in flow(size, database, Path(scratch))]
    print(f"\nscale benchmark done in {time.perf_counter() - started:.0f} s")
    failed = any(not (r.ways["FULL"].ok and r.ways["POSTGIS"].ok) for r in rows)
    complete = all(score.ssa == 1.0 for score in flows)
    return 0 if verified and not failed and complete else 1


def flow(size: int, database: str, scratch: Path) -> list[FlowScore]:
    """SSA of the scale questions at ``size`` through the question flow (:mod:`scale_ssa`)."""
    folder = scratch / f"flow-{size}"
    folder.mkdir(parents=True, exist_ok=True)
    return run_flow(case_file(database, folder), size, FILLED_AT, folder / "bench")


if __name__ == "__main__":
    with heap.owned():  # measured as the geoask command runs it
        sys.exit(main())
