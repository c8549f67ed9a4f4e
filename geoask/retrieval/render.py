"""Compact prompt text for a schema subset (and, for comparison, for the whole catalog).

One header line per table (qualified name, title, granularity, coverage, where it came from)
and one line per kept column (type, key role, meaning, unit, values, abbreviations).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from geoask.catalog.model import Catalog, Column, Table
from geoask.retrieval.documents import _SENTENCE_END, coverage_text
from geoask.retrieval.lexical import STOP_WORDS, normalise


def _number(value: float | str) -> str:
    """'1929' for 1929.0, '0.13' for 0.13, strings unchanged."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _is_text(column_type: str) -> bool:
    """Whether a column type is a character type ('text', 'char(2)', 'varchar(40)'...)."""
    return column_type.lower().startswith(("text", "char", "varchar", "character"))


def shown_values(values: Sequence[str | int], max_values: int | None, query: str = "") -> str:
    """The values to print: all, or the first ``max_values`` plus those the query names.

    >>> shown_values(["arson", "fraud", "fight"], 1, "any fraud?")
    'arson, fraud, ... (3 values in all)'
    """
    if max_values is None or len(values) <= max_values:
        return ", ".join(map(str, values))
    asked = f" {normalise(query)} "
    # A value is named whole ('HI'), or by a word that is not short or common: 'of' or 'the'
    # would name half of a long list of slugs.
    words = {w for w in asked.split() if len(w) >= 3 and w not in STOP_WORDS}
    named = {v for v in values
             if f" {normalise(str(v))} " in asked or words & set(normalise(str(v)).split())}
    shown = [v for i, v in enumerate(values) if i < max_values or v in named]
    return ", ".join(map(str, shown)) + f", ... ({len(values)} values in all)"


def prompt_theme(theme: str) -> str:
    """``theme`` without its 'Answers questions such as' list (retrieval text, not schema).

    >>> prompt_theme("Income by state. Answers questions such as: the richest state. In USD.")
    'Income by state. In USD.'
    """
    return " ".join(sentence for sentence in _SENTENCE_END.split(theme.strip())
                    if not sentence.lower().startswith("answers questions"))


def column_line(
    table: Table, column: Column, max_values: int | None = None, query: str = ""
) -> str:
    """'  fips char(2) PK → us_states.fips: State FIPS code. Unit: ...' for one column.

    Long value lists are cut to ``max_values`` plus the values ``query`` names.
    """
    roles = []
    if column.name in table.primary_key:
        roles.append("PK")
    for fk in table.foreign_keys:
        if column.name in fk.columns:
            ref = fk.ref_columns[fk.columns.index(column.name)]
            roles.append(f"→ {fk.ref_table}.{ref}")
    text = f"  {column.name} {column.type}{' ' + ' '.join(roles) if roles else ''}: "
    text += column.description
    if column.unit:
        text += f" Unit: {column.unit}."
    if column.values:
        text += " Values: " + shown_values(column.values, max_values, query) + "."
    if column.range and not _is_text(column.type):  # an alphabetical min/max says little
        low, high = (_number(v) for v in column.range)
        text += f" Range: {low} to {high}."
    if column.abbreviations:
        text += " " + "; ".join(f"{k} = {v}" for k, v in column.abbreviations.items()) + "."
    return text


def table_block(
    schema: str,
    table: Table,
    columns: Sequence[str] | None = None,
    note: str = "",
    max_values: int | None = None,
    query: str = "",
    brief: bool = False,
) -> str:
    """Header line plus kept column lines of ``table``; ``columns`` None keeps every column.

    ``max_values`` and ``query`` shorten long value lists (see :func:`shown_values`); ``brief``
    leaves the theme out of the header (for tables joined in only for their keys/geometry).
    """
    kept = [c for c in table.columns if columns is None or c.name in columns]
    theme = "" if brief else " " + prompt_theme(table.theme)
    header = (
        f"{schema}.{table.name}: {table.title}.{theme} "
        f"[rows: {table.spatial_granularity.value}, {table.temporal_granularity.value}; "
        f"coverage {coverage_text(table)}]{note}"
    )
    lines = [header] + [column_line(table, c, max_values, query) for c in kept]
    omitted = len(table.columns) - len(kept)
    if omitted:
        lines.append(f"  ({omitted} more columns not shown)")
    return "\n".join(lines)


def render_catalog(catalog: Catalog) -> str:
    """The whole catalog in the same format: every table, every column."""
    return "\n\n".join(table_block(catalog.schema_name, t) for t in catalog.tables)



_UNIT = re.compile(r" Unit: (.+?)\.(?: |$)")


def schema_outline(schema_text: str) -> str:
    r"""A rendered schema subset with column lines cut to name, type, key role and unit.

    For an agent that picks tables and columns but writes no query (the planner): table
    headers stay whole; column meanings, values and ranges are left out.

    >>> schema_outline("demo.t: T.\n  area real: Land area. Unit: km2. Range: 1 to 9.")
    'demo.t: T.\n  area real (km2)'
    """
    lines = []
    for line in schema_text.splitlines():
        if line.startswith("  ") and ": " in line:
            head, _, rest = line.partition(": ")
            unit = _UNIT.search(rest)
            line = f"{head} ({unit.group(1)})" if unit else head
        lines.append(line)
    return "\n".join(lines)
