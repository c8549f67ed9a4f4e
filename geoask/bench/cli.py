"""``geoask bench``: verify the benchmark cases, or fill in their expected results.

Run ``geoask bench verify [--cases DIR] [--only ID ...]`` to recompute every case's reference
program (SQL guard + read-only executor + sandbox, for real) and its independent cross-check;
it exits 1 listing each disagreement. ``geoask bench fill [--only ID ...] [--overwrite]`` runs
the reference programs and writes the projected answers into ``expected.value``.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import typer

from geoask.bench.loader import DEFAULT_CASES_DIR, load_cases, write_expected_values
from geoask.bench.projection import ProjectionError
from geoask.bench.runner import ProgramFailedError, ProgramRunner
from geoask.bench.verify import reference_answer, summarize, verify_case
from geoask.settings import get_settings

app = typer.Typer(
    help="Benchmark cases: verify expected results and cross-checks, or fill them in.",
    no_args_is_help=True,
)

CASES_OPTION = typer.Option(
    DEFAULT_CASES_DIR, "--cases",
    help="Case file or folder of *.yaml case files (benchmark/case.schema.json).",
)
ONLY_OPTION = typer.Option(None, "--only", help="Only this case id (repeatable).")


def _runner() -> ProgramRunner:
    from geoask.db.urls import reader_url
    from geoask.sql.executor import PostgresSqlRunner
    from sandbox.bubblewrap import BubblewrapSandbox

    settings = get_settings()
    sql_runner = PostgresSqlRunner(
        reader_url(settings), statement_timeout_s=settings.statement_timeout_s
    )
    sandbox = BubblewrapSandbox.from_settings(settings)
    return ProgramRunner(sql_runner, sandbox, settings.sql_row_cap)


@app.command("verify")
def verify_command(
    cases: Path = CASES_OPTION,
    only: list[str] | None = ONLY_OPTION,
    quiet: bool = typer.Option(False, "--quiet", help="Print only failures and the summary."),
) -> None:
    """Recompute every case and cross-check; exit 1 listing each disagreement."""
    loaded = load_cases(cases, only or ())
    runner = _runner()
    started = time.perf_counter()
    verdicts = []
    with tempfile.TemporaryDirectory(prefix="geoask-bench-") as scratch:
        for item in loaded:
            verdict = verify_case(item.case, runner, Path(scratch) / item.case.id)
            verdicts.append(verdict)
            if not verdict.ok:
                typer.secho(f"FAIL {item.case.id} ({item.path.name})", fg=typer.colors.RED)
                for problem in verdict.problems:
                    typer.echo(f"     {problem}")
            elif not quiet:
                checked = " + cross-check" if verdict.cross_check_ok else ""
                typer.echo(f"ok   {item.case.id}{checked} ({verdict.seconds:.2f} s)")
    summary = summarize([item.case for item in loaded], verdicts, time.perf_counter() - started)
    typer.echo(
        f"\n{summary.passed}/{summary.total} cases verified "
        f"({summary.cross_checked} with a cross-check, {summary.sandbox_cases} need the sandbox) "
        f"in {summary.seconds:.1f} s"
    )
    for title, counts in (
        ("difficulty", summary.by_difficulty),
        ("scenario", summary.by_scenario),
        ("category", summary.by_category),
    ):
        typer.echo(f"  by {title}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    if summary.passed != summary.total:
        raise typer.Exit(code=1)


@app.command("fill")
def fill_command(
    cases: Path = CASES_OPTION,
    only: list[str] | None = ONLY_OPTION,
    overwrite: bool = typer.Option(
        False, "--overwrite", help="Also replace expected values that are already filled."
    ),
) -> None:
    """Run reference programs and write their projected answers into expected.value."""
    loaded = load_cases(cases, only or ())
    runner = _runner()
    updates: dict[Path, dict[str, object]] = {}
    failures = 0
    with tempfile.TemporaryDirectory(prefix="geoask-bench-fill-") as scratch:
        for item in loaded:
            if item.case.expected.value is not None and not overwrite:
                continue
            try:
                value = reference_answer(item.case, runner, Path(scratch) / item.case.id)
            except (ProgramFailedError, ProjectionError) as error:
                failures += 1
                typer.secho(f"FAIL {item.case.id}: {error}", fg=typer.colors.RED)
                continue
            updates.setdefault(item.path, {})[item.case.id] = value
            typer.echo(f"filled {item.case.id}: {_short(value)}")
    for path, values in updates.items():
        write_expected_values(path, values)
    filled = sum(len(values) for values in updates.values())
    typer.echo(f"filled {filled} case(s) in {len(updates)} file(s); {failures} failed")
    if failures:
        raise typer.Exit(code=1)


def _short(value: object, limit: int = 100) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
