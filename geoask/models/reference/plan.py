"""The :class:`~geoask.vocabulary.plan.Plan` mirroring a case's consolidated reference steps."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

from geoask.cases.model import REUSE_PREFIX, BenchmarkCase, Category, Projection
from geoask.cases.model import SqlStatement as CaseStatement
from geoask.cases.steps import ReferenceStep, consolidated_steps
from geoask.catalog.model import TODO
from geoask.catalog.spatial import names_vector_column
from geoask.models.reference.intent import case_operation, case_top_k, case_years
from geoask.sql.shape import output_columns, tables_read
from geoask.vocabulary.answers import AnswerType
from geoask.vocabulary.plan import (
    ExecutionConstraints,
    OperationCategory,
    OperationIntent,
    Plan,
    PlanStep,
    StepKind,
    TemporalComparison,
)

_CATEGORY: dict[Category, OperationCategory] = {
    Category.ATTRIBUTE: "attribute_filter_rank", Category.AGGREGATION: "grouped_aggregation",
    Category.TEMPORAL: "temporal_comparison", Category.SPATIAL: "spatial_geometry",
    Category.STATISTICS: "statistics",
}
_TEMPORAL_COMPARISON: dict[OperationIntent, TemporalComparison] = {
    OperationIntent.COMPARE_PERIODS: "period_vs_period",
    OperationIntent.COMPARE_BASELINE: "vs_baseline",
}


def _geometry_selected(statements: Iterable[CaseStatement]) -> bool:
    for statement in statements:
        columns = output_columns(statement.sql) or []
        if any(c == "*" or names_vector_column(c) for c in columns):
            return True
    return False


def case_plan(case: BenchmarkCase, replanned: bool = False,
              shown_tables: Collection[str] | None = None,
              granularities: Mapping[str, str] | None = None) -> Plan:
    """The plan mirroring the case's consolidated reference steps.

    ``geometry_needed`` is true when a Python step follows and every SQL step exports a
    geometry column; the last step carries the case's Top-K. An SQL step names the tables its
    statements read, only those of ``shown_tables`` (the planner's schema outline) if given:
    a planner cannot name what it was not shown. ``spatial_granularity`` is that of the first
    table read whose unit ``granularities`` (table -> label, from the same outline) gives,
    else ``none``.
    """
    steps = consolidated_steps(case)
    has_python = any(step.kind is StepKind.PYTHON for step in steps)
    sql_steps = [step for step in steps if step.kind is StepKind.SQL]
    geometry = has_python and bool(sql_steps) and all(
        _geometry_selected(step.statements) for step in sql_steps)
    category: OperationCategory = _CATEGORY[case.category]
    if category == "spatial_geometry" and has_python and not geometry:
        # Deliberate: the reference program computes from attributes (e.g. lon/lat), which
        # the planner rule spatial_computation_needs_geometry does not allow; see report.
        category = "statistics"
    operation = case_operation(case)
    temporal: TemporalComparison = _TEMPORAL_COMPARISON.get(operation, "none")
    if case.category is Category.TEMPORAL and temporal == "none":
        temporal = "period_vs_period" if len(case_years(case.question)) >= 2 else "vs_baseline"
    inputs_read = sum(len(step.statements) for step in sql_steps) + len(
        {name for step in steps for name in step.inputs if name.startswith(REUSE_PREFIX)})
    constraints = ExecutionConstraints(
        computation_needed=has_python, geometry_needed=geometry,
        input_mode="multiple" if has_python and inputs_read > 1 else "single",
        spatial_granularity=_first_granularity(sql_steps, granularities or {}),
        operation_category=category,
        temporal_comparison=temporal,
    )
    top_k = case_top_k(case)
    suffix = " (new plan after a failed one)" if replanned else ""
    plan_steps = [
        PlanStep(
            id=step.id, objective=step.objective + suffix,
            tables=list(dict.fromkeys(
                name for statement in step.statements for name in tables_read(statement.sql) or []
                if shown_tables is None or name in shown_tables)),
            inputs=list(step.inputs), expected_output=_expected_output(step, case),
            top_k=top_k if step is steps[-1] else None,
        )
        for step in steps
    ]
    return Plan(steps=plan_steps, constraints=constraints,
                answer_type=AnswerType(case.answer.answer_type.value),
                answer_fields=answer_fields(case.answer.projection))


def _first_granularity(steps: Iterable[ReferenceStep], granularities: Mapping[str, str]) -> str:
    read = (name for step in steps for statement in step.statements
            for name in tables_read(statement.sql) or [])
    return next((granularities[name] for name in read
                 if granularities.get(name, TODO) != TODO), "none")


def answer_fields(projection: Projection) -> list[str]:
    """The fields the answer is read from, per the projection."""
    names = [projection.entity_field, projection.value_field, *projection.key_fields,
             *projection.value_fields, *projection.fields]
    return list(dict.fromkeys(name for name in names if name))


def _expected_output(step: ReferenceStep, case: BenchmarkCase) -> str:
    if step.kind is StepKind.PYTHON:
        return ", ".join(answer_fields(case.answer.projection)) or "the computed values"
    parts = [f"{s.name}: {', '.join(output_columns(s.sql) or ['*'])}" for s in step.statements]
    return "; ".join(parts)
