"""The first-attempt faults of ``reference-faulty``.

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

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

import sqlglot
from sqlglot import exp

from geoask.cases.model import BenchmarkCase, Category
from geoask.cases.model import SqlStatement as CaseStatement
from geoask.cases.steps import consolidated_steps, projection_calls
from geoask.catalog.columns import spatial_column_names
from geoask.vocabulary.plan import StepKind

FAULT_EVERY: Final = 5
"""reference-faulty injects a fault into cases whose id number is a multiple of this."""

_WRONG_COLUMN_SUFFIX: Final = "_nm"
_DEGREES_CRS: Final = '"EPSG:4326"'


class FaultKind(StrEnum):
    """The first-attempt faults of ``reference-faulty`` (see the module docstring)."""

    DEGREES = "degrees"
    MISSING_FIELD = "missing_field"
    WRONG_COLUMN = "wrong_column"


@dataclass(frozen=True)
class InjectedFault:
    """A fault planned for a case: its kind, the step it hits and the faulty text."""

    kind: FaultKind
    step_id: str
    faulty_text: str
    detail: str


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
    calls = projection_calls(script)
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
            if (not name or name.lower() in spatial_column_names() or name == "*"
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
    schemas = {table.db for table in tree.find_all(exp.Table) if table.db}
    for column in tree.find_all(exp.Column):
        name = column.name
        if (not name or not re.fullmatch(r"[a-z_][a-z0-9_]*", name)
                or re.search(rf"\bAS\s+{re.escape(name)}\b", statement.sql, re.IGNORECASE)):
            continue  # an alias of the query itself: renaming it everywhere changes nothing
        pattern = rf"(?<![\w.\"])((?:[a-z_][a-z0-9_]*\.)?){re.escape(name)}\b(?!\s*\()"
        wrong = re.sub(pattern, rf"\g<1>{name}{_WRONG_COLUMN_SUFFIX}", statement.sql)
        for schema in schemas:  # a table named like the column keeps its name
            wrong = re.sub(rf"\b{re.escape(schema)}\.{re.escape(name)}{_WRONG_COLUMN_SUFFIX}\b",
                           f"{schema}.{name}", wrong)
        if wrong != statement.sql:
            changed = [*statements[:-1], CaseStatement(name=statement.name, sql=wrong)]
            return _statements_text(changed), name
    return None


def _statements_text(statements: Sequence[CaseStatement]) -> str:
    return json.dumps([{"name": s.name, "sql": s.sql} for s in statements])


def statements_from_text(text: str) -> list[CaseStatement]:
    """The statements of a fault's ``faulty_text`` (JSON written by the fault builders)."""
    return [CaseStatement(**item) for item in json.loads(text)]
