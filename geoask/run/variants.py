"""Pipeline variants (``GEOASK_VARIANT`` / ``geoask ask --variant``) and the plans they allow.

=========== ============== ======= ============ ==============================================
variant     SQL policy     planner Python steps meaning
=========== ============== ======= ============ ==============================================
FULL        separated      yes     yes          spatial computation in Python, never in SQL
POSTGIS     postgis        yes     yes          spatial SQL (ST_*) allowed as well
NO_STCA     postgis        yes     no           no computation agent: everything in SQL
NO_PLANNER  separated      no      on request   one SQL step; Python only if the SQL agent asks
BASE        separated      no      no           plain relational SQL only
REACT       separated      no      cells        one tool-using agent over a persistent session
PLAN_EXEC.. separated      yes     yes          plan once, execute, replan on failure; no
                                                execution-state manager, no reviewer
=========== ============== ======= ============ ==============================================

REACT and PLAN_EXECUTE are the published baselines (``design`` ``react``/``plan_execute``),
run by ``flows/baselines.py``; the other five are designs of the staged pipeline.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from geoask.catalog.model import Catalog
from geoask.errors import ConfigurationError
from geoask.run.state import Decision, ExecutionState, Transition
from geoask.settings import Settings
from geoask.sql.context import AnswerContract, GuardContext, SpatialPolicy
from geoask.vocabulary.answers import AnswerType
from geoask.vocabulary.plan import (
    ExecutionConstraints,
    Intent,
    OperationCategory,
    OperationIntent,
    Plan,
    PlanAllowance,
    PlanStep,
    StepKind,
)


class Variant(StrEnum):
    """The five pipeline variants of issue #6 and the two baselines of issue #19."""

    FULL = "FULL"
    POSTGIS = "POSTGIS"
    NO_STCA = "NO_STCA"
    NO_PLANNER = "NO_PLANNER"
    BASE = "BASE"
    REACT = "REACT"
    PLAN_EXECUTE = "PLAN_EXECUTE"


@dataclass(frozen=True)
class VariantConfig:
    """What a variant switches on or off.

    Attributes:
        policy: spatial policy of the SQL guard.
        use_planner: True if the planner agent makes the plan; else a one-SQL-step plan.
        python_steps: ``"yes"`` (planned Python steps run), ``"no"`` (never) or
            ``"on_request"`` (added only when the SQL agent sets ``needs_python``).
        design: ``staged`` (the execution-state manager's pipeline), ``react`` (one agent
            with tools over a persistent sandbox session) or ``plan_execute`` (plan once,
            execute, replan on failure).

    """

    policy: SpatialPolicy
    use_planner: bool
    python_steps: Literal["yes", "no", "on_request"]
    design: Literal["staged", "react", "plan_execute"] = "staged"

    def guard_context(self, settings: Settings, catalog: Catalog | None = None,
                      contract: AnswerContract = AnswerContract.NONE) -> GuardContext:
        """The SQL guard's context of this variant's SQL (its policy, settings, the catalog).

        Bounding-box screens are allowed only where a Python step always follows to refine
        them: not in BASE or NO_STCA, which have none, nor in NO_PLANNER, whose Python step
        runs only when the SQL agent asks for one - there a screen's superset could become the
        answer.
        """
        context = GuardContext.from_settings(settings, policy=self.policy, contract=contract,
                                             catalog=catalog)
        return dataclasses.replace(context, screens=self.python_steps == "yes")


VARIANTS: dict[Variant, VariantConfig] = {
    Variant.FULL: VariantConfig(SpatialPolicy.SEPARATED, True, "yes"),
    Variant.POSTGIS: VariantConfig(SpatialPolicy.POSTGIS, True, "yes"),
    Variant.NO_STCA: VariantConfig(SpatialPolicy.POSTGIS, True, "no"),
    Variant.NO_PLANNER: VariantConfig(SpatialPolicy.SEPARATED, False, "on_request"),
    Variant.BASE: VariantConfig(SpatialPolicy.SEPARATED, False, "no"),
    Variant.REACT: VariantConfig(SpatialPolicy.SEPARATED, False, "yes", "react"),
    Variant.PLAN_EXECUTE: VariantConfig(SpatialPolicy.SEPARATED, True, "yes", "plan_execute"),
}


def parse_variant(name: str) -> Variant:
    """The variant called ``name`` (case-insensitive, ``-`` or ``_``).

    >>> parse_variant("no-planner")
    <Variant.NO_PLANNER: 'NO_PLANNER'>

    Raises:
        ConfigurationError: ``name`` is not one of the seven variants.

    """
    key = name.strip().upper().replace("-", "_")
    try:
        return Variant(key)
    except ValueError:
        choices = ", ".join(v.value for v in Variant)
        raise ConfigurationError(
            f"unknown variant {name!r}; use one of {choices} (--variant or GEOASK_VARIANT)"
        ) from None


def plan_allowance(variant: Variant) -> PlanAllowance:
    """What ``variant`` allows a plan, as the planner's deps carry it.

    >>> plan_allowance(Variant.NO_STCA)
    PlanAllowance(label='NO_STCA', python_steps=False, policy=<SpatialPolicy.POSTGIS: 'postgis'>)
    """
    config = VARIANTS[variant]
    return PlanAllowance(label=variant.value, python_steps=config.python_steps != "no",
                         policy=config.policy)


_CATEGORY_BY_OPERATION: dict[OperationIntent, OperationCategory] = {
    OperationIntent.AGGREGATE: "grouped_aggregation",
    OperationIntent.COUNT: "grouped_aggregation",
    OperationIntent.COMPARE_PERIODS: "temporal_comparison",
    OperationIntent.COMPARE_BASELINE: "temporal_comparison",
    OperationIntent.MEASURE: "spatial_geometry",
    OperationIntent.TOPOLOGY: "spatial_geometry",
    OperationIntent.STATISTICS: "statistics",
    OperationIntent.REGRESSION: "statistics",
    OperationIntent.CLUSTERING: "statistics",
}

_ANSWER_TYPE_BY_OPERATION: dict[OperationIntent, AnswerType] = {
    OperationIntent.RANK_TOP_K: AnswerType.RANKED_LIST,
    OperationIntent.COUNT: AnswerType.SCALAR,
    OperationIntent.FILTER: AnswerType.ENTITY_LIST,
    OperationIntent.LOOKUP: AnswerType.RECORDS,
}


def single_sql_plan(question: str, intent: Intent) -> Plan:
    """The plan of the variants without a planner: one SQL step answering the whole question.

    The answer type is guessed from the operation (ranked list for Top-K, scalar for a count,
    entity list for a filter, records otherwise).
    """
    category = _CATEGORY_BY_OPERATION.get(intent.operation, "attribute_filter_rank")
    constraints = ExecutionConstraints(
        computation_needed=False,
        geometry_needed=False,
        input_mode="single",
        spatial_granularity="none",  # no planner to name the unit of analysis
        operation_category=category,
    )
    step = PlanStep(
        id="sql-1",
        objective=f"Answer the whole question in SQL: {question}",
        expected_output=f"the rows answering the question about {intent.target}",
        success_criteria="the query runs and returns the rows the question asks for",
        top_k=intent.top_k,
    )
    return Plan(
        steps=[step],
        constraints=constraints,
        answer_type=_ANSWER_TYPE_BY_OPERATION.get(intent.operation, AnswerType.RECORDS),
    )


def with_python_step(plan: Plan, question: str) -> Plan:
    """``plan`` plus one Python step reading every SQL step (NO_PLANNER, on the SQL agent's ask).

    The constraints are updated to say computation is needed; the plan is returned unchanged
    if it already has a Python step.
    """
    if any(step.kind is StepKind.PYTHON for step in plan.steps):
        return plan
    inputs = [step.id for step in plan.steps if step.kind is StepKind.SQL]
    python = PlanStep(
        id="python-1",
        objective=f"Compute the answer from the SQL results: {question}",
        inputs=inputs,
        expected_output="the values answering the question",
        success_criteria="the script prints a success protocol object with the answer",
    )
    constraints = plan.constraints.model_copy(
        update={"computation_needed": True, "geometry_needed": True}
    )
    return plan.model_copy(update={"steps": [*plan.steps, python], "constraints": constraints})


def plan_execute_decision(state: ExecutionState, step_id: str, reason: str) -> Decision:
    """What PLAN_EXECUTE does after ``step_id`` failed: replan, or stop when that is used up.

    The classic baseline has no step-level recovery (no revise, no repair, no reviewer): any
    failed step drops the plan and the planner is asked again with the failure, at most
    ``limits.max_replans`` times and within ``limits.max_step_runs`` step runs.

    >>> from geoask.run.state import Limits, start
    >>> plan_execute_decision(start("q", "PLAN_EXECUTE", Limits()), "sql-1", "bad").transition
    <Transition.REPLAN: 'replan'>
    >>> plan_execute_decision(start("q", "PLAN_EXECUTE", Limits(max_replans=0)), "sql-1",
    ...                       "bad").transition
    <Transition.TERMINATE: 'terminate'>
    """
    why = f"{step_id} failed: {' '.join(reason.split())[:240]}"
    if state.step_runs >= state.limits.max_step_runs:
        return Decision(transition=Transition.TERMINATE, reason=f"{why}; the step budget of "
                        f"{state.limits.max_step_runs} step runs is used up")
    if state.replans >= state.limits.max_replans:
        return Decision(transition=Transition.TERMINATE,
                        reason=f"{why}; all {state.limits.max_replans} replans are used")
    return Decision(transition=Transition.REPLAN, reason=why)
