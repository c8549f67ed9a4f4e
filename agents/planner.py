"""The planner agent: ordered SQL-retrieval and Python-computation steps with constraints.

Consolidation (after CGD-QCSF): adjacent SQL extractions form one SQL step (which may emit
several statements), a chain of Python computations forms one script, so a plan alternates
SQL and Python steps and always starts with SQL. The plan models are in
:mod:`geoask.vocabulary.plan`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic_ai import Agent, RunContext

from agents._checks import raise_for_errors
from agents._schema import COMPACT_OUTPUT_TOOLS, compact_json
from geoask.sql.context import SpatialPolicy
from geoask.vocabulary.answers import AnswerType
from geoask.vocabulary.plan import (
    Intent,
    OperationIntent,
    Plan,
    PlanAllowance,
    PlanOutput,
    PlanRefusal,
    StepKind,
)

# The Agent itself is defined at the end of this module (see agents/README.md).


@dataclass(frozen=True)
class PlannerDeps:
    """What the planner sees.

    The question, its intent, the pre-filtered schema (``schema_text``: its outline,
    ``tables``: its table names), what the variant allows a plan and, on a replan, why the
    earlier plans failed. In a conversation turn, ``conversation`` is the history and reuse
    block (:mod:`geoask.run.conversation`) and ``reusable`` the refs of earlier turns' artifacts a
    Python step may read (``turn-1.sql-1.cells``); both are empty for a standalone question.
    """

    question: str
    intent: Intent
    schema_text: str
    tables: list[str]
    allowance: PlanAllowance
    previous_failures: list[str] = field(default_factory=list)
    conversation: str = ""
    reusable: tuple[str, ...] = ()


# --- instructions --------------------------------------------------------------------------
# Developer note: the rules follow the CGD-QCSF planner: steps are SQL retrieval or Python
# computation only, consolidated, with structured execution constraints (its Table 2).

INSTRUCTIONS = """\
Plan how to answer one question about a PostGIS database from its intent, the schema outline and
the variant. Write no SQL or Python; state no result values.
- Steps are sql (database retrieval) or python (computation in a sandbox reading only files that
  earlier sql steps exported). Start with sql; ids sql-1, python-1, sql-2, ... One round of
  extractions is one sql step (a file per statement), a computation one python step, so kinds
  alternate.
- sql steps list the tables they read (the SQL writer sees only these); python steps list as
  inputs the sql steps whose files they read.
- sql alone for lookups, filters, sorting, counts, grouped aggregation; sql then python for
  buffers, distances, overlays, topology, zonal or spatial statistics, regression, clustering.
  Follow the variant's rule.
- objective: one or two sentences; expected_output: columns the output must have. Top-K: the
  last step's top_k is K, answer_type ranked_list.
- constraints: geometry_needed if python needs geometries (SQL exports GeoJSON); input_mode:
  files the computation reads; spatial_granularity: unit of the analysed features
  (a lower_snake_case label such as the tables' row units);
  temporal_comparison: not none for period or baseline comparisons.
- answer_fields: fields of the last step's output the answer is read from.
If earlier plans failed (listed), avoid their failures. PlanRefusal only if the schema cannot
answer the question.
"""

# The planning rule told with the variant: no Python steps, else the spatial policy's rule.
NO_PYTHON_RULE = "no python steps"
POLICY_RULES: dict[SpatialPolicy, str] = {
    SpatialPolicy.SEPARATED: "keep spatial computation out of SQL: select geometry, compute in "
                             "Python; filter-refine: SQL may screen rows with a bounding box "
                             "(&& with a conservative margin), Python then refines exactly",
    SpatialPolicy.POSTGIS: "PostGIS functions may be used in SQL",
}


def variant_rule(allowance: PlanAllowance) -> str:
    """The planning rule of what the variant allows, as the prompt states it.

    >>> variant_rule(PlanAllowance("NO_STCA", python_steps=False, policy=SpatialPolicy.POSTGIS))
    'no python steps'
    """
    return POLICY_RULES[allowance.policy] if allowance.python_steps else NO_PYTHON_RULE


# --- checks (pure; one rule each, all in PLAN_RULES) ---------------------------------------


def first_step_is_sql(plan: Plan, deps: PlannerDeps) -> str | None:
    """The first step is an SQL step (a Python step reads files earlier SQL steps exported).

    In a conversation turn a Python step reading only earlier turns' artifacts may come first.
    """
    first = plan.steps[0]
    if first.kind is StepKind.SQL:
        return None
    if first.inputs and all(name in deps.reusable for name in first.inputs):
        return None
    return f"the first step must be an SQL step, not {first.id}"


def ids_unique(plan: Plan, deps: PlannerDeps) -> str | None:
    """No two steps have the same id."""
    ids = [step.id for step in plan.steps]
    twice = list(dict.fromkeys(i for n, i in enumerate(ids) if i in ids[:n]))
    return "; ".join(f"step id {i} is used twice" for i in twice) or None


def inputs_name_earlier_steps(plan: Plan, deps: PlannerDeps) -> str | None:
    """A step's inputs are ids of steps before it (or artifacts of earlier turns)."""
    problems = []
    for n, step in enumerate(plan.steps):
        earlier = {before.id for before in plan.steps[:n]} | set(deps.reusable)
        unknown = [name for name in step.inputs if name not in earlier]
        if unknown:
            problems.append(f"step {step.id} reads {', '.join(unknown)}, not an earlier step")
    return "; ".join(problems) or None


def python_steps_allowed(plan: Plan, deps: PlannerDeps) -> str | None:
    """Python steps only where the variant allows them."""
    if deps.allowance.python_steps:
        return None
    return "; ".join(
        f"variant {deps.allowance.label} has no Python steps; do {step.id} in SQL instead"
        for step in plan.steps if step.kind is StepKind.PYTHON) or None


def ids_numbered_in_order(plan: Plan, deps: PlannerDeps) -> str | None:
    """Steps of each kind are numbered 1, 2, ... in plan order (a lone ``sql-2`` breaks it)."""
    counters = {kind: 0 for kind in StepKind}
    for step in plan.steps:
        counters[step.kind] += 1
        expected = f"{step.kind.value}-{counters[step.kind]}"
        if step.id != expected:
            return ("step ids must be numbered in order per kind: "
                    f"expected {expected}, got {step.id}")
    return None


def kinds_alternate(plan: Plan, deps: PlannerDeps) -> str | None:
    """After consolidation no two adjacent steps have the same kind."""
    for before, after in zip(plan.steps, plan.steps[1:], strict=False):
        if before.kind is after.kind:
            return (f"steps {before.id} and {after.id} are both {after.kind.value}: consolidate "
                    "adjacent steps of the same kind into one")
    return None


def sql_steps_read_nothing(plan: Plan, deps: PlannerDeps) -> str | None:
    """An SQL step queries the database and reads no earlier step's files."""
    readers = [step.id for step in plan.steps if step.kind is StepKind.SQL and step.inputs]
    return (f"SQL steps cannot read earlier results, clear inputs of {', '.join(readers)}"
            if readers else None)


def python_steps_have_inputs(plan: Plan, deps: PlannerDeps) -> str | None:
    """A Python step names the earlier step(s) whose exported files it reads."""
    orphans = [step.id for step in plan.steps if step.kind is StepKind.PYTHON and not step.inputs]
    return (f"Python steps must list the SQL steps they read in inputs: {', '.join(orphans)}"
            if orphans else None)


def computation_flag_matches_steps(plan: Plan, deps: PlannerDeps) -> str | None:
    """constraints.computation_needed is true exactly when the plan has a Python step."""
    has_python = any(step.kind is StepKind.PYTHON for step in plan.steps)
    if plan.constraints.computation_needed != has_python:
        return (f"constraints.computation_needed is {plan.constraints.computation_needed} but "
                f"the plan {'has' if has_python else 'has no'} Python step")
    return None


def spatial_computation_needs_geometry(plan: Plan, deps: PlannerDeps) -> str | None:
    """A spatial-geometry computation in Python needs geometries exported by SQL."""
    constraints = plan.constraints
    if (constraints.computation_needed and constraints.operation_category == "spatial_geometry"
            and not constraints.geometry_needed):
        return "a spatial_geometry computation needs geometry_needed=true (export GeoJSON)"
    return None


def multiple_inputs_declared(plan: Plan, deps: PlannerDeps) -> str | None:
    """input_mode is 'multiple' when a Python step reads more than one step."""
    if plan.constraints.input_mode == "single" and any(
            len(step.inputs) > 1 for step in plan.steps if step.kind is StepKind.PYTHON):
        return "a Python step reads several steps: set input_mode to multiple"
    return None


def topk_on_last_step(plan: Plan, deps: PlannerDeps) -> str | None:
    """A Top-K question's last step sets top_k to the K of the question."""
    k = deps.intent.top_k
    if k is None:
        return None
    last = plan.steps[-1]
    if last.top_k != k:
        return (f"the question asks for the top {k}: set top_k={k} on the "
                f"last step {last.id} (it has {last.top_k})")
    return None


def topk_answers_ranked_list(plan: Plan, deps: PlannerDeps) -> str | None:
    """A Top-K question is answered with a ranked_list."""
    if deps.intent.top_k is not None and plan.answer_type != AnswerType.RANKED_LIST:
        return f"a Top-K question needs answer_type ranked_list, not {plan.answer_type.value}"
    return None


def comparison_mode_set(plan: Plan, deps: PlannerDeps) -> str | None:
    """A period or baseline comparison sets temporal_comparison accordingly."""
    operation = deps.intent.operation
    expected = {
        OperationIntent.COMPARE_PERIODS: "period_vs_period",
        OperationIntent.COMPARE_BASELINE: "vs_baseline",
    }.get(operation)
    if expected is not None and plan.constraints.temporal_comparison == "none":
        return f"operation {operation.value} needs temporal_comparison={expected}"
    return None


def tables_in_schema(plan: Plan, deps: PlannerDeps) -> str | None:
    """Steps name only tables of the schema subset the planner was shown."""
    unknown = sorted({name for step in plan.steps for name in step.tables} - set(deps.tables))
    if unknown:
        return (f"unknown tables {', '.join(unknown)}; steps may read only "
                f"{', '.join(deps.tables)}")
    return None


PLAN_RULES: tuple[Callable[[Plan, PlannerDeps], str | None], ...] = (
    first_step_is_sql,
    ids_unique,
    inputs_name_earlier_steps,
    python_steps_allowed,
    ids_numbered_in_order,
    kinds_alternate,
    sql_steps_read_nothing,
    python_steps_have_inputs,
    computation_flag_matches_steps,
    spatial_computation_needs_geometry,
    multiple_inputs_declared,
    topk_on_last_step,
    topk_answers_ranked_list,
    comparison_mode_set,
    tables_in_schema,
)
"""Every rule a plan must keep, in the order their messages are reported."""


def plan_errors(output: PlanOutput, deps: PlannerDeps) -> list[str]:
    """Every rule of :data:`PLAN_RULES` the planner's ``output`` breaks for ``deps``.

    Empty when the plan (or the refusal, which needs a reason) is acceptable.
    """
    if isinstance(output, PlanRefusal):
        return [] if output.reason.strip() else ["a refusal needs a reason"]
    return list(dict.fromkeys(
        error for rule in PLAN_RULES if (error := rule(output, deps)) is not None))


# --- agent ---------------------------------------------------------------------------------

OUTPUT_RETRIES = 2

planner_agent: Agent[PlannerDeps, PlanOutput] = Agent(
    output_type=[Plan, PlanRefusal],
    deps_type=PlannerDeps,
    instructions=INSTRUCTIONS,
    name="planner",
    defer_model_check=True,
    retries={"output": OUTPUT_RETRIES},
    capabilities=[COMPACT_OUTPUT_TOOLS],
)


@planner_agent.output_validator
def _validate(ctx: RunContext[PlannerDeps], output: PlanOutput) -> PlanOutput:
    return raise_for_errors(plan_errors(output, ctx.deps), output)


def prompt(deps: PlannerDeps) -> str:
    """The user message of the planner: question, intent, schema subset, variant, failures."""
    parts = [
        f"Question: {deps.question}",
        f"Variant: {deps.allowance.label} ({variant_rule(deps.allowance)})",
        f"Intent (JSON): {compact_json(deps.intent)}",
        f"Schema outline:\n{deps.schema_text}",
    ]
    if deps.previous_failures:
        failures = "\n".join(f"- {failure}" for failure in deps.previous_failures)
        parts.append(f"Earlier plans failed; do not repeat these failures:\n{failures}")
    if deps.conversation:
        parts.append(deps.conversation)
    return "\n\n".join(parts)
