"""The planner agent: ordered SQL-retrieval and Python-computation steps with constraints.

Consolidation (after CGD-QCSF): adjacent SQL extractions form one SQL step (which may emit
several statements), a chain of Python computations forms one script, so a plan alternates
SQL and Python steps and always starts with SQL.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, Field, field_validator
from pydantic_ai import Agent, RunContext

from agents._checks import raise_for_errors
from agents._schema import (
    COMPACT_OUTPUT_TOOLS,
    COMPACT_SCHEMA,
    NESTED_SCHEMA,
    BareEnumSchema,
    compact_json,
)
from agents.intent import Intent, OperationIntent
from geoask.answers import AnswerType

# The Agent itself is defined at the end of this module (see agents/README.md).


class StepKind(BareEnumSchema, StrEnum):
    """Where a step runs."""

    SQL = "sql"
    PYTHON = "python"


class ExecutionConstraints(BaseModel):
    """Explicit execution constraints handed to the SQL and compute agents."""

    model_config = NESTED_SCHEMA

    computation_needed: bool
    geometry_needed: bool
    input_mode: Literal["single", "multiple"]
    spatial_granularity: Literal[
        "state", "county", "grid_cell", "point", "line", "country", "none"]
    operation_category: Literal[
        "attribute_filter_rank", "grouped_aggregation", "temporal_comparison",
        "spatial_geometry", "statistics"]
    temporal_comparison: Literal["none", "period_vs_period", "vs_baseline", "trend"] = "none"


class PlanStep(BaseModel):
    """One step of the plan."""

    model_config = NESTED_SCHEMA

    id: str = Field(pattern=r"^(sql|python)-\d+$")  # numbering: ids_numbered_in_order
    objective: str
    tables: list[str] = Field(default_factory=list)
    inputs: list[str] = Field(default_factory=list)
    expected_output: str
    success_criteria: str | None = None
    top_k: int | None = Field(default=None, ge=1)

    @property
    def kind(self) -> StepKind:
        """Where the step runs, as its id says: ``sql-1`` -> sql, ``python-2`` -> python."""
        return StepKind(self.id.partition("-")[0])

    @field_validator("tables")
    @classmethod
    def _unqualified(cls, tables: list[str]) -> list[str]:
        """Table names without a schema prefix ('demo.airports' -> 'airports')."""
        return [name.strip().rpartition(".")[2] for name in tables]


class Plan(BaseModel):
    """An ordered plan for one question."""

    model_config = COMPACT_SCHEMA

    steps: list[PlanStep] = Field(min_length=1)
    constraints: ExecutionConstraints
    answer_type: AnswerType
    answer_fields: list[str] = Field(default_factory=list)


class PlanRefusal(BaseModel):
    """The question cannot be planned against this schema."""

    model_config = COMPACT_SCHEMA

    reason: str


PlanOutput = Plan | PlanRefusal


@dataclass(frozen=True)
class PlannerDeps:
    """What the planner sees.

    The question, its intent, the pre-filtered schema (``schema_text``: its outline,
    ``tables``: its table names), the variant and, on a replan, why the earlier plans failed.
    """

    question: str
    intent: Intent
    schema_text: str
    tables: list[str]
    variant: str
    previous_failures: list[str] = field(default_factory=list)


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
  files the computation reads; spatial_granularity: unit of the analysed features;
  temporal_comparison: not none for period or baseline comparisons.
- answer_fields: fields of the last step's output the answer is read from.
If earlier plans failed (listed), avoid their failures. PlanRefusal only if the schema cannot
answer the question.
"""

# The planning rule of each variant, sent with the variant (geoask.variants).
VARIANT_RULES = {
    "FULL": "keep spatial computation out of SQL: select geometry, compute in Python",
    "POSTGIS": "PostGIS functions may be used in SQL",
    "NO_STCA": "no python steps",
    "BASE": "no python steps",
}



# --- checks (pure; one rule each) ----------------------------------------------------------
# Ids unique, first step SQL, kind matching id, inputs naming earlier steps and the variant's
# Python rule are checked by geoask.variants.plan_violations (shared with the flow).


def ids_numbered_in_order(plan: Plan) -> str | None:
    """Steps of each kind are numbered 1, 2, ... in plan order.

    >>> c = ExecutionConstraints(computation_needed=False, geometry_needed=False,
    ...     input_mode="single", spatial_granularity="state",
    ...     operation_category="attribute_filter_rank")
    >>> s = PlanStep(id="sql-2", objective="o", expected_output="e")
    >>> ids_numbered_in_order(Plan(steps=[s], constraints=c, answer_type="scalar"))
    'step ids must be numbered in order per kind: expected sql-1, got sql-2'
    """
    counters = {kind: 0 for kind in StepKind}
    for step in plan.steps:
        counters[step.kind] += 1
        expected = f"{step.kind.value}-{counters[step.kind]}"
        if step.id != expected:
            return ("step ids must be numbered in order per kind: "
                    f"expected {expected}, got {step.id}")
    return None


def kinds_alternate(plan: Plan) -> str | None:
    """After consolidation no two adjacent steps have the same kind."""
    for before, after in zip(plan.steps, plan.steps[1:], strict=False):
        if before.kind is after.kind:
            return (f"steps {before.id} and {after.id} are both {after.kind.value}: consolidate "
                    "adjacent steps of the same kind into one")
    return None


def sql_steps_read_nothing(plan: Plan) -> str | None:
    """An SQL step queries the database and reads no earlier step's files."""
    readers = [step.id for step in plan.steps if step.kind is StepKind.SQL and step.inputs]
    return (f"SQL steps cannot read earlier results, clear inputs of {', '.join(readers)}"
            if readers else None)


def python_steps_have_inputs(plan: Plan) -> str | None:
    """A Python step names the earlier step(s) whose exported files it reads."""
    orphans = [step.id for step in plan.steps if step.kind is StepKind.PYTHON and not step.inputs]
    return (f"Python steps must list the SQL steps they read in inputs: {', '.join(orphans)}"
            if orphans else None)


def computation_flag_matches_steps(plan: Plan) -> str | None:
    """constraints.computation_needed is true exactly when the plan has a Python step."""
    has_python = any(step.kind is StepKind.PYTHON for step in plan.steps)
    if plan.constraints.computation_needed != has_python:
        return (f"constraints.computation_needed is {plan.constraints.computation_needed} but "
                f"the plan {'has' if has_python else 'has no'} Python step")
    return None


def spatial_computation_needs_geometry(plan: Plan) -> str | None:
    """A spatial-geometry computation in Python needs geometries exported by SQL."""
    constraints = plan.constraints
    if (constraints.computation_needed and constraints.operation_category == "spatial_geometry"
            and not constraints.geometry_needed):
        return "a spatial_geometry computation needs geometry_needed=true (export GeoJSON)"
    return None


def multiple_inputs_declared(plan: Plan) -> str | None:
    """input_mode is 'multiple' when a Python step reads more than one step."""
    if plan.constraints.input_mode == "single" and any(
            len(step.inputs) > 1 for step in plan.steps if step.kind is StepKind.PYTHON):
        return "a Python step reads several steps: set input_mode to multiple"
    return None


def topk_on_last_step(plan: Plan, intent: Intent) -> str | None:
    """A Top-K question's last step sets top_k to the K of the question."""
    if intent.top_k is None:
        return None
    last = plan.steps[-1]
    if last.top_k != intent.top_k:
        return (f"the question asks for the top {intent.top_k}: set top_k={intent.top_k} on the "
                f"last step {last.id} (it has {last.top_k})")
    return None


def topk_answers_ranked_list(plan: Plan, intent: Intent) -> str | None:
    """A Top-K question is answered with a ranked_list."""
    if intent.top_k is not None and plan.answer_type != AnswerType.RANKED_LIST:
        return f"a Top-K question needs answer_type ranked_list, not {plan.answer_type.value}"
    return None


def comparison_mode_set(plan: Plan, intent: Intent) -> str | None:
    """A period or baseline comparison sets temporal_comparison accordingly."""
    expected = {
        OperationIntent.COMPARE_PERIODS: "period_vs_period",
        OperationIntent.COMPARE_BASELINE: "vs_baseline",
    }.get(intent.operation)
    if expected is not None and plan.constraints.temporal_comparison == "none":
        return f"operation {intent.operation.value} needs temporal_comparison={expected}"
    return None


def tables_in_schema(plan: Plan, tables: list[str]) -> str | None:
    """Steps name only tables of the schema subset the planner was shown."""
    unknown = sorted({name for step in plan.steps for name in step.tables} - set(tables))
    if unknown:
        return (f"unknown tables {', '.join(unknown)}; steps may read only "
                f"{', '.join(tables)}")
    return None


PLAN_RULES: tuple[Callable[[Plan], str | None], ...] = (
    ids_numbered_in_order,
    kinds_alternate,
    sql_steps_read_nothing,
    python_steps_have_inputs,
    computation_flag_matches_steps,
    spatial_computation_needs_geometry,
    multiple_inputs_declared,
)
PLAN_INTENT_RULES: tuple[Callable[[Plan, Intent], str | None], ...] = (
    topk_on_last_step,
    topk_answers_ranked_list,
    comparison_mode_set,
)


def plan_errors(output: PlanOutput, deps: PlannerDeps) -> list[str]:
    """Every rule the planner's ``output`` breaks for ``deps`` (empty when acceptable).

    Raises:
        ConfigurationError: ``deps.variant`` is not a known variant.

    """
    if isinstance(output, PlanRefusal):
        return [] if output.reason.strip() else ["a refusal needs a reason"]
    # Imported here: geoask.variants imports this module.
    from geoask.variants import parse_variant, plan_violations

    errors = plan_violations(output, parse_variant(deps.variant))
    errors += [error for rule in PLAN_RULES if (error := rule(output)) is not None]
    errors += [error for rule in PLAN_INTENT_RULES
               if (error := rule(output, deps.intent)) is not None]
    if (error := tables_in_schema(output, deps.tables)) is not None:
        errors.append(error)
    return list(dict.fromkeys(errors))


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
        f"Variant: {deps.variant}" + (f" ({rule})" if (rule := VARIANT_RULES.get(
            deps.variant)) else ""),
        f"Intent (JSON): {compact_json(deps.intent)}",
        f"Schema outline:\n{deps.schema_text}",
    ]
    if deps.previous_failures:
        failures = "\n".join(f"- {failure}" for failure in deps.previous_failures)
        parts.append(f"Earlier plans failed; do not repeat these failures:\n{failures}")
    return "\n\n".join(parts)
