"""The score record of one question run (:class:`CaseScore`) and :func:`score_case`."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from geoask.bench.evaluate.answer_types import judge_answer
from geoask.bench.evaluate.causes import root_cause, routed_to_sandbox
from geoask.bench.evaluate.entities import list_match, no_answer_list_match
from geoask.cases.model import BenchmarkCase
from geoask.vocabulary.answers import payload_errors

if TYPE_CHECKING:
    from geoask.records.execution_log import ExecutionLog
    from geoask.vocabulary.answers import FinalAnswer


@dataclass(frozen=True)
class CaseScore:
    """Everything measured for one question run; JSON-serialisable via :meth:`to_dict`.

    Attributes:
        case_id: the benchmark case id.
        variant: the architecture variant (FULL, POSTGIS, NO_STCA, NO_PLANNER, BASE).
        repeat: 0-based repeat index of the run.
        difficulty: ``easy``, ``medium`` or ``hard``.
        category: the case's category.
        answer_type: the contracted answer type.
        outcome: ``answered``, ``rejected``, ``failed``, ``error`` (the log's outcome) or
            ``no_answer`` when there is neither an answer nor a log.
        answered: the pipeline produced a final answer.
        answer_type_ok: the answer has the contracted answer type.
        schema_valid: the payload validates against the answer type's JSON Schema.
        ssa: Strict Structured Accuracy of this case (correct or not).
        reason: why it is not correct (empty when correct).
        exact_set: list questions: Exact Set Match; None for other answer types.
        ranking_exact: ranked lists: Ranking Exact Match; None otherwise.
        entity_precision: list questions: entity precision; None otherwise.
        entity_recall: list questions: entity recall; None otherwise.
        entity_f1: list questions: entity F1; None otherwise.
        requires_sandbox: ground truth: the reference program runs Python.
        routed_to_sandbox: the run invoked the Python sandbox (from its trace).
        failed_calls: failed model calls and tool uses of the run.
        tool_calls: SQL statements, sandbox runs (scripts or session cells) and schema
            inspections the run asked for, refused ones included (:func:`tool_call_count`).
        guardrail_retries: framework-level recovery transitions (revise, repair, replan).
        first_path_success: correct with no failed call and no guardrail retry (FEPSR term).
        time_s: end-to-end time of the run (s).
        prompt_tokens: prompt tokens over all model calls.
        completion_tokens: completion tokens over all model calls.
        total_tokens: prompt + completion tokens.
        root_cause: a :class:`RootCause` value for a failure where one can be told, else None.

    """

    case_id: str
    variant: str
    repeat: int
    difficulty: str
    category: str
    answer_type: str
    outcome: str
    answered: bool
    answer_type_ok: bool
    schema_valid: bool
    ssa: bool
    reason: str
    exact_set: bool | None
    ranking_exact: bool | None
    entity_precision: float | None
    entity_recall: float | None
    entity_f1: float | None
    requires_sandbox: bool
    routed_to_sandbox: bool
    failed_calls: int
    guardrail_retries: int
    first_path_success: bool
    time_s: float
    tool_calls: int
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    root_cause: str | None

    def to_dict(self) -> dict[str, Any]:
        """The score as plain JSON data (for resume files and the report)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CaseScore:
        """A score from :meth:`to_dict` output.

        Raises:
            ValueError: a field is missing (the file is from another version).

        """
        names = [field.name for field in dataclasses.fields(cls)]
        missing = [name for name in names if name not in data]
        if missing:
            raise ValueError(f"a case score needs {missing}")
        return cls(**{name: data[name] for name in names})


TOOL_CALL_TOOLS = frozenset({"guard", "sandbox", "inspect"})
"""Trace tools that mark one tool call: every SQL statement meets the guard first."""


def tool_call_count(log: ExecutionLog | None) -> int:
    """Tool calls of a run: its trace entries of :data:`TOOL_CALL_TOOLS` (0 without a log)."""
    if log is None:
        return 0
    return sum(entry.tool in TOOL_CALL_TOOLS for entry in log.tool_trace)


def run_seconds(log: ExecutionLog | None) -> float:
    """End-to-end time of the run from its stage timings (s; 0 without a log)."""
    if log is None:
        return 0.0
    return sum(stage.duration_ms for stage in log.stages) / 1000.0


def score_case(
    case: BenchmarkCase,
    answer: FinalAnswer | None,
    log: ExecutionLog | None,
    *,
    variant: str | None = None,
    repeat: int = 0,
    time_s: float | None = None,
    evidence_matches: bool | None = None,
    infrastructure: bool = False,
) -> CaseScore:
    """Score one question run.

    Args:
        case: the verified case.
        answer: the pipeline's final answer; None when it produced none.
        log: the run's execution log (route, tool trace, tokens...); None when there is none.
        variant: the architecture variant (default: the log's variant, else ``FULL``).
        repeat: 0-based repeat index.
        time_s: the end-to-end wall time the caller measured (s); default: the log's stages.
        evidence_matches: whether the run's last-step output, projected with the case's
            contract, equals the expected value (lets a wrong answer over right evidence be
            blamed on answer projection); None when unknown.
        infrastructure: the run ended on an infrastructure failure (database, model
            endpoint, sandbox, Prefect API): its root cause is ``infrastructure``.

    """
    payload = answer.data_payload if answer is not None else None
    answer_type = answer.answer_type if answer is not None else None
    verdict = judge_answer(case, answer_type, payload)
    lists = list_match(case, payload) if answer is not None else no_answer_list_match(case)
    calls = log.model_calls if log is not None else []
    prompt = sum(call.prompt_tokens for call in calls)
    completion = sum(call.completion_tokens for call in calls)
    failed = log.failed_calls if log is not None else 0
    retries = log.guardrail_retries if log is not None else 0
    cause = root_cause(case, verdict, log, evidence_matches, infrastructure)
    return CaseScore(
        case_id=case.id,
        variant=variant or (log.variant if log is not None else "FULL"),
        repeat=repeat,
        difficulty=case.difficulty.value,
        category=case.category.value,
        answer_type=case.answer.answer_type.value,
        outcome=log.outcome if log is not None else ("answered" if answer else "no_answer"),
        answered=answer is not None,
        answer_type_ok=answer is not None and verdict.kind != "contract",
        schema_valid=answer is not None and not payload_errors(answer.answer_type, payload),
        ssa=verdict.matches,
        reason=verdict.reason,
        exact_set=lists.exact_set if lists else None,
        ranking_exact=lists.ranking_exact if lists else None,
        entity_precision=lists.precision if lists else None,
        entity_recall=lists.recall if lists else None,
        entity_f1=lists.f1 if lists else None,
        requires_sandbox=case.requires_sandbox,
        routed_to_sandbox=routed_to_sandbox(log),
        failed_calls=failed,
        guardrail_retries=retries,
        first_path_success=verdict.matches and failed == 0 and retries == 0,
        time_s=float(time_s) if time_s is not None and math.isfinite(time_s)
        else run_seconds(log),
        tool_calls=tool_call_count(log),
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=prompt + completion,
        root_cause=cause.value if cause is not None else None,
    )
