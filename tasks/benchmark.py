"""The benchmark flow's report task: score every run, write the report files.

A thin shell over ``geoask.bench``: aggregation and report files are in
``geoask.bench.metrics`` and ``geoask.bench.report``; the case task is
:mod:`flows.benchmark_case` (it runs a subflow).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from prefect import task

from geoask.bench.metrics import summarize
from geoask.bench.report import render_markdown, table_rows, write_report
from geoask.bench.runs import RunKey, read_run, score_run
from geoask.cases.model import BenchmarkCase
from geoask.records.run_artifacts import Markdown, publish_markdown, publish_table
from geoask.settings import get_settings
from tasks.options import TASK

# --- scoring and the report ----------------------------------------------------------------


@task(name="benchmark-report", **TASK)
def report_benchmark(cases: list[BenchmarkCase], keys: list[RunKey], out_dir: str,
                     meta: dict[str, Any]) -> dict[str, Any]:
    """Score every run, write the report files and publish the Prefect artifacts.

    ``meta`` gains ``infrastructure_failures``: runs that a rerun will redo.
    Returns the report as JSON data (``geoask.bench.metrics.BenchmarkReport.to_dict``) plus
    ``markdown`` (the rendered report) and ``files`` (where each report file was written).
    """
    by_id = {case.id: case for case in cases}
    folder = Path(out_dir)
    runs = [read_run(key, folder) for key in keys]
    scores = [score_run(by_id[run.case_id], run) for run in runs]
    meta = {**meta, "infrastructure_failures": sum(run.infrastructure for run in runs)}
    report = summarize(scores, cases, resamples=get_settings().bench_bootstrap_samples,
                       meta=meta)
    files = write_report(report, folder)
    markdown = render_markdown(report)
    publish_table("benchmark-report", table_rows(report), f"benchmark of model {meta['model']}")
    # the report's own text: metrics, case ids, categories of geoask's case files (no model
    # or database text); shown as written
    publish_markdown("benchmark-summary", Markdown(markdown), f"benchmark report ({folder})")
    return {**report.to_dict(), "markdown": markdown, "files": dataclasses.asdict(files)}
