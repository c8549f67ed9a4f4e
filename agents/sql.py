"""The SQL agent: writes read-only SQL statements for one plan step.

Every statement must pass the SQL guard (geoask.sql) under the variant's spatial policy; on a
guard or database error the agent is called again with the classified error. The draft models
are in :mod:`geoask.vocabulary.drafts`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic_ai import Agent, RunContext

from agents._checks import raise_for_errors
from agents._schema import COMPACT_OUTPUT_TOOLS, compact_json
from geoask.catalog.spatial import names_vector_column
from geoask.sql.context import (
    AnswerContract,
    GuardContext,
    SpatialPolicy,
)
from geoask.sql.guard import find_violation
from geoask.sql.shape import outer_limit, output_columns
from geoask.vocabulary.drafts import SqlDraft, SqlOutput, SqlRefusal
from geoask.vocabulary.plan import ExecutionConstraints, PlanStep

# The Agent itself is defined at the end of this module (see agents/README.md).


@dataclass(frozen=True)
class SqlAttempt:
    """A failed earlier attempt: the SQL and the classified error it met."""

    sql: str
    error: str


@dataclass(frozen=True)
class SqlDeps:
    """What the SQL agent sees.

    ``guard`` is the context the flow's guard checks the statements under (spatial policy, row
    cap, the catalog's names); the agent checks its draft under the same one, with the step's
    answer contract.
    """

    question: str
    step: PlanStep
    schema_text: str
    constraints: ExecutionConstraints
    guard: GuardContext = field(default_factory=GuardContext)
    previous_attempts: list[SqlAttempt] = field(default_factory=list)
    # fields a downstream step found missing (dependency backtracking)
    required_fields: list[str] = field(default_factory=list)


# --- instructions --------------------------------------------------------------------------
# Developer note: rules after the CGD-QCSF SQL agent and its static validation (read-only,
# spatial computation constraint, identifier quoting, result size, contract-driven checks).
# The guard enforces them again before anything runs; stating them saves retries.

INSTRUCTIONS = """\
Write read-only PostgreSQL for one plan step. Each statement's result is exported as a file
named after it, for later Python steps and the answer.
- Each sql is one SELECT or WITH ... SELECT; nothing that writes, locks, sets or copies.
- Keep the question's places, years, metrics and conditions.
- Use only the schema's tables and columns; name each table as the schema lists it
  (schema.table); double-quote upper-case identifiers.
- Follow the spatial policy given.
- With top_k, every statement ends with an outer ORDER BY ... LIMIT top_k.
- Return the expected_output columns plus identifying keys and names; the geometry column only
  if geometry_needed. Required fields (a later step found them missing): select them under
  exactly those names.
- needs_python (only without a planner): computation SQL may not do is still needed.
- On a retry, fix the error shown. SqlRefusal if the schema cannot provide the data.
"""

# The rule of each spatial policy, sent with it.
POLICY_RULES: dict[SpatialPolicy, str] = {
    SpatialPolicy.SEPARATED: ("no ST_* functions, geometry operators or geography casts; select "
                              "geometry as is, Python computes with it. One exception, a "
                              "bounding-box screen (filter-refine) as a WHERE or JOIN ON "
                              "conjunct: geom && ST_Expand(ST_SetSRID(ST_MakePoint(lon, lat), "
                              "4326), deg), geom && ST_MakeEnvelope(xmin, ymin, xmax, ymax, "
                              "4326), geom && ST_Expand((SELECT geom FROM t WHERE key = 'k'), "
                              "deg), or a.geom && b.geom in JOIN ON; margin in the column's "
                              "SRID units with room to spare (for 4326, deg = metres / 111320 "
                              "/ cos(lat) * 1.5); select the screened geometry columns and "
                              "aggregate nothing: Python refines exactly. A raster column is "
                              "selected as is or cut with ST_Clip(rast, geom) (exported as one "
                              "GeoTIFF), never summarised in SQL"),
    SpatialPolicy.POSTGIS: ("PostGIS functions allowed; distances and areas in metres "
                            "(geography or a projected SRID)"),
}


# --- checks (pure; one rule each) ----------------------------------------------------------


def statement_names_unique(draft: SqlDraft) -> str | None:
    """Each statement has its own artifact name."""
    names = [statement.name for statement in draft.statements]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    return f"statement names must be unique, repeated: {', '.join(duplicates)}" if duplicates \
        else None


def guard_violations(draft: SqlDraft, deps: SqlDeps) -> list[str]:
    """Every statement passes the SQL guard under the step's spatial policy and contract.

    When the step has ``top_k`` every statement is checked under the Top-K contract (outer
    ORDER BY and LIMIT), as the flow's guard does before running them.
    """
    contract = AnswerContract.TOPK if deps.step.top_k is not None else AnswerContract.NONE
    context = dataclasses.replace(deps.guard, contract=contract)
    errors = []
    for statement in draft.statements:
        violation = find_violation(statement.sql, context)
        if violation is not None:
            where = (f" at line {violation.line}, col {violation.col}"
                     if violation.line is not None else "")
            fragment = f" (offending: {violation.fragment})" if violation.fragment else ""
            errors.append(f"statement {statement.name}: rule {violation.rule}{where}: "
                          f"{violation.description}{fragment}")
    return errors


def topk_limit_is_k(draft: SqlDraft, deps: SqlDeps) -> str | None:
    """With ``top_k``, every statement's literal outer LIMIT equals K."""
    k = deps.step.top_k
    if k is None:
        return None
    for statement in draft.statements:
        limit = outer_limit(statement.sql)
        if limit is not None and limit != k:
            return (f"statement {statement.name}: the step asks for the top {k}, so end with "
                    f"LIMIT {k} (not LIMIT {limit})")
    return None


def geometry_exported(draft: SqlDraft, deps: SqlDeps) -> str | None:
    """When geometry is needed, some statement selects a geometry column (or ``*``).

    A selected name counts when :func:`geoask.catalog.spatial.names_vector_column` says so.
    """
    if not deps.constraints.geometry_needed:
        return None
    for statement in draft.statements:
        columns = output_columns(statement.sql) or []
        if any(c == "*" or names_vector_column(c, deps.guard.geometry_columns) for c in columns):
            return None
    return ("the constraints need geometry: select the geometry column (e.g. geom) of the "
            "features the Python step works on")


def required_fields_selected(draft: SqlDraft, deps: SqlDeps) -> str | None:
    """Fields a later step found missing (dependency backtracking) are selected by name."""
    if not deps.required_fields:
        return None
    selected: set[str] = set()
    for statement in draft.statements:
        columns = output_columns(statement.sql) or []
        if "*" in columns:
            return None
        selected |= {c.lower() for c in columns}
    missing = [f for f in deps.required_fields if f.lower() not in selected]
    return (f"a later step needs these fields, select them under exactly these names: "
            f"{', '.join(missing)}" if missing else None)


SQL_RULES: tuple[Callable[[SqlDraft, SqlDeps], str | None], ...] = (
    topk_limit_is_k,
    geometry_exported,
    required_fields_selected,
)


def sql_errors(output: SqlOutput, deps: SqlDeps) -> list[str]:
    """Every rule the SQL agent's ``output`` breaks for ``deps`` (empty when acceptable)."""
    if isinstance(output, SqlRefusal):
        return [] if output.reason.strip() else ["a refusal needs a reason"]
    errors = [error for error in [statement_names_unique(output)] if error]
    errors += guard_violations(output, deps)
    errors += [error for rule in SQL_RULES if (error := rule(output, deps)) is not None]
    return errors


# --- agent ---------------------------------------------------------------------------------

OUTPUT_RETRIES = 2

sql_agent: Agent[SqlDeps, SqlOutput] = Agent(
    output_type=[SqlDraft, SqlRefusal],
    deps_type=SqlDeps,
    instructions=INSTRUCTIONS,
    name="sql",
    defer_model_check=True,
    retries={"output": OUTPUT_RETRIES},
    capabilities=[COMPACT_OUTPUT_TOOLS],
)


@sql_agent.output_validator
def _validate(ctx: RunContext[SqlDeps], output: SqlOutput) -> SqlOutput:
    return raise_for_errors(sql_errors(output, ctx.deps), output)


def prompt(deps: SqlDeps) -> str:
    """The user message of the SQL agent: step, question, constraints, schema, feedback."""
    parts = [
        f"Question: {deps.question}",
        f"Step (JSON): {compact_json(deps.step)}",
        "Execution constraints (JSON): " + deps.constraints.model_dump_json(
            include={"computation_needed", "geometry_needed", "temporal_comparison"},
            exclude_defaults=True),
        f"Spatial policy: {deps.guard.policy.value} ({POLICY_RULES[deps.guard.policy]})",
        f"Schema:\n{deps.schema_text}",
    ]
    if deps.required_fields:
        parts.append("Required fields (missing in the last export): "
                     + ", ".join(deps.required_fields))
    for number, attempt in enumerate(deps.previous_attempts, start=1):
        parts.append(f"Earlier attempt {number} failed.\nSQL:\n{attempt.sql}\n"
                     f"Error: {attempt.error}")
    return "\n\n".join(parts)
