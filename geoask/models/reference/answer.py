"""The final answer PROJECTED FROM THE EVIDENCE shown to the answer agent.

The last step's output is read from the answer prompt and projected with the case's answer
contract (:func:`geoask.cases.projection.project_answer`); the expected value is never read.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from geoask.base.answer_text import headline
from geoask.cases.model import AnswerType as CaseAnswerType
from geoask.cases.model import BenchmarkCase, Projection
from geoask.cases.model import SqlStatement as CaseStatement
from geoask.cases.projection import ProjectionError, project_answer
from geoask.cases.steps import ReferenceStep, consolidated_steps
from geoask.vocabulary.answers import AnswerRefusal, AnswerType, FinalAnswer
from geoask.vocabulary.evidence import RECORDS_MARKER, RESULT_MARKER
from geoask.vocabulary.plan import StepKind


def _last_sql_statement(steps: Sequence[ReferenceStep]) -> CaseStatement | None:
    last = steps[-1]
    return last.statements[-1] if last.kind is StepKind.SQL else None


def evidence_data(prompt: str, case: BenchmarkCase) -> Any:
    """The last step's output shown in an answer prompt.

    That is the last SQL statement's records, or the script's ``result``.

    Raises:
        ProjectionError: the evidence does not list that output in full.

    """
    steps = consolidated_steps(case)
    text = prompt.split("\n\nYour previous answer was rejected:")[0]
    lines = text.splitlines()
    statement = _last_sql_statement(steps)
    if statement is None:
        for line in reversed(lines):
            if line.startswith(RESULT_MARKER):
                return _json(line[len(RESULT_MARKER):])
        raise ProjectionError("the evidence holds no script result")
    head = f"artifact {statement.name}: "
    for number, line in enumerate(lines):
        if line.startswith(head):
            following = lines[number + 1] if number + 1 < len(lines) else ""
            if following.startswith(RECORDS_MARKER):
                return _json(following[len(RECORDS_MARKER):])
            raise ProjectionError(f"the evidence shows only a preview of {statement.name} "
                                  "(raise GEOASK_FLOW_EVIDENCE_ROWS)")
    raise ProjectionError(f"the evidence has no artifact {statement.name}")


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ProjectionError(f"the evidence JSON is cut off or unreadable ({error})") from None


def answer_payload(projected: Any, answer_type: CaseAnswerType,
                   projection: Projection) -> dict[str, Any]:
    """The ``data_payload`` (geoask.vocabulary.answers schema) of a projected answer, with its unit.

    >>> answer_payload(3, CaseAnswerType.SCALAR, Projection(value_field="n", unit="count"))
    {'value': 3, 'unit': 'count'}
    """
    unit = {"unit": projection.unit} if projection.unit else {}
    if answer_type is CaseAnswerType.SCALAR:
        return {"value": projected, **unit}
    if answer_type is CaseAnswerType.ENTITY_LIST:
        return {"entities": [{"id": entity} for entity in projected]}
    if answer_type is CaseAnswerType.RANKED_LIST:
        items = [{"rank": rank, "id": item["id"], "value": item.get("value")}
                 for rank, item in enumerate(projected, start=1)]
        order = {"order": projection.order} if projection.order != "none" else {}
        return {"items": items, **unit, **order}
    if answer_type is CaseAnswerType.RECORDS:
        units = ({"units": {name: projection.unit for name in projection.value_fields}}
                 if projection.unit else {})
        return {"records": projected, **units}
    if answer_type is CaseAnswerType.OBJECT:
        extra = unit if "unit" not in projected else {}
        return {**projected, **extra}
    if answer_type is CaseAnswerType.BBOX:
        return {"bbox": projected}
    return {"geometry": projected}


def case_answer(case: BenchmarkCase, prompt: str) -> FinalAnswer | AnswerRefusal:
    """The final answer projected from the evidence in the answer prompt (never ``expected``)."""
    try:
        data = evidence_data(prompt, case)
        projected = project_answer(data, case.answer.answer_type, case.answer.projection)
    except ProjectionError as error:
        return AnswerRefusal(reason=f"the evidence does not give the answer: {error}")
    payload = answer_payload(projected, case.answer.answer_type, case.answer.projection)
    return FinalAnswer(answer_type=AnswerType(case.answer.answer_type.value),
                       data_payload=payload, summary=answer_summary(case, projected))


def answer_summary(case: BenchmarkCase, projected: Any) -> str:
    """One sentence for the user: the answer's headline, and where it comes from.

    The headline is written from the answer payload as ``geoask ask`` heads it
    (:func:`geoask.base.answer_text.headline`).

    >>> from geoask.cases.model import AnswerContract
    >>> c = BenchmarkCase.model_construct(id="x-001", answer=AnswerContract(
    ...     answer_type="scalar", projection=Projection(value_field="n", unit="km")))
    >>> answer_summary(c, 12.5)
    '12.5 km (verified program of benchmark case x-001).'
    """
    payload = answer_payload(projected, case.answer.answer_type, case.answer.projection)
    return (f"{headline(case.answer.answer_type.value, payload)} "
            f"(verified program of benchmark case {case.id}).")
