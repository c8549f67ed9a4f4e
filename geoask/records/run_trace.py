"""Tokens and timings of a question run, for the ``run-summary`` artifact on its flow-run page.

:func:`trace_rows` condenses the execution log into one row per stage (runs, wall time, time
in model calls, prompt/completion tokens, tool uses that did not succeed) plus a total row;
:func:`trace_markdown` renders them as the summary's ``## Trace`` table.
"""

from __future__ import annotations

from typing import Any

from geoask.records.execution_log import ExecutionLog
from geoask.records.run_artifacts import Markdown, markdown_table


def trace_rows(log: ExecutionLog) -> list[dict[str, Any]]:
    """Per stage, in first-run order: runs, wall/model ms, tokens, failed tool uses; a total.

    Model calls and tool uses are attributed by their stage name, so a stage that ran
    several times (revisions of ``sql-1``) gets one row with the sums.
    """
    rows: dict[str, dict[str, Any]] = {}

    def row(stage: str) -> dict[str, Any]:
        return rows.setdefault(stage, {
            "stage": stage, "runs": 0, "wall_ms": 0.0, "model_ms": 0.0, "prompt_tokens": 0,
            "completion_tokens": 0, "failed_tool_uses": 0})

    for timing in log.stages:
        entry = row(timing.stage)
        entry["runs"] += 1
        entry["wall_ms"] += timing.duration_ms
        entry["model_ms"] += timing.model_ms
    for call in log.model_calls:
        entry = row(call.stage)
        entry["prompt_tokens"] += call.prompt_tokens
        entry["completion_tokens"] += call.completion_tokens
    for use in log.tool_trace:
        if use.status != "ok":
            row(use.stage)["failed_tool_uses"] += 1
    body = list(rows.values())
    total = {"stage": "total", **{key: sum(r[key] for r in body) for key in (
        "runs", "wall_ms", "model_ms", "prompt_tokens", "completion_tokens",
        "failed_tool_uses")}}
    return [{**r, "wall_ms": round(r["wall_ms"], 1), "model_ms": round(r["model_ms"], 1)}
            for r in [*body, total]]


def trace_markdown(log: ExecutionLog) -> Markdown:
    """The ``## Trace`` section of the run summary: :func:`trace_rows` as a markdown table."""
    return Markdown("## Trace\n\n{}, route {}, {} guardrail retries; tokens and timings per "
                    "stage:\n\n{}").format(log.outcome, log.route, log.guardrail_retries,
                                            markdown_table(trace_rows(log)))
