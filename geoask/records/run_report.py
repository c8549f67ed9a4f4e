"""What a question run leaves behind: intent, plans, answer.json, summary.md, log, trace, map.

The question flow hands its intent, each plan and its result here; this module writes the
run's files into its artifact folder (:class:`geoask.records.run_artifacts.RunArtifacts`) and shows
them as Prefect artifacts on the flow-run page: ``run-intent`` and ``run-plan`` (markdown; files
``intent.json`` and ``plan-<n>.json``) and ``run-summary`` (markdown: the summary, the answer
map of :mod:`geoask.maps.answer_map`, the artifact registry, the trace of
:mod:`geoask.records.run_trace`,
the files).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from geoask.records.execution_log import ExecutionLog
from geoask.records.run_artifacts import (
    Markdown,
    RunArtifacts,
    code_block,
    code_span,
    publish_markdown,
)
from geoask.records.run_trace import trace_markdown
from geoask.vocabulary.plan import Intent, IntentRejection, Plan


def run_summary_markdown(result: dict[str, Any], question: str, variant: str) -> Markdown:
    """The markdown run summary (artifact ``run-summary`` and ``summary.md``).

    The question, message and evidence are shown as typed (:class:`geoask.records.
    run_artifacts.Markdown`): they hold user input and database values, which must not become
    headings, links, images or HTML on the run page; a message of several lines is a code block.

    Args:
        result: the run's result as JSON data (``QuestionResult.model_dump(mode="json")``:
            status, message, route, transitions, evidence, artifact_folder, answer).
        question: the question asked.
        variant: the pipeline variant (FULL, POSTGIS, ...).

    """
    message = result["message"]
    status = Markdown("**{}** ({}, route {})").format(result["status"], variant, result["route"])
    lines = [
        Markdown("# {}").format(question), "",
        *([Markdown("{}:").format(status), "", code_block(message)] if "\n" in message
          else [Markdown("{}: {}").format(status, message)]), "",
        Markdown("transitions: {}").format(" → ".join(result["transitions"]) or "none"), "",
        Markdown("## Steps"), "",
        *(Markdown("- {}").format(line) for line in result["evidence"]), "",
        Markdown("artifacts: {}").format(code_span(result["artifact_folder"])),
    ]
    if result.get("answer") is not None:
        lines += ["", Markdown("## Answer"), "",
                  code_block(json.dumps(result["answer"], indent=2, ensure_ascii=False), "json")]
    return Markdown("\n").join(lines)


def save_log(store: RunArtifacts, log: ExecutionLog) -> None:
    """Write the execution log as ``execution_log.json`` (also after a failed run)."""
    store.write_json("execution_log.json", log.to_json_dict())


def publish_run(store: RunArtifacts, log: ExecutionLog, result: dict[str, Any],
                question: str, variant: str, run_id: str,
                sections: Sequence[str] = ()) -> None:
    """Write ``answer.json``, ``summary.md`` and the log; publish artifact ``run-summary``.

    The artifact is the summary, then ``sections`` (markdown; empty ones left out: the
    answer map, the artifact registry), the trace table (:func:`geoask.records.run_trace.
    trace_markdown`) and the run's files: one Prefect artifact for the run's end (each is a
    request and a database write on the Prefect server, ~34 ms of its CPU here).

    Raises:
        ArtifactWriteError: a file could not be written.

    """
    answer_url = store.write_json("answer.json", result)
    summary = run_summary_markdown(result, question, variant)
    store.write_text("summary.md", summary)
    save_log(store, log)
    files = Markdown("## Files\n\n- answer: {}\n- execution log: {}\n- summary: {}").format(
        code_span(answer_url), code_span(store.url("execution_log.json")),
        code_span(store.url("summary.md")))
    parts = [summary, *(section for section in sections if section), trace_markdown(log), files]
    publish_markdown("run-summary", Markdown("\n\n").join(parts), f"geoask run {run_id}")


def publish_intent(store: RunArtifacts, intent: Intent | IntentRejection) -> None:
    """Write the understood intent (or the rejection) as ``intent.json``; artifact ``run-intent``.

    Raises:
        ArtifactWriteError: the file could not be written.

    """
    url = store.write_json("intent.json", intent.model_dump(mode="json"))
    if isinstance(intent, IntentRejection):
        head = Markdown("rejected as **{}**: {}").format(intent.rejection_type.value,
                                                          intent.message)
    else:
        scope = intent.scope.model_dump(mode="json", exclude_none=True)
        head = Markdown("\n").join([
            Markdown("- target: {}").format(intent.target),
            Markdown("- places/periods: {}").format(json.dumps(scope, ensure_ascii=False)),
            Markdown("- spatial relation: {}").format(_inline(intent.topology)),
            Markdown("- operation: {}").format(intent.operation.value),
            *([Markdown("- top k: {}").format(intent.top_k)] if intent.top_k else []),
        ])
    publish_markdown("run-intent", Markdown("# Intent\n\n{}\n\n{}\n\nfile: {}").format(
        head, _json_block(intent), code_span(url)), "the question as understood")


def publish_plan(store: RunArtifacts, plan: Plan, number: int) -> None:
    """Write plan ``number`` (1 = first) as ``plan-<number>.json``; artifact ``run-plan``.

    A replan publishes again under the same key, so the UI keeps every plan in its history.

    Raises:
        ArtifactWriteError: the file could not be written.

    """
    url = store.write_json(f"plan-{number}.json", plan.model_dump(mode="json"))
    steps = Markdown("\n").join(
        Markdown("{}. **{}** ({}): {} -> {}").format(
            index, step.id, ", ".join(step.tables) or "inputs " + ", ".join(step.inputs),
            step.objective, step.expected_output)
        for index, step in enumerate(plan.steps, start=1))
    fields = ", ".join(plan.answer_fields) or "not fixed"
    publish_markdown("run-plan", Markdown("# Plan {}\n\n{}\n\nanswer: {} ({})\n\n{}\n\nfile: {}")
                     .format(number, steps, plan.answer_type.value, fields, _json_block(plan),
                             code_span(url)),
                     f"plan {number} of the run")


def _inline(model: BaseModel) -> str:
    return json.dumps(model.model_dump(mode="json", exclude_none=True), ensure_ascii=False)


def _json_block(model: BaseModel) -> Markdown:
    return code_block(json.dumps(model.model_dump(mode="json"), indent=2, ensure_ascii=False),
                      "json")
