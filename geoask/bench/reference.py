"""The offline ``reference`` model: replays a benchmark case's verified program through the agents.

``--model reference`` (``GEOASK_MODEL=reference``) answers every agent of the question flow
with what the case's reference program implies, through the same pydantic-ai output tools a
real model calls (a ``FunctionModel`` built on :mod:`geoask.scripted`'s mechanism):

- ``intent``: an :class:`~geoask.plan.Intent` consistent with the case (operation from its
  category and answer type, years named in the question, Top-K from the reference SQL);
- ``planner``: a :class:`~geoask.plan.Plan` whose steps mirror the reference steps (adjacent
  SQL steps are consolidated into one step, a chain of Python steps into one script that runs
  them in order and keeps each intermediate result under ``/scratch``);
- ``sql``: the reference statements of the step (statement names = artifact names the
  scripts read from ``/input``); ``compute``: the reference script of the step;
- ``reviewer``: ``accept``; ``answer``: the :class:`~geoask.answers.FinalAnswer` PROJECTED FROM
  THE EVIDENCE shown to the answer agent with the case's answer contract
  (:func:`geoask.bench.projection.project_answer`) - the expected value is never read.

A case is found by the exact question text of the prompt, else by a case id named in it. A
question it does not know gets an ``IntentRejection`` (``not_answerable``) saying that the
reference model only knows the benchmark questions.

``reference-faulty`` injects one deterministic first-attempt fault into the cases whose id
number is divisible by :data:`FAULT_EVERY` (40 of the 200), then replays the correct program:

=============== =========================================================================
fault           what happens
=============== =========================================================================
degrees         spatial case whose script reprojects: ``to_crs(...)`` becomes
                ``to_crs("EPSG:4326")`` so distances/areas come out in degrees; the
                reviewer rejects that evidence once (revise the Python step)
missing_field   SQL+Python case: the SQL export drops a column the script reads; the
                sandbox reports ``missing_field`` and the flow repairs the SQL step
                (dependency backtracking) with the field as a required field
wrong_column    any other case: a column of the last SQL statement is misspelt (``_nm``
                suffix); the database rejects it and the SQL step is revised
=============== =========================================================================

The first applicable kind in that order is used. Faults are remembered per (question, role,
step), so a model instance injects each at most once (use one instance per question run).
"""

from __future__ import annotations

import ast
import json
import re
import threading
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final

import sqlglot
from pydantic import BaseModel
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage
from sqlglot import exp

from geoask.answers import AnswerRefusal, AnswerType, FinalAnswer
from geoask.bench.model import (
    AnswerType as CaseAnswerType,
)
from geoask.bench.model import (
    BenchmarkCase,
    Category,
    Projection,
    PythonStep,
    Scenario,
    SqlStep,
)
from geoask.bench.model import SqlStatement as CaseStatement
from geoask.bench.projection import ProjectionError, project_answer
from geoask.drafts import ComputeScript, SqlDraft, SqlStatement
from geoask.evidence import RECORDS_MARKER, RESULT_MARKER
from geoask.plan import (
    Distance,
    DistanceUnit,
    ExecutionConstraints,
    Intent,
    IntentRejection,
    OperationCategory,
    OperationIntent,
    Plan,
    PlanStep,
    RejectionType,
    Review,
    ReviewDecision,
    SpatialGranularity,
    SpatialPredicate,
    SpatialTopology,
    SpatiotemporalScope,
    StepKind,
    TemporalComparison,
)
from geoask.scripted import count_tokens, latest_user_prompt, output_tool_call, request_text
from geoask.sql.context import DEFAULT_GEOMETRY_COLUMNS
from geoask.sql.shape import outer_limit, output_columns, tables_read

REFERENCE: Final = "reference"
REFERENCE_FAULTY: Final = "reference-faulty"
REFERENCE_MODELS: Final = (REFERENCE, REFERENCE_FAULTY)
FAULT_EVERY: Final = 5
"""reference-faulty injects a fault into cases whose id number is a multiple of this."""

UNKNOWN_QUESTION_MESSAGE: Final = (
    "The offline reference model only knows the benchmark questions (benchmark/cases/*.yaml); "
    "ask one of them word for word, or name its case id, or configure a real model with "
    "GEOASK_MODEL."
)
_WRONG_COLUMN_SUFFIX: Final = "_nm"
_DEGREES_CRS: Final = '"EPSG:4326"'
# A table header of a rendered schema outline: "demo.airports: US airports [point, static]"
_OUTLINE_TABLE = re.compile(r"^\w+\.(\w+): ", re.MULTILINE)
_CASE_ID = re.compile(r"\b[a-z][a-z0-9_]*-[0-9]{3}\b")
_YEAR = re.compile(r"\b(1[89][0-9]{2}|20[0-9]{2})\b")
_DISTANCE = re.compile(
    r"\bwithin\s+(\d+(?:\.\d+)?)\s*(km|kilometres|kilometers|mi|miles|m|metres|meters)\b",
    re.IGNORECASE)
_UNITS: dict[str, DistanceUnit] = {
    "km": "km", "kilometres": "km", "kilometers": "km", "mi": "mi", "miles": "mi",
    "m": "m", "metres": "m", "meters": "m",
}
_GRANULARITY: dict[Scenario, SpatialGranularity] = {
    Scenario.STATES_INCOME: "state", Scenario.COUNTIES_CENSUS: "county",
    Scenario.AIRPORTS: "point", Scenario.CLIMATE_NC: "grid_cell",
    Scenario.NEW_HAVEN: "point", Scenario.WORLD: "country",
}
_CATEGORY: dict[Category, OperationCategory] = {
    Category.ATTRIBUTE: "attribute_filter_rank", Category.AGGREGATION: "grouped_aggregation",
    Category.TEMPORAL: "temporal_comparison", Category.SPATIAL: "spatial_geometry",
    Category.STATISTICS: "statistics",
}

_TEMPORAL_COMPARISON: dict[OperationIntent, TemporalComparison] = {
    OperationIntent.COMPARE_PERIODS: "period_vs_period",
    OperationIntent.COMPARE_BASELINE: "vs_baseline",
}


class FaultKind(StrEnum):
    """The first-attempt faults of ``reference-faulty`` (see the module docstring)."""

    DEGREES = "degrees"
    MISSING_FIELD = "missing_field"
    WRONG_COLUMN = "wrong_column"


@dataclass(frozen=True)
class ReferenceStep:
    """One consolidated plan step of a case.

    Attributes:
        id: plan step id (``sql-1``, ``python-1``...).
        kind: ``sql`` or ``python``.
        objective: the reference steps' objectives, joined.
        statements: SQL statements (SQL steps).
        script: the Python source run in the sandbox (Python steps).
        inputs: ids of the earlier plan steps the script reads.

    """

    id: str
    kind: StepKind
    objective: str
    statements: tuple[CaseStatement, ...] = ()
    script: str = ""
    inputs: tuple[str, ...] = ()


@dataclass(frozen=True)
class InjectedFault:
    """A fault planned for a case: its kind, the step it hits and the faulty text."""

    kind: FaultKind
    step_id: str
    faulty_text: str
    detail: str


def consolidated_steps(case: BenchmarkCase) -> list[ReferenceStep]:
    """The case's reference steps as plan steps: SQL and Python alternate, SQL first.

    Adjacent SQL steps become one SQL step; adjacent Python steps become one script
    (:func:`chained_script`).
    """
    groups: list[list[SqlStep | PythonStep]] = []
    for step in case.reference.steps:
        if groups and type(groups[-1][0]) is type(step):
            groups[-1].append(step)
        else:
            groups.append([step])
    steps: list[ReferenceStep] = []
    counters = {StepKind.SQL: 0, StepKind.PYTHON: 0}
    for group in groups:
        kind = StepKind.SQL if isinstance(group[0], SqlStep) else StepKind.PYTHON
        counters[kind] += 1
        step_id = f"{kind.value}-{counters[kind]}"
        objective = " Then: ".join(step.objective for step in group)
        if kind is StepKind.SQL:
            statements = tuple(s for step in group if isinstance(step, SqlStep)
                               for s in step.statements)
            steps.append(ReferenceStep(step_id, kind, objective, statements=statements))
        else:
            scripts = [step for step in group if isinstance(step, PythonStep)]
            earlier = [s.id for s in steps if s.kind is StepKind.SQL]
            steps.append(ReferenceStep(step_id, kind, objective, script=chained_script(scripts),
                                       inputs=tuple(earlier[-1:])))
    return steps


def chained_script(steps: Sequence[PythonStep]) -> str:
    """One script running ``steps`` in order (the script itself when there is one).

    Every script but the last runs with ``runpy``; its protocol ``result`` is written to
    ``/scratch/<name>.json`` and later scripts read it there instead of ``/input/<name>.json``.
    The last script's protocol line is the chain's output; a failed stage prints its protocol.
    """
    if len(steps) == 1:
        return steps[0].script
    stages = []
    for number, step in enumerate(steps):
        source = step.script
        for earlier in steps[:number]:
            source = source.replace(f"/input/{earlier.name}.json", f"/scratch/{earlier.name}.json")
        stages.append((step.name, source))
    *first, (last_name, last_source) = stages
    return (
        "# One consolidated computation: each stage is a reference script; intermediate\n"
        "# results are kept in /scratch/<name>.json for the stages after it.\n"
        "import contextlib\nimport io\nimport json\nimport runpy\nfrom pathlib import Path\n\n"
        f"STAGES = {first!r}\n"
        f"LAST = {(last_name, last_source)!r}\n\n"
        "for name, source in STAGES:\n"
        "    path = Path('/scratch') / f'{name}.py'\n"
        "    path.write_text(source)\n"
        "    captured = io.StringIO()\n"
        "    with contextlib.redirect_stdout(captured):\n"
        "        runpy.run_path(str(path), run_name='__main__')\n"
        "    protocol = json.loads(captured.getvalue().strip().splitlines()[-1])\n"
        "    if protocol.get('status') != 'success':\n"
        "        print(json.dumps(protocol))\n"
        "        raise SystemExit(0)\n"
        "    (Path('/scratch') / f'{name}.json').write_text(json.dumps(protocol['result']))\n\n"
        "last = Path('/scratch') / f'{LAST[0]}.py'\n"
        "last.write_text(LAST[1])\n"
        "runpy.run_path(str(last), run_name='__main__')\n"
    )


# --- intent and plan ----------------------------------------------------------------------


def _last_sql_statement(steps: Sequence[ReferenceStep]) -> CaseStatement | None:
    last = steps[-1]
    return last.statements[-1] if last.kind is StepKind.SQL else None


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


def _scripts_project(steps: Sequence[ReferenceStep]) -> bool:
    scripts = [step.script for step in steps if step.kind is StepKind.PYTHON]
    return bool(scripts) and all(_projection_calls(script) for script in scripts)


def _projection_calls(script: str) -> list[ast.Call]:
    try:
        tree = ast.parse(script)
    except SyntaxError:
        return []
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute) and node.func.attr == "to_crs"]


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
    """The spatial relation of the case: ``within_distance`` or none.

    ``within_distance`` with the stated distance when the question has one and every script
    reprojects to metres (the compute agent's rule); no predicate otherwise.
    """
    match = _DISTANCE.search(case.question)
    if match is None or not _scripts_project(consolidated_steps(case)):
        return SpatialTopology()
    distance = Distance(value=float(match.group(1)), unit=_UNITS[match.group(2).lower()])
    return SpatialTopology(predicate=SpatialPredicate.WITHIN_DISTANCE, distance=distance,
                           reference="the features named in the question")


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


def _geometry_selected(statements: Iterable[CaseStatement]) -> bool:
    for statement in statements:
        columns = output_columns(statement.sql) or []
        if any(c == "*" or c.lower() in DEFAULT_GEOMETRY_COLUMNS or c.lower().endswith("geom")
               for c in columns):
            return True
    return False


def case_plan(case: BenchmarkCase, replanned: bool = False,
              shown_tables: Collection[str] | None = None) -> Plan:
    """The plan mirroring the case's consolidated reference steps.

    ``geometry_needed`` is true when a Python step follows and every SQL step exports a
    geometry column; the last step carries the case's Top-K. An SQL step names the tables its
    statements read, only those of ``shown_tables`` (the planner's schema outline) if given:
    a planner cannot name what it was not shown.
    """
    steps = consolidated_steps(case)
    has_python = any(step.kind is StepKind.PYTHON for step in steps)
    sql_steps = [step for step in steps if step.kind is StepKind.SQL]
    geometry = has_python and all(_geometry_selected(step.statements) for step in sql_steps)
    category: OperationCategory = _CATEGORY[case.category]
    if category == "spatial_geometry" and has_python and not geometry:
        # Deliberate: the reference program computes from attributes (e.g. lon/lat), which
        # the planner rule spatial_computation_needs_geometry does not allow; see report.
        category = "statistics"
    operation = case_operation(case)
    temporal: TemporalComparison = _TEMPORAL_COMPARISON.get(operation, "none")
    if case.category is Category.TEMPORAL and temporal == "none":
        temporal = "period_vs_period" if len(case_years(case.question)) >= 2 else "vs_baseline"
    inputs_read = sum(len(step.statements) for step in sql_steps)
    constraints = ExecutionConstraints(
        computation_needed=has_python, geometry_needed=geometry,
        input_mode="multiple" if has_python and inputs_read > 1 else "single",
        spatial_granularity=_GRANULARITY[case.scenario],
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


# --- the answer ---------------------------------------------------------------------------


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
    """The ``data_payload`` (geoask.answers schema) of a projected answer, with its unit.

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
    """One sentence for the user: the value with its unit, or how many entries the answer has.

    >>> from geoask.bench.model import AnswerContract
    >>> c = BenchmarkCase.model_construct(id="x-001", answer=AnswerContract(
    ...     answer_type="scalar", projection=Projection(value_field="n", unit="km")))
    >>> answer_summary(c, 12.5)
    'n: 12.5 km (verified program of benchmark case x-001).'
    """
    projection = case.answer.projection
    unit = f" {projection.unit}" if projection.unit else ""
    source = f"(verified program of benchmark case {case.id})."
    if case.answer.answer_type is CaseAnswerType.SCALAR:
        return f"{projection.value_field}: {projected}{unit} {source}"
    if isinstance(projected, list) and case.answer.answer_type is not CaseAnswerType.BBOX:
        return f"{len(projected)} {case.answer.answer_type.value} entries{unit and ','}{unit} " \
               f"{source}"
    return f"The {case.answer.answer_type.value} answer{unit} {source}"


# --- faults -------------------------------------------------------------------------------


def case_number(case_id: str) -> int:
    """The NNN of ``<prefix>-NNN``.

    >>> case_number("airports-015")
    15
    """
    return int(case_id.rsplit("-", 1)[1])


def planned_fault(case: BenchmarkCase) -> InjectedFault | None:
    """The fault ``reference-faulty`` injects into ``case`` (None outside the subset)."""
    if case_number(case.id) % FAULT_EVERY:
        return None
    steps = consolidated_steps(case)
    python = next((s for s in steps if s.kind is StepKind.PYTHON), None)
    if python is not None and case.category is Category.SPATIAL:
        degrees = degrees_script(python.script)
        if degrees is not None:
            return InjectedFault(FaultKind.DEGREES, python.id, degrees,
                                 "reprojection to a metric CRS removed")
    if python is not None:
        for step in steps:
            if step.kind is StepKind.SQL:
                dropped = drop_read_column(step.statements, python.script)
                if dropped is not None:
                    return InjectedFault(FaultKind.MISSING_FIELD, step.id, *dropped)
    for step in reversed(steps):
        if step.kind is StepKind.SQL:
            wrong = misspell_column(step.statements)
            if wrong is not None:
                return InjectedFault(FaultKind.WRONG_COLUMN, step.id, *wrong)
    return None


def degrees_script(script: str) -> str | None:
    """``script`` with every ``to_crs(...)`` argument replaced by EPSG:4326 (None: no call).

    >>> degrees_script("g = g.to_crs(g.estimate_utm_crs())")
    'g = g.to_crs("EPSG:4326")'
    """
    calls = _projection_calls(script)
    if not calls:
        return None
    lines = script.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    spans = []
    for call in calls:
        if not call.args and not call.keywords:
            continue
        func = call.func
        if (call.end_lineno is None or call.end_col_offset is None or func.end_lineno is None
                or func.end_col_offset is None):
            continue
        opening = script.find("(", offsets[func.end_lineno - 1] + func.end_col_offset)
        start = opening + 1
        end = offsets[call.end_lineno - 1] + call.end_col_offset - 1
        spans.append((start, end))
    if not spans:
        return None
    text = script
    for start, end in sorted(spans, reverse=True):
        if any(s < start < e for s, e in spans if (s, e) != (start, end)):
            continue
        text = text[:start] + _DEGREES_CRS + text[end:]
    return text if text != script else None


def drop_read_column(statements: Sequence[CaseStatement],
                     script: str) -> tuple[str, str] | None:
    """Statements with one output column the script reads removed, as text, and that column.

    Only a plain column or alias named once in its statement and quoted in the script is
    dropped, so the SQL stays valid and the script fails with a missing field.
    """
    for index, statement in enumerate(statements):
        try:
            tree = sqlglot.parse_one(statement.sql, dialect="postgres")
        except sqlglot.errors.ParseError:
            continue
        if not isinstance(tree, exp.Select) or len(tree.expressions) < 2:
            continue
        for expression in tree.expressions:
            name = expression.alias_or_name
            if (not name or name.lower() in DEFAULT_GEOMETRY_COLUMNS or name == "*"
                    or (f'"{name}"' not in script and f"'{name}'" not in script)
                    or len(re.findall(rf"\b{re.escape(name)}\b", statement.sql)) != 1):
                continue
            reduced = tree.copy()
            reduced.set("expressions", [e for e in reduced.expressions
                                        if e.alias_or_name != name])
            changed = [*statements[:index],
                       CaseStatement(name=statement.name,
                                     sql=reduced.sql(dialect="postgres", pretty=True)),
                       *statements[index + 1:]]
            return _statements_text(changed), name
    return None


def misspell_column(statements: Sequence[CaseStatement]) -> tuple[str, str] | None:
    """The statements with a column of the last one misspelt (``<name>_nm``), and the name."""
    statement = statements[-1]
    try:
        tree = sqlglot.parse_one(statement.sql, dialect="postgres")
    except sqlglot.errors.ParseError:
        return None
    for column in tree.find_all(exp.Column):
        name = column.name
        if (not name or not re.fullmatch(r"[a-z_][a-z0-9_]*", name)
                or re.search(rf"\bAS\s+{re.escape(name)}\b", statement.sql, re.IGNORECASE)):
            continue  # an alias of the query itself: renaming it everywhere changes nothing
        pattern = rf"(?<![\w.\"])((?:[a-z_][a-z0-9_]*\.)?){re.escape(name)}\b(?!\s*\()"
        wrong = re.sub(pattern, rf"\g<1>{name}{_WRONG_COLUMN_SUFFIX}", statement.sql)
        wrong = re.sub(rf"\bdemo\.{re.escape(name)}{_WRONG_COLUMN_SUFFIX}\b", f"demo.{name}",
                       wrong)
        if wrong != statement.sql:
            changed = [*statements[:-1], CaseStatement(name=statement.name, sql=wrong)]
            return _statements_text(changed), name
    return None


def _statements_text(statements: Sequence[CaseStatement]) -> str:
    return json.dumps([{"name": s.name, "sql": s.sql} for s in statements])


def _statements_from_text(text: str) -> list[CaseStatement]:
    return [CaseStatement(**item) for item in json.loads(text)]


# --- the model ----------------------------------------------------------------------------


@dataclass
class ReferenceModel:
    """The offline replay model over ``cases``; see the module docstring.

    Args:
        cases: the benchmark cases it knows.
        faulty: True for ``reference-faulty`` (first-attempt faults on the documented subset).

    Attributes:
        injected: faults injected so far, as ``(case id, fault kind)``.

    """

    cases: Sequence[BenchmarkCase]
    faulty: bool = False
    injected: list[tuple[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._by_question = {case.question.strip(): case for case in self.cases}
        self._by_id = {case.id: case for case in self.cases}
        self._done: set[tuple[str, str, str]] = set()
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        """``reference`` or ``reference-faulty``."""
        return REFERENCE_FAULTY if self.faulty else REFERENCE

    def model(self, role: str) -> FunctionModel:
        """The ``FunctionModel`` answering agent ``role``."""

        def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            prompt = latest_user_prompt(messages)
            reply = self.reply(role, prompt, retried=_was_retried(messages))
            return _tool_call(reply, messages, info, f"{self.name}-{role}")

        return FunctionModel(respond, model_name=f"{self.name}-{role}")

    def model_for(self, role: str, settings: object = None) -> FunctionModel:
        """Same as :meth:`model`; matches ``geoask.llm.model_for(role, settings)``."""
        return self.model(role)

    def any_role_model(self) -> FunctionModel:
        """One ``FunctionModel`` for every agent, the role read from the offered output tools.

        ``geoask.llm.model_for(..., reference_model=...)`` takes a single model.
        """

        def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            role = role_of(info)
            prompt = latest_user_prompt(messages)
            reply = self.reply(role, prompt, retried=_was_retried(messages))
            return _tool_call(reply, messages, info, f"{self.name}-{role}")

        return FunctionModel(respond, model_name=self.name)

    def find_case(self, prompt: str) -> BenchmarkCase | None:
        """The case whose question the prompt asks (exact text), else one whose id it names."""
        question = prompt_question(prompt)
        if question in self._by_question:
            return self._by_question[question]
        for case_id in _CASE_ID.findall(prompt):
            if case_id in self._by_id:
                return self._by_id[case_id]
        return None

    def reply(self, role: str, prompt: str, *, retried: bool = False) -> BaseModel:
        """What agent ``role`` is answered for ``prompt`` (an output model of that agent)."""
        case = self.find_case(prompt)
        if case is None:
            if role == "intent":
                return IntentRejection(rejection_type=RejectionType.NOT_ANSWERABLE,
                                       message=UNKNOWN_QUESTION_MESSAGE)
            raise ValueError(UNKNOWN_QUESTION_MESSAGE)
        if role == "intent":
            return case_intent(case)
        if role == "planner":
            return case_plan(case, replanned="Earlier plans failed" in prompt,
                             shown_tables=_OUTLINE_TABLE.findall(prompt))
        if role == "answer":
            return case_answer(case, prompt)
        if role == "reviewer":
            return self._review(case, prompt)
        step = self._step(case, prompt)
        if role == "sql":
            return self._sql(case, step, retried)
        if role == "compute":
            return self._compute(case, step, retried)
        raise ValueError(f"the reference model has no role {role!r}")

    def _step(self, case: BenchmarkCase, prompt: str) -> ReferenceStep:
        match = re.search(r'^Step \(JSON\): (.*)$', prompt, re.MULTILINE)
        step_id = json.loads(match.group(1))["id"] if match else ""
        for step in consolidated_steps(case):
            if step.id == step_id:
                return step
        raise ValueError(f"case {case.id} has no step {step_id!r}")

    def _first_time(self, case: BenchmarkCase, kind: FaultKind, step_id: str) -> bool:
        with self._lock:
            key = (case.question, kind.value, step_id)
            if key in self._done:
                return False
            self._done.add(key)
            self.injected.append((case.id, kind.value))
            return True

    def _fault(self, case: BenchmarkCase, step: ReferenceStep, retried: bool,
               kinds: tuple[FaultKind, ...]) -> InjectedFault | None:
        if not self.faulty or retried:
            return None
        fault = planned_fault(case)
        if fault is None or fault.kind not in kinds or fault.step_id != step.id:
            return None
        return fault if self._first_time(case, fault.kind, step.id) else None

    def _sql(self, case: BenchmarkCase, step: ReferenceStep, retried: bool) -> SqlDraft:
        fault = self._fault(case, step, retried,
                            (FaultKind.MISSING_FIELD, FaultKind.WRONG_COLUMN))
        statements = (_statements_from_text(fault.faulty_text) if fault
                      else list(step.statements))
        return SqlDraft(statements=[
            SqlStatement(name=s.name, sql=s.sql, purpose=f"{s.name}: {step.objective}"[:300])
            for s in statements])

    def _compute(self, case: BenchmarkCase, step: ReferenceStep,
                 retried: bool) -> ComputeScript:
        fault = self._fault(case, step, retried, (FaultKind.DEGREES,))
        script = fault.faulty_text if fault else step.script
        method = ("reference script of the case, as verified"
                  + (f"; measured as the case states: {case.measurement}"
                     if case.measurement else ""))
        return ComputeScript(script=script, method=method[:500])

    def _review(self, case: BenchmarkCase, prompt: str) -> Review:
        fault = planned_fault(case) if self.faulty else None
        if fault is not None and fault.kind is FaultKind.DEGREES:
            key = (case.question, "review", fault.step_id)
            with self._lock:
                first = key not in self._done and (
                    case.question, FaultKind.DEGREES.value, fault.step_id) in self._done
                if first:
                    self._done.add(key)
            if first:
                return Review(decision=ReviewDecision.REVISE, target_step=fault.step_id,
                              reason="the distances/areas are in degrees (the script measured "
                                     "in EPSG:4326); reproject to a metric CRS and recompute")
        return Review(decision=ReviewDecision.ACCEPT,
                      reason="the evidence has the fields of the answer contract")


_ROLE_BY_OUTPUT: Final = {
    "Intent": "intent", "Plan": "planner", "SqlDraft": "sql", "ComputeScript": "compute",
    "Review": "reviewer", "FinalAnswer": "answer",
}


def role_of(info: AgentInfo) -> str:
    """The agent role of a request, from the names of its output tools.

    Raises:
        ValueError: no output tool belongs to one of the six agents.

    """
    for tool in info.output_tools:
        for output, role in _ROLE_BY_OUTPUT.items():
            if tool.name == output or tool.name.endswith(f"_{output}"):
                return role
    offered = ", ".join(tool.name for tool in info.output_tools) or "none"
    raise ValueError(f"the reference model answers only the geoask agents (offered: {offered})")


def prompt_question(prompt: str) -> str:
    r"""The question of an agent prompt (``Question: ...`` up to the first blank line).

    >>> prompt_question("Question: How many?\n\nTables: ...")
    'How many?'
    """
    if not prompt.startswith("Question: "):
        return prompt.strip()
    return prompt[len("Question: "):].split("\n\n", 1)[0].strip()


def _was_retried(messages: Sequence[ModelMessage]) -> bool:
    return any(isinstance(part, RetryPromptPart) for message in messages
               if isinstance(message, ModelRequest) for part in message.parts)


def _tool_call(reply: BaseModel, messages: list[ModelMessage], info: AgentInfo,
               model_name: str) -> ModelResponse:
    """Answer through the agent's output tool for ``reply``'s type, with local token counts."""
    call, completion_tokens = output_tool_call(reply, info)
    return ModelResponse(
        parts=[call],
        usage=RequestUsage(input_tokens=count_tokens(request_text(messages, info)),
                           output_tokens=completion_tokens),
        model_name=model_name,
    )


def reference_model(cases: Sequence[BenchmarkCase], name: str = REFERENCE) -> ReferenceModel:
    """A :class:`ReferenceModel` for ``name`` (``reference`` or ``reference-faulty``).

    Raises:
        ValueError: ``name`` is not one of :data:`REFERENCE_MODELS`.

    """
    if name not in REFERENCE_MODELS:
        raise ValueError(f"{name!r} is not a reference model ({', '.join(REFERENCE_MODELS)})")
    return ReferenceModel(cases, faulty=name == REFERENCE_FAULTY)
