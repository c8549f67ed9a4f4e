"""``geoask bench``: run the benchmark, verify the cases, fill in expected results, showcase.

Run ``geoask bench [--model M] [--variant V|all] [--tasks-file F] [--limit N] [--repeat K]
[--out DIR] [--fresh] [--via-api]`` to answer every case through the question flow
(``flows/run_benchmark.py``; finished questions are kept under ``--out`` so a rerun resumes)
and print the report (questions that failed on infrastructure are redone by the next run);
SIGINT/SIGTERM stop it within seconds, keeping the finished questions (exit 130/143, one
line says what was kept), and so does the Prefect API or the database going away (exit 5,
:mod:`geoask.service.watch`), the exit code also of a run in which any question failed on
infrastructure; ``geoask bench showcase`` prints three answered questions with their
evidence trails.
Run ``geoask bench verify [--cases|--tasks-file F] [--only ID ...]`` to recompute every case's
reference program (SQL guard + read-only executor + sandbox, for real) and its independent
cross-check; it exits 1 listing each disagreement. ``geoask bench fill [--only ID ...]
[--overwrite]`` runs the reference programs and writes the projected answers into
``expected.value``. The cases run on the catalog and database their files name.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import typer

from geoask.base.console import quiet_console
from geoask.base.interrupt import EXIT_INFRASTRUCTURE
from geoask.bench.parameters import (
    MAX_REPEAT,
    default_out_dir,
    load_benchmark_cases,
    parse_variants,
)
from geoask.bench.verify import reference_answer, summarize, verify_case
from geoask.cases.loader import (
    LoadedCase,
    load_cases,
    run_target,
    write_expected_values,
)
from geoask.cases.projection import ProjectionError
from geoask.cases.runner import ProgramFailedError, ProgramRunner
from geoask.errors import BenchmarkCaseError, ConfigurationError
from geoask.settings import Settings, get_settings
from geoask.sql.context import SpatialPolicy

app = typer.Typer(
    help="The benchmark: run it (no sub-command), verify or fill the cases, show examples.",
    no_args_is_help=False,
)

CASES_OPTION = typer.Option(
    None, "--cases", "--tasks-file",
    help="Case file or folder of *.yaml case files (benchmark/case.schema.json; default "
    "GEOASK_BENCH_CASES_PATH, i.e. benchmark/cases); the cases run on the catalog and database "
    "their files name (one of each).",
)
ONLY_OPTION = typer.Option(None, "--only", help="Only this case id (repeatable).")


def _add_conversations() -> None:
    from geoask.app.commands.conversations import app as conversations_app

    app.add_typer(conversations_app, name="conversations")


_add_conversations()


REFERENCE_POLICY_OPTION = typer.Option(
    "separated", "--reference-policy",
    help="Guard policy of the reference programs: separated (FULL, default) or postgis (for "
    "programs written for a guard rule that has not landed yet).")


def _runner(loaded: list[LoadedCase]) -> ProgramRunner:
    """The program runner on the catalog and database the loaded cases' files name."""
    from geoask.run.composition import program_runner, settings_for_target

    return program_runner(settings_for_target(get_settings(), run_target(loaded)))


@app.command("verify")
def verify_command(
    cases: Path | None = CASES_OPTION,
    only: list[str] | None = ONLY_OPTION,
    quiet: bool = typer.Option(False, "--quiet", help="Print only failures and the summary."),
    reference_policy: SpatialPolicy = REFERENCE_POLICY_OPTION,
) -> None:
    """Recompute every case and cross-check; exit 1 listing each disagreement."""
    loaded = load_cases(cases or get_settings().bench_cases_path, only or ())
    runner = _runner(loaded)
    started = time.perf_counter()
    verdicts = []
    with tempfile.TemporaryDirectory(prefix="geoask-bench-") as scratch:
        for item in loaded:
            verdict = verify_case(item.case, runner, Path(scratch) / item.case.id,
                                  reference_policy)
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
    cases: Path | None = CASES_OPTION,
    only: list[str] | None = ONLY_OPTION,
    overwrite: bool = typer.Option(
        False, "--overwrite", help="Also replace expected values that are already filled."
    ),
    reference_policy: SpatialPolicy = REFERENCE_POLICY_OPTION,
) -> None:
    """Run reference programs and write their projected answers into expected.value."""
    loaded = load_cases(cases or get_settings().bench_cases_path, only or ())
    runner = _runner(loaded)
    updates: dict[Path, dict[str, object]] = {}
    failures = 0
    with tempfile.TemporaryDirectory(prefix="geoask-bench-fill-") as scratch:
        for item in loaded:
            if item.case.expected.value is not None and not overwrite:
                continue
            try:
                value = reference_answer(item.case, runner, Path(scratch) / item.case.id,
                                         reference_policy)
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


# --- running the benchmark -----------------------------------------------------------------

SHOWCASE_CASES = ("states-011", "newhaven-022", "states-031")
"""A Top-K SQL question, a distance query in UTM, a multi-stage spatial statistic."""
TASKS_FILE_OPTION = typer.Option(
    None, "--tasks-file",
    help="Case file or folder in the documented schema (default GEOASK_BENCH_CASES_PATH, "
    "i.e. benchmark/cases).")
OUT_OPTION = typer.Option(
    None, "--out",
    help="Folder of saved runs and report files (default GEOASK_BENCH_OUT_DIR/<model>); runs "
    "already saved there are not redone.")
SHOWCASE_OUT_OPTION = typer.Option(
    None, "--out", help="Benchmark folder to read the runs from (default as geoask bench).")
SHOWCASE_CASE_OPTION = typer.Option(None, "--case", help="Case id (repeatable).")


@app.callback(invoke_without_command=True)
def bench(
    ctx: typer.Context,
    model: str = typer.Option(
        "reference", "--model", "-m",
        help="reference (offline replay of the verified programs), reference-faulty (with "
        "first-attempt faults), or a model string for every agent (see geoask ask --help)."),
    variant: str = typer.Option(
        "FULL", "--variant", "-v",
        help="FULL, POSTGIS, NO_STCA, NO_PLANNER, BASE, REACT, PLAN_EXECUTE, a "
        "comma-separated list, or all (the seven)."),
    tasks_file: Path | None = TASKS_FILE_OPTION,
    limit: int | None = typer.Option(None, "--limit", min=1, help="Only the first N cases."),
    repeat: int = typer.Option(
        1, "--repeat", min=1, max=MAX_REPEAT,
        help=f"Runs per case and variant (1 to {MAX_REPEAT}); the report gives the mean and a "
             "bootstrap 95% interval."),
    out: Path | None = OUT_OPTION,
    fresh: bool = typer.Option(False, "--fresh", help="Delete the saved runs under --out first."),
    via_api: bool = typer.Option(
        False, "--via-api",
        help="Run the nightly-benchmark deployment through the Prefect API (`geoask server`) "
        "with these parameters and wait for its report."),
    verbose: bool = typer.Option(
        False, "--verbose", help="Show Prefect's run log lines on the terminal too."),
) -> None:
    """Run the benchmark (when no sub-command is given) and print the report.

    Exit 0 when every question ran; 5 when any failed on infrastructure (database, model
    endpoint, sandbox, Prefect API: rerun to redo just those) or the Prefect API or the
    database went away mid-run (finished questions kept; rerun to resume); 130/143 on
    SIGINT/SIGTERM.
    """
    if ctx.invoked_subcommand is not None:
        return
    # Per-task log lines of hundreds of runs would bury the progress bar (the UI keeps them).
    if not verbose:
        quiet_console()
    settings = get_settings()
    load_benchmark_cases(tasks_file, limit)  # clear errors before Prefect starts
    try:
        parse_variants(variant)
    except ConfigurationError as error:
        raise typer.BadParameter(str(error), param_hint="--variant") from None
    if not via_api:  # else the serving worker's models count, not this shell's
        from geoask.run.composition import model_provider

        # a model that cannot be built would fail (and be saved as failed) for every question
        model_provider(settings, model)
    # absolute: a run through the API resolves paths in the server's working folder
    folder = (out or default_out_dir(model, settings)).resolve()
    if fresh:
        from geoask.bench.runs import clear_runs

        clear_runs(folder)
    parameters = {"model": model, "variant": variant,
                  "tasks_file": str(tasks_file.resolve()) if tasks_file else None,
                  "limit": limit, "repeat": repeat, "out_dir": str(folder)}
    if via_api:
        from geoask.base.interrupt import run_until_stopped
        from geoask.service.client import run_deployment_and_wait
        from geoask.service.local import ensure_server
        from geoask.service.watch import api_probe, watch_infrastructure

        _check_served(parameters, settings)
        api_url = ensure_server(settings, deployment="nightly-benchmark")
        with watch_infrastructure([api_probe(api_url)]):
            summary = run_until_stopped(
                lambda: run_deployment_and_wait("run-benchmark/nightly-benchmark", parameters,
                                                settings.api_run_timeout_s),
                lambda: f"stopped waiting; the flow run on the server goes on and keeps its "
                        f"finished questions under {folder}/runs")
    else:
        from geoask.service.local import prefect_api

        with prefect_api(settings, verbose=verbose):
            summary = _run_with_progress(parameters, folder)
    typer.echo(summary["markdown"])
    redo = summary["meta"].get("infrastructure_failures", 0)
    if redo:
        typer.secho(f"{redo} question(s) failed on infrastructure (database, model endpoint, "
                    "sandbox or Prefect API): fix it and run the same command again to redo "
                    "just those", fg=typer.colors.YELLOW)
    typer.echo(f"report: {folder}/report.md, report.json, report.csv, scores.csv, "
               "ssa_by_difficulty.png, variants.png")
    typer.echo(f"runs:   {folder}/runs/ (one JSON per question: answer, evidence, execution "
               "log, artifact folder); Prefect UI: flow run-benchmark and its answer-question "
               "subflow runs (artifacts benchmark-report, benchmark-summary)")
    if redo:
        raise typer.Exit(code=EXIT_INFRASTRUCTURE)


def _check_served(parameters: dict[str, Any], settings: Settings) -> None:
    """Refuse, before any server work, paths and a model geoask's own server would refuse.

    Only for geoask's own server of this home (its settings are these); another server
    (``GEOASK_SERVER_API_URL``, ``PREFECT_API_URL``) judges by its own.
    """
    from geoask.models.served import check_served_model, check_served_paths
    from geoask.service.local import explicit_api_url

    if explicit_api_url(settings):
        return
    try:
        check_served_paths(parameters["tasks_file"], parameters["out_dir"], settings)
    except ConfigurationError as error:
        hint = "--out" if str(error).startswith("out_dir") else "--tasks-file"
        raise typer.BadParameter(str(error), param_hint=hint) from None
    try:
        check_served_model(parameters["model"], settings)
    except ConfigurationError as error:
        raise typer.BadParameter(str(error), param_hint="--model") from None


def _run_with_progress(parameters: dict[str, Any], folder: Path) -> dict[str, Any]:
    """Run the benchmark flow here with a progress bar; SIGINT/SIGTERM stop it cleanly.

    On a stop (:func:`geoask.base.interrupt.run_until_stopped`) one line says how many questions
    are finished and kept; the process exits 130 (SIGINT) or 143 (SIGTERM).
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    from flows.run_benchmark import (
        add_progress_listener,
        benchmark_flow,
        remove_progress_listener,
    )
    from geoask.base.interrupt import run_until_stopped
    from geoask.run.stops import creating_run

    counts = {"finished": 0, "total": 0}

    def kept() -> str:
        return (f"{counts['finished']} of {counts['total'] or '?'} questions finished and kept "
                f"under {folder}/runs (questions in flight are not recorded); run the same "
                "command again to resume")

    with Progress("[progress.description]{task.description}", BarColumn(),
                  MofNCompleteColumn(), TimeElapsedColumn(), transient=False) as progress:
        bar = progress.add_task("questions", total=None)

        def advance(finished: int, total: int, run: object) -> None:
            counts.update(finished=finished, total=total)
            label = getattr(run, "case_id", "resumed")
            progress.update(bar, completed=finished, total=total, description=f"{label:>14}")

        def work() -> dict[str, Any]:
            with creating_run():  # a stop's sweep waits for the benchmark's run to exist
                result: dict[str, Any] = benchmark_flow()(**parameters)
            return result

        add_progress_listener(advance)
        try:
            summary: dict[str, Any] = run_until_stopped(work, kept)
        finally:
            remove_progress_listener(advance)
    return summary


@app.command("showcase")
def showcase_command(
    model: str = typer.Option("reference", "--model", "-m", help="The benchmark's model."),
    out: Path | None = SHOWCASE_OUT_OPTION,
    only: list[str] | None = SHOWCASE_CASE_OPTION,
    as_json: bool = typer.Option(False, "--json", help="Answers as JSON, full precision."),
) -> None:
    """Print three benchmark questions with their answers and evidence trails."""
    from flows.benchmark_case import run_case
    from geoask.bench.runs import RunKey, read_run
    from geoask.bench.showcase import showcase_text

    settings = get_settings()
    folder = out or default_out_dir(model, settings)
    cases = load_benchmark_cases(None, None)
    by_id = {case.id: case for case in cases}
    for case_id in only or SHOWCASE_CASES:
        if case_id not in by_id:
            raise BenchmarkCaseError(f"no benchmark case {case_id!r}; see benchmark/cases")
        key = RunKey(model, "FULL", 0, case_id)
        if key.path(folder).is_file():
            run = read_run(key, folder)
        else:
            from geoask.service.local import prefect_api

            with prefect_api(settings):
                run = run_case(by_id[case_id], key, settings)
        typer.echo(showcase_text(by_id[case_id].question, run, as_json=as_json))
