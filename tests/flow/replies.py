"""Builders of scripted agent replies for the flow tests and the overhead benchmark.

The answer replies are functions of the prompt: they read the evidence the flow put in the
answer agent's prompt (``records (JSON): ...`` / ``result (JSON): ...``) and copy numbers from
it, as a model would - so the numbers asserted by the tests come from the pipeline.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from geoask.vocabulary.answers import AnswerType, FinalAnswer
from geoask.vocabulary.drafts import ComputeScript, SqlDraft, SqlStatement
from geoask.vocabulary.evidence import RECORDS_MARKER, RESULT_MARKER
from geoask.vocabulary.plan import (
    Distance,
    ExecutionConstraints,
    Intent,
    IntentRejection,
    OperationIntent,
    Plan,
    PlanStep,
    RejectionType,
    Review,
    ReviewDecision,
    SpatialPredicate,
    SpatialTopology,
    SpatiotemporalScope,
)


def intent(target: str, operation: OperationIntent, *, years: tuple[int, ...] = (),
           top_k: int | None = None, distance_m: float | None = None) -> Intent:
    """An in-scope intent."""
    topology = (SpatialTopology(predicate=SpatialPredicate.WITHIN_DISTANCE,
                                distance=Distance(value=distance_m, unit="m"),
                                reference="interstate highways")
                if distance_m else SpatialTopology())
    return Intent(target=target, scope=SpatiotemporalScope(years=list(years)),
                  topology=topology, operation=operation, top_k=top_k)


def rejection() -> IntentRejection:
    """An off-topic rejection."""
    return IntentRejection(rejection_type=RejectionType.CHIT_CHAT,
                           message="I answer questions about the spatial data in the database, "
                                   "such as US states, counties, airports and climate.")


def constraints(*, computation: bool, geometry: bool = False, granularity: str = "state",
                category: str = "attribute_filter_rank",
                temporal: str = "none") -> ExecutionConstraints:
    """Execution constraints."""
    return ExecutionConstraints(
        computation_needed=computation, geometry_needed=geometry, input_mode="single",
        spatial_granularity=granularity,  # type: ignore[arg-type]
        operation_category=category,  # type: ignore[arg-type]
        temporal_comparison=temporal)  # type: ignore[arg-type]


def sql_plan(objective: str, answer_type: AnswerType, fields: list[str], *,
             top_k: int | None = None, **constraint_args: Any) -> Plan:
    """A one-step SQL plan."""
    step = PlanStep(id="sql-1", objective=objective,
                    expected_output=", ".join(fields), success_criteria="rows returned",
                    top_k=top_k)
    return Plan(steps=[step], constraints=constraints(computation=False, **constraint_args),
                answer_type=answer_type, answer_fields=fields)


def sql_python_plan(sql_objective: str, python_objective: str, answer_type: AnswerType,
                    fields: list[str], **constraint_args: Any) -> Plan:
    """An SQL step exporting data, then one Python step computing the answer."""
    steps = [
        PlanStep(id="sql-1", objective=sql_objective,
                 expected_output="the rows to compute on", success_criteria="rows returned"),
        PlanStep(id="python-1", objective=python_objective,
                 inputs=["sql-1"], expected_output=", ".join(fields),
                 success_criteria="a success protocol object"),
    ]
    return Plan(steps=steps, constraints=constraints(computation=True, **constraint_args),
                answer_type=answer_type, answer_fields=fields)


def draft(*statements: tuple[str, str], needs_python: bool = False) -> SqlDraft:
    """SQL statements as ``(name, sql)`` pairs."""
    return SqlDraft(statements=[SqlStatement(name=name, sql=sql, purpose=f"{name} rows")
                                for name, sql in statements], needs_python=needs_python)


def script(code: str, method: str = "geopandas in the local UTM zone") -> ComputeScript:
    """A compute script."""
    return ComputeScript(script=code, method=method)


def accept(reason: str = "the evidence answers the question") -> Review:
    """The reviewer accepts."""
    return Review(decision=ReviewDecision.ACCEPT, reason=reason)


def evidence_json(prompt: str) -> Any:
    """The records or result the flow showed in the prompt (the last marker wins)."""
    for line in reversed(prompt.splitlines()):
        for marker in (RECORDS_MARKER, RESULT_MARKER):
            if line.startswith(marker):
                return json.loads(line[len(marker):])
    raise AssertionError(f"no evidence JSON in the prompt:\n{prompt[:2000]}")


def answer_from(answer_type: AnswerType, build: Callable[[Any], tuple[Any, str]]
                ) -> Callable[[str], FinalAnswer]:
    """An answer reply: ``build(evidence) -> (data_payload, summary)``."""
    def reply(prompt: str) -> FinalAnswer:
        payload, summary = build(evidence_json(prompt))
        return FinalAnswer(answer_type=answer_type, data_payload=payload, summary=summary)

    return reply
