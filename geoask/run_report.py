"""What a finished question run leaves behind: answer.json, summary.md, the log, trace and map.

The question flow hands its result here once; this module writes the run's files into its
artifact folder (:class:`geoask.run_artifacts.RunArtifacts`) and shows them as Prefect
artifacts on the flow-run page: ``run-summary`` (markdown), ``run-trace`` (table, see
:mod:`geoask.run_trace`); the flow draws the ``answer-map`` (:mod:`geoask.answer_map`).
"""

from __future__ import annotations

import json
from typing import Any

from geoask.execution_log import ExecutionLog
from geoask.run_artifacts import RunArtifacts, publish_markdown
from geoask.run_trace import publish_run_trace


def run_summary_markdown(result: dict[str, Any], question: str, variant: str) -> str:
    """The markdown run summary (artifact ``run-summary`` and ``summary.md``).

    Args:
        result: the run's result as JSON data (``QuestionResult.model_dump(mode="json")``:
            status, message, route, transitions, evidence, artifact_folder, answer).
        question: the question asked.
        variant: the pipeline variant (FULL, POSTGIS, ...).

    """
    lines = [
        f"# {question}", "",
        f"**{result['status']}** ({variant}, route {result['route']}): {result['message']}", "",
        f"transitions: {' → '.join(result['transitions']) or 'none'}", "",
        "## Steps", "",
        *(f"- {line}" for line in result["evidence"]), "",
        f"artifacts: `{result['artifact_folder']}`",
    ]
    if result.get("answer") is not None:
        lines += ["", "## Answer", "", "```json", json.dumps(result["answer"], indent=2), "```"]
    return "\n".join(lines)


def save_log(store: RunArtifacts, log: ExecutionLog) -> None:
    """Write the execution log as ``execution_log.json`` (also after a failed run)."""
    store.write_json("execution_log.json", log.to_json_dict())


def publish_run(store: RunArtifacts, log: ExecutionLog, result: dict[str, Any],
                question: str, variant: str, run_id: str) -> None:
    """Write ``answer.json``, ``summary.md`` and the log; publish the summary and the trace.

    Raises:
        ArtifactWriteError: a file could not be written.

    """
    store.write_json("answer.json", result)
    summary = run_summary_markdown(result, question, variant)
    store.write_text("summary.md", summary)
    publish_markdown("run-summary", summary, f"geoask run {run_id}")
    save_log(store, log)
    publish_run_trace(log, store)
