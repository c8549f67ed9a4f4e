"""Compact prompt text for a schema subset (and, for comparison, for the whole catalog).

One header line per table (qualified name, title, granularity, coverage, where it came from)
and one line per kept column (type, key role, meaning, unit, values, abbreviations).
"""

from __future__ import annotations

from collections.abc import Sequence

from geoask.catalog.model import Catalog, Column, Table
from geoask.retrieval.documents import coverage_text
from geoask.retrieval.lexical import normalise


def _number(value: float | str) -> str:
    """'1929' for 1929.0, '0.13' for 0.13, strings unchanged."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def shown_values(values: Sequence[str | int], max_values: int | None, query: str = "") -> str:
    """The values to print: all, or the first ``max_values`` plus those the query names.

    >>> shown_values(["arson", "fraud", "fight"], 1, "any fraud?")
    'arson, fraud, ... (3 values in all)'
    """
    if max_values is None or len(values) <= max_values:
        return ", ".join(map(str, values))
    words = set(normalise(query).split())
    named = {v for v in values if words & set(normalise(str(v)).split())}
    shown = [v for i, v in enumerate(values) if i < max_values or v in named]
    return ", ".join(map(str, shown)) + f", ... ({len(values)} values in all)"


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
    if column.range:
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
    header = (
        f"{schema}.{table.name}: {table.title}.{'' if brief else ' ' + table.theme} "
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
