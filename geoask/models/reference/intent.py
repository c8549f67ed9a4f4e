"""The :class:`~geoask.vocabulary.plan.Intent` a case's reference program implies.

The operation comes from the case's category and answer type, the years from the question,
Top-K from the reference SQL, a ``within_distance`` relation from the question when every
script reprojects to metres, ``nearest`` when the question asks for the nearest to a named
feature; the reference is the feature the question names by code or quoted name ("(JFK)",
"named 'I- 95'"), as an intent agent reads it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

from geoask.cases.model import AnswerType as CaseAnswerType
from geoask.cases.model import BenchmarkCase, Category
from geoask.cases.steps import ReferenceStep, consolidated_steps, projection_calls
from geoask.sql.shape import outer_limit
from geoask.vocabulary.drafts import measures_in_metres
from geoask.vocabulary.plan import (
    Distance,
    DistanceUnit,
    Intent,
    OperationIntent,
    SpatialPredicate,
    SpatialTopology,
    SpatiotemporalScope,
    StepKind,
)

_YEAR = re.compile(r"\b(1[89][0-9]{2}|20[0-9]{2})\b")
_DISTANCE = re.compile(
    r"\bwithin\s+(\d+(?:\.\d+)?)\s*(km|kilometres|kilometers|mi|miles|m|metres|meters)\b",
    re.IGNORECASE)
_NAMED = re.compile(r"\(([A-Z][A-Z0-9]{1,4})\)|'([^']+)'")
_NEAREST = re.compile(r"\bnearest\b", re.IGNORECASE)
_UNITS: dict[str, DistanceUnit] = {
    "km": "km", "kilometres": "km", "kilometers": "km", "mi": "mi", "miles": "mi",
    "m": "m", "metres": "m", "meters": "m",
}


def case_top_k(case: BenchmarkCase) -> int | None:
    """K of a Top-K case: a ranked list read from one SQL statement ending in LIMIT K.

    None for every other case (a ranked list computed in Python, or several statements in the
    last step: the guard would then demand ORDER BY ... LIMIT K of each of them).
    """
    steps = consolidated_steps(case)
    if case.answer.answer_type is not CaseAnswerType.RANKED_LIST or steps[-1].kind is not \
            StepKind.SQL or len(steps[-1].statements) != 1:
        return None
    return outer_limit(steps[-1].statements[0].sql)


def _scripts_measure_in_metres(steps: Sequence[ReferenceStep]) -> bool:
    """Every script reprojects or measures geodesically (the compute agent's distance rule)."""
    scripts = [step.script for step in steps if step.kind is StepKind.PYTHON]
    try:
        return bool(scripts) and all(measures_in_metres(ast.parse(s)) for s in scripts)
    except SyntaxError:
        return False


def _scripts_project(steps: Sequence[ReferenceStep]) -> bool:
    scripts = [step.script for step in steps if step.kind is StepKind.PYTHON]
    return bool(scripts) and all(projection_calls(script) for script in scripts)


def case_years(question: str) -> list[int]:
    """Calendar years named in ``question``, in order of first mention.

    >>> case_years("Compare 1990 and 2000 (and 1990 again)")
    [1990, 2000]
    """
    return list(dict.fromkeys(int(year) for year in _YEAR.findall(question)))


def _temporal_operation(years: list[int]) -> OperationIntent:
    return OperationIntent.COMPARE_PERIODS if len(years) >= 2 else \
        OperationIntent.COMPARE_BASELINE


def case_operation(case: BenchmarkCase) -> OperationIntent:
    """The operation intent implied by the case's category, answer type and program."""
    if case_top_k(case) is not None:
        return OperationIntent.RANK_TOP_K
    question = case.question.lower()
    if case.category is Category.TEMPORAL:
        return _temporal_operation(case_years(case.question))
    if case.category is Category.SPATIAL:
        steps = consolidated_steps(case)
        return OperationIntent.MEASURE if _scripts_project(steps) else OperationIntent.TOPOLOGY
    if case.category is Category.STATISTICS:
        if "regress" in question:
            return OperationIntent.REGRESSION
        if "cluster" in question:
            return OperationIntent.CLUSTERING
        return OperationIntent.STATISTICS
    if case.category is Category.AGGREGATION:
        return OperationIntent.AGGREGATE
    if case.answer.answer_type is CaseAnswerType.SCALAR and question.startswith("how many"):
        return OperationIntent.COUNT
    if case.answer.answer_type is CaseAnswerType.ENTITY_LIST:
        return OperationIntent.FILTER
    return OperationIntent.LOOKUP


def case_topology(case: BenchmarkCase) -> SpatialTopology:
    """The spatial relation of the case: ``within_distance``, ``nearest`` or none.

    ``within_distance`` with the stated distance when the question has one and every script
    reprojects or measures geodesically (the compute agent's rule,
    :func:`geoask.vocabulary.drafts.measures_in_metres`); ``nearest`` when it asks for the
    nearest to a named feature; no predicate otherwise. The named reference is kept in every
    case (the answer map draws it).
    """
    match = _DISTANCE.search(case.question)
    reference = named_reference(case.question)
    if match is not None and _scripts_measure_in_metres(consolidated_steps(case)):
        distance = Distance(value=float(match.group(1)), unit=_UNITS[match.group(2).lower()])
        return SpatialTopology(predicate=SpatialPredicate.WITHIN_DISTANCE, distance=distance,
                               reference=reference or "the features named in the question")
    if reference and _NEAREST.search(case.question):
        return SpatialTopology(predicate=SpatialPredicate.NEAREST, reference=reference)
    return SpatialTopology(reference=reference)


def named_reference(question: str) -> str | None:
    """The first feature ``question`` names by a code in parentheses or a quoted name.

    >>> named_reference("Which airport is nearest to John F Kennedy International (JFK)?")
    'JFK'
    >>> named_reference("incidents within 20 metres of 'I- 95' (EPSG:32618)")
    'I- 95'
    """
    found = _NAMED.search(question)
    return next(g for g in found.groups() if g) if found else None


def case_intent(case: BenchmarkCase) -> Intent:
    """The intent tuple the case's reference program implies."""
    steps = consolidated_steps(case)
    return Intent(
        target=steps[-1].objective,
        scope=SpatiotemporalScope(years=case_years(case.question)),
        topology=case_topology(case),
        operation=case_operation(case),
        top_k=case_top_k(case),
    )
