"""The stages of the question flow, one small Prefect task each.

Task names are stable for the UI: ``intent``, ``schema``, ``plan``, ``review``, ``answer``,
``map`` here;
``sql`` and ``python`` (runs named by step id: ``sql-1``, ``python-1``...) in
:mod:`tasks.steps`. Prefect retries a task only for transient model or database failures
(``geoask.models.retry.TRANSIENT_RETRIES``).
"""

from __future__ import annotations

import json
import time
from typing import Any, NamedTuple

from prefect import task

from agents.answer import AnswerDeps, answer_agent
from agents.answer import prompt as answer_prompt
from agents.intent import IntentDeps, intent_agent
from agents.intent import prompt as intent_prompt
from agents.planner import PlannerDeps, planner_agent
from agents.planner import prompt as planner_prompt
from agents.reviewer import ReviewerDeps, reviewer_agent
from agents.reviewer import prompt as reviewer_prompt
from geoask.base.formats import stored_format
from geoask.catalog.model import TemporalGranularity
from geoask.catalog.summary import catalog_summary
from geoask.maps.answer_map import AnswerMaps, draw_answer_maps
from geoask.maps.geopackage import GEOPACKAGE_FILE, LAYER_KINDS, write_geopackage
from geoask.maps.key_lookup import LOOKUP_STEP, look_up_keys, tables_read_by
from geoask.records import background_writes
from geoask.records.artifact_registry import RegistryEntry
from geoask.retrieval.filters import RetrievalIntent
from geoask.retrieval.retriever import SchemaSubset
from geoask.run.composition import QuestionServices
from geoask.run.conversation import history_block, reuse_block
from geoask.run.state import ExecutionState
from geoask.run.variants import plan_allowance
from geoask.vocabulary.answers import AnswerRefusal, FinalAnswer, payload_errors
from geoask.vocabulary.evidence import (
    python_evidence,
    records_from_artifact,
    sql_evidence,
    unsupported_numbers,
)
from geoask.vocabulary.focus import MapFocus
from geoask.vocabulary.plan import (
    Intent,
    IntentOutput,
    PlanOutput,
    Review,
    ReviewDecision,
    ReviewRefusal,
)
from tasks.agent_calls import call_agent
from tasks.options import RETRIED_TASK


@task(name="intent", task_run_name="intent", **RETRIED_TASK)
def classify_intent(services: QuestionServices, question: str) -> IntentOutput:
    """Parse the question into the intent tuple, or reject it."""
    with services.recorder.stage("intent"):
        deps = IntentDeps(question=question, catalog_summary=catalog_summary(services.catalog),
                          conversation=history_block(services.conversation))
        return call_agent(intent_agent, deps, intent_prompt(deps), models=services.models,
                          recorder=services.recorder, stage="intent")


@task(name="schema", task_run_name="schema", **RETRIED_TASK)
def retrieve_schema(services: QuestionServices, question: str, intent: Intent) -> SchemaSubset:
    """Retrieve the schema subset the question needs."""
    with services.recorder.stage("schema"):
        begin = time.perf_counter()
        subset = services.schema.retrieve(question, retrieval_intent(intent))
        services.recorder.tool("schema", "retriever", "ok",
                               f"tables {', '.join(subset.table_names)}; "
                               f"{subset.token_count} tokens",
                               (time.perf_counter() - begin) * 1000)
        return subset


@task(name="plan", task_run_name="plan", **RETRIED_TASK)
def make_plan(
    services: QuestionServices, question: str, intent: Intent, subset: SchemaSubset,
    previous_failures: list[str],
) -> PlanOutput:
    """Ask the planner for ordered SQL/Python steps with constraints."""
    with services.recorder.stage("plan"):
        deps = PlannerDeps(question=question, intent=intent, schema_text=subset.outline_text,
                           tables=subset.table_names, allowance=plan_allowance(services.variant),
                           previous_failures=previous_failures,
                           conversation=_planner_conversation(services),
                           reusable=tuple(services.conversation.reusable
                                          if services.conversation else ()))
        return call_agent(planner_agent, deps, planner_prompt(deps), models=services.models,
                          recorder=services.recorder, stage="plan")


@task(name="review", task_run_name="review", **RETRIED_TASK)
def review_evidence(
    services: QuestionServices, state: ExecutionState, evidence: str, summary: str
) -> Review:
    """Ask the reviewer to accept, revise, repair or replan (a refusal counts as replan)."""
    with services.recorder.stage("review"):
        plan = state.plan
        assert plan is not None
        deps = ReviewerDeps(question=state.question, answer_type=plan.answer_type,
                            answer_fields=plan.answer_fields, evidence=evidence,
                            state_summary=summary)
        output = call_agent(reviewer_agent, deps, reviewer_prompt(deps), models=services.models,
                            recorder=services.recorder, stage="review")
        if isinstance(output, ReviewRefusal):
            return Review(decision=ReviewDecision.REPLAN,
                          reason=f"the reviewer could not judge the evidence: {output.reason}")
        return output


@task(name="answer", task_run_name="answer", **RETRIED_TASK)
def write_answer(
    services: QuestionServices, state: ExecutionState, evidence: str
) -> FinalAnswer | AnswerRefusal:
    """Ask the answer agent for ``{answer_type, data_payload, summary}`` and check it.

    The payload must validate against its answer type's JSON Schema and every number in it
    must appear in the evidence; otherwise the agent is asked again (up to the step attempt
    limit), with the problems appended to the evidence.
    """
    with services.recorder.stage("answer"):
        plan = state.plan
        assert plan is not None
        problems: list[str] = []
        for _ in range(services.limits.max_step_attempts):
            shown = evidence if not problems else (
                f"{evidence}\n\nYour previous answer was rejected: {'; '.join(problems)}")
            deps = AnswerDeps(question=state.question, answer_type=plan.answer_type,
                              answer_fields=plan.answer_fields, evidence=shown)
            output = call_agent(answer_agent, deps, answer_prompt(deps), models=services.models,
                                recorder=services.recorder, stage="answer")
            if isinstance(output, AnswerRefusal):
                return output
            problems = answer_problems(output, evidence)
            services.recorder.tool("answer", "answer_check", "ok" if not problems else "rejected",
                                   "; ".join(problems))
            if not problems:
                return output
        return AnswerRefusal(reason="the answer did not pass its checks: " + "; ".join(problems))


def _planner_conversation(services: QuestionServices) -> str:
    """The planner's conversation block: the history, then the reusable artifacts."""
    blocks = [history_block(services.conversation, refusal_rule=False),
              reuse_block(services.conversation)]
    return "\n\n".join(block for block in blocks if block)


def answer_problems(answer: FinalAnswer, evidence: str) -> list[str]:
    """Why ``answer`` is unacceptable: schema violations and numbers not in the evidence."""
    problems = payload_errors(answer.answer_type, answer.data_payload)
    invented = unsupported_numbers(answer.data_payload, evidence)
    if invented:
        problems.append("numbers not found in the evidence: "
                        + ", ".join(f"{value:g}" for value in invented[:10]))
    return problems


def build_evidence(services: QuestionServices, state: ExecutionState) -> str:
    """Evidence of the run: the last step's artifacts (records when small, else previews)."""
    done = [s for s in state.steps.values() if s.artifacts]
    if not done:
        return "no step produced output"
    last = done[-1]
    parts = [f"Evidence from step {last.id} ({last.kind.value}):"]
    for artifact in last.artifacts:
        readable = stored_format(artifact.format)
        if readable is not None and readable.read_records and artifact.name != "result":
            records = records_from_artifact(services.store.read_bytes(artifact.url),
                                            artifact.format)
            parts.append(sql_evidence(artifact.name, records, artifact.preview,
                                      services.settings.flow_evidence_rows))
        elif artifact.name == "result":
            saved = json.loads(services.store.read_text(artifact.url))
            parts.append(python_evidence(saved["summary"], saved["result"]))
        else:
            parts.append(f"file {artifact.name}: {artifact.url} ({artifact.format})")
    return "\n\n".join(parts)


def retrieval_intent(intent: Intent) -> RetrievalIntent | None:
    """Hard filters for schema retrieval from the intent (time step, years); None if none."""
    temporal = _enum_or_none(TemporalGranularity, intent.temporal_granularity)
    years = sorted(intent.scope.years)
    if temporal is None and not years:
        return None
    return RetrievalIntent(
        temporal_granularity=temporal,
        period_start=str(years[0]) if years else None,
        period_end=str(years[-1]) if years else None,
    )


def _enum_or_none(enum: Any, value: str | None) -> Any:
    try:
        return enum(value) if value else None
    except ValueError:
        return None


class AnswerViews(NamedTuple):
    """The map stage's result.

    Its maps (None: nothing drawn), the names of the answer's codes, and the looked-up
    features' artifact when the map drew them as the answer.
    """

    maps: AnswerMaps | None
    names: dict[str, str]
    looked_up: RegistryEntry | None = None


@task(name="map", task_run_name="map", **RETRIED_TASK)
def draw_answer_map(services: QuestionServices, state: ExecutionState,
                    answer: FinalAnswer, focus: MapFocus | None = None) -> AnswerViews:
    """Draw the answer map (``map.png``, ``map.html``); name the answer's codes.

    A stage of its own in the execution log: drawing is part of answering, not orchestration.
    One read-only lookup by key (:func:`geoask.maps.key_lookup.look_up_keys`) gives the names
    beside the answer's codes and, when the run exported none of the answer's features, their
    geometry - then written as the run's artifact ``map.<table>``, for the flow to register
    (``gdf``, the GeoPackage, a later turn read what the map shows). Maps None when there is
    no geometry to draw (:func:`geoask.maps.answer_map.draw_answer_maps`).
    """
    steps = [step.artifacts for step in state.steps.values()]
    with services.recorder.stage("map"):
        keyed = look_up_keys(services.catalog, services.sql_runner, services.settings, answer,
                             tables_read_by(steps))
        maps = draw_answer_maps(services.store, steps, answer, state.question, focus, keyed)
        looked_up = None
        if keyed is not None and keyed.features is not None and maps and maps.looked_up:
            url = services.store.write_text(f"{LOOKUP_STEP}/{keyed.table}.geojson",
                                            keyed.features.to_json(drop_id=True))
            looked_up = keyed.registry_entry(url, services.run_id)
    return AnswerViews(maps, keyed.names if keyed is not None else {}, looked_up)


def export_geopackage(services: QuestionServices) -> str | None:
    """Queue ``layers.gpkg``, every registered layer of the run in its native CRS; its URL.

    Written in the background after the answer (:mod:`geoask.records.background_writes`),
    so the time to the answer does not grow with the run's layers; None when the run
    registered no layer (:func:`geoask.maps.geopackage.write_geopackage`).
    """
    entries = list(services.registry.entries)
    if not any(entry.kind in LAYER_KINDS for entry in entries):
        return None
    url = services.store.url(GEOPACKAGE_FILE)
    background_writes.submit(f"the run's GeoPackage {url}",
                             lambda: write_geopackage(entries, url))
    return url
