"""The ReAct agent of the REACT baseline: one agent, tools, a persistent Python session.

It inspects the schema (required before its first query), runs checked read-only SQL, runs
cells in the question's sandbox session and gives the typed final answer
``{answer_type, data_payload, summary}``, within the step budget ``GEOASK_REACT_MAX_STEPS``.
The tools' logic is :class:`geoask.run.react.ReactToolbox`; the errors of earlier calls (class and
fix hint, its ``ErrorMemory``) are added to the instructions of every later request.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pydantic_ai import Agent, RunContext

from agents._checks import raise_for_errors
from agents._schema import COMPACT_OUTPUT_TOOLS
from agents.answer import numbers_from_evidence, payload_valid, summary_readable
from agents.compute import (
    SANDBOX_LIBRARIES,
    imports_available,
    no_dynamic_code,
    no_host_paths,
    parse_script,
)
from geoask.run.react import ReactToolbox
from geoask.vocabulary.answers import AnswerOutput, AnswerRefusal, FinalAnswer

# The Agent itself is defined at the end of this module (see agents/README.md).


@dataclass(frozen=True)
class ReactDeps:
    """What the ReAct agent works with: the question, the table list and its tools."""

    question: str
    tables_text: str
    toolbox: ReactToolbox


# --- instructions --------------------------------------------------------------------------
# Developer note: GISclaw's single-agent design: schema-inspection-first rule, a persistent
# Jupyter-like session, an Error-Memory, the package rule (only what the sandbox installs).

INSTRUCTIONS = f"""\
Answer a question about a PostGIS database with tools, one call at a time:
- inspect_schema(tables) before any query: columns, types, units of the tables you will use.
- run_sql(name, sql): one read-only PostgreSQL SELECT; plain relational SQL only (no ST_*
  spatial functions: do spatial work in Python). Its rows come back; a cell reads the
  result at /input/<name>.json (.geojson with geometry; .parquet, GeoParquet read with
  geopandas.read_parquet, for a large one: run_sql's reply names the path) once inputs names it.
- run_cell(code, inputs): Python in a persistent session (variables stay between cells); no
  database or network. Import only {", ".join(SANDBOX_LIBRARIES)} and the standard library (no
  subprocess, socket, ctypes, exec or eval). Geometry inputs are WGS 84 lon/lat: measure
  distances and areas after to_crs() to a metric CRS. End a cell giving a result with one JSON line
  {{"status": "success", "summary": "...", "result": {{...}} or [...]}}.
- Final answer: FinalAnswer with answer_type (scalar, entity_list, ranked_list, records,
  object, bbox or geometry), data_payload copying numbers from tool results (never invented),
  and a one-sentence summary with units; AnswerRefusal if the data cannot answer it.
Fix each error shown before going on; never repeat a failed call unchanged.
"""


# --- checks (pure; one rule each) ----------------------------------------------------------

CELL_RULES: tuple[Callable[..., str | None], ...] = (
    imports_available,
    no_dynamic_code,
    no_host_paths,
)
"""The package rule and the script rules of the compute agent that hold for a cell too."""


def cell_errors(code: str) -> list[str]:
    """Every rule a cell breaks before it is sent to the session (empty when acceptable).

    >>> cell_errors("import requests")[0].split(";")[0]
    'imports not available in the sandbox: requests'
    >>> cell_errors("x = 1")
    []
    """
    tree = parse_script(code)
    if isinstance(tree, str):
        return [tree]
    return [error for rule in CELL_RULES if (error := rule(tree)) is not None]


def react_errors(output: AnswerOutput, deps: ReactDeps) -> list[str]:
    """Every rule the final ``output`` breaks (empty when acceptable).

    A refusal needs a reason; an answer a valid payload, a short summary, and only numbers
    that some tool result showed (:attr:`geoask.run.react.ReactToolbox.evidence`).
    """
    if isinstance(output, AnswerRefusal):
        return [] if output.reason.strip() else ["a refusal needs a reason"]
    errors = payload_valid(output)
    errors += [e for e in (summary_readable(output),
                           numbers_from_evidence(output, deps.toolbox.evidence))
               if e is not None]
    return errors


# --- agent ---------------------------------------------------------------------------------

OUTPUT_RETRIES = 2

react_agent: Agent[ReactDeps, AnswerOutput] = Agent(
    output_type=[FinalAnswer, AnswerRefusal],
    deps_type=ReactDeps,
    instructions=INSTRUCTIONS,
    name="react",
    defer_model_check=True,
    retries={"output": OUTPUT_RETRIES},
    capabilities=[COMPACT_OUTPUT_TOOLS],
)


@react_agent.instructions
def _error_memory(ctx: RunContext[ReactDeps]) -> str:
    return ctx.deps.toolbox.memory.text()


@react_agent.tool
def inspect_schema(ctx: RunContext[ReactDeps], tables: list[str]) -> str:
    """Columns (name, type, key, unit) of the named tables; the table list if none named."""
    return ctx.deps.toolbox.inspect(tables)


@react_agent.tool
def run_sql(ctx: RunContext[ReactDeps], name: str, sql: str) -> str:
    """Run one read-only SELECT; name: new lower-case result name cells can read."""
    return ctx.deps.toolbox.run_sql(name, sql)


@react_agent.tool
def run_cell(ctx: RunContext[ReactDeps], code: str, inputs: list[str] | None = None) -> str:
    """Run Python in the session; inputs: names of SQL results the cell reads."""
    errors = cell_errors(code)
    if errors:
        return ctx.deps.toolbox.reject("run_cell", "package_rule", "; ".join(errors))
    return ctx.deps.toolbox.run_cell(code, inputs or [])


@react_agent.output_validator
def _validate(ctx: RunContext[ReactDeps], output: AnswerOutput) -> AnswerOutput:
    return raise_for_errors(react_errors(output, ctx.deps), output)


def prompt(deps: ReactDeps) -> str:
    """The user message of the ReAct agent: the question and the database's tables."""
    return f"Question: {deps.question}\n\nTables:\n{deps.tables_text}"
