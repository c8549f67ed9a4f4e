"""Compact prompt text for a schema subset (and, for comparison, for the whole catalog).

One header line per table (qualified name, title, granularity, coverage, where it came from)
and one line per kept column (type, key role, meaning, unit, values), then the abbreviations
once.
"""

from __future__ import annotations

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


def _granularity(table: Table) -> str:
    """'state, static', 'grid_cell, monthly; 1999-01-01 to 1999-12-01': unit, step, coverage."""
    text = f"{table.spatial_granularity!s}, {table.temporal_granularity!s}"
    return text + (f"; {coverage_text(table)}" if table.temporal_coverage else "")


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
    table: Table, column: Column, max_values: int | None = None, query: str = "",
    glossary: dict[str, str] | None = None,
) -> str:
    """'  fips char(2) PK → us_states.fips: State FIPS code. Unit: ...' for one column.

    Long value lists are cut to ``max_values`` plus the values ``query`` names. Abbreviations
    go into ``glossary`` when one is given (printed once, see :func:`glossary_line`), else
    inline.
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
    if column.unit and column.spatial is None:
        text += f" Unit: {column.unit}."
    if column.values:
        text += " Values: " + shown_values(column.values, max_values, query) + "."
    if column.range and not _is_text(column.type):  # an alphabetical min/max says little
        low, high = (_number(v) for v in column.range)
        text += f" Range: {low} to {high}."
    if column.abbreviations and glossary is not None:
        glossary.update(column.abbreviations)
    elif column.abbreviations:
        text += " " + "; ".join(f"{k} = {v}" for k, v in column.abbreviations.items()) + "."
    return text


def glossary_line(glossary: dict[str, str]) -> str:
    """'Abbreviations: FIPS = ...; IATA = ...' (sorted), or '' for an empty glossary.

    >>> glossary_line({"NA": "not available", "FIPS": "Federal Information Processing Standards"})
    'Abbreviations: FIPS = Federal Information Processing Standards; NA = not available.'
    """
    if not glossary:
        return ""
    return "Abbreviations: " + "; ".join(f"{k} = {glossary[k]}" for k in sorted(glossary)) + "."


def table_block(
    schema: str,
    table: Table,
    columns: Sequence[str] | None = None,
    note: str = "",
    max_values: int | None = None,
    query: str = "",
    brief: bool = False,
    glossary: dict[str, str] | None = None,
) -> str:
    """Header line plus kept column lines of ``table``; ``columns`` None keeps every column.

    ``max_values`` and ``query`` shorten long value lists (see :func:`shown_values`); ``brief``
    leaves the theme out of the header (for tables joined in only for their keys/geometry);
    ``glossary`` collects abbreviations (see :func:`column_line`).
    """
    kept = [c for c in table.columns if columns is None or c.name in columns]
    theme = "" if brief else " " + prompt_theme(table.theme)
    header = f"{schema}.{table.name}: {table.title}.{theme} [rows: {_granularity(table)}]{note}"
    lines = [header] + [column_line(table, c, max_values, query, glossary) for c in kept]
    omitted = len(table.columns) - len(kept)
    if omitted:
        lines.append(f"  ({omitted} more columns not shown)")
    return "\n".join(lines)


def render_catalog(catalog: Catalog) -> str:
    """The whole catalog in the same format: every table, every column."""
    glossary: dict[str, str] = {}
    blocks = [table_block(catalog.schema_of(t), t, glossary=glossary) for t in catalog.tables]
    return "\n\n".join(filter(None, [*blocks, glossary_line(glossary)]))


def outline_block(schema: str, table: Table, columns: Sequence[str] | None = None,
                  note: str = "") -> str:
    """``table`` (in ``schema``) for an agent that picks tables and columns but writes no query.

    The header keeps title, granularity and coverage (no theme); each kept column is its name,
    type, key role and unit.

    >>> from geoask.catalog.model import load_catalog
    >>> from geoask.settings import get_settings
    >>> t = load_catalog(get_settings().catalog_path).table("climate_grid_monthly")
    >>> print(outline_block("climate", t, ["cell_id", "precipitation_mm"]))  # doctest: +ELLIPSIS
    climate.climate_grid_monthly: Monthly precipitation ... [grid_cell, monthly; 1999-01-01 to ...]
      cell_id integer PK → climate_grid_cells.cell_id
      precipitation_mm real (millimetres per month)
      (2 more columns not shown)
    """
    kept = [c for c in table.columns if columns is None or c.name in columns]
    lines = [f"{schema}.{table.name}: {table.title} [{_granularity(table)}]{note}"]
    for column in kept:
        roles = ["PK"] if column.name in table.primary_key else []
        roles += [f"→ {fk.ref_table}.{fk.ref_columns[fk.columns.index(column.name)]}"
                  for fk in table.foreign_keys if column.name in fk.columns]
        unit = f" ({column.unit})" if column.unit and column.spatial is None else ""
        lines.append(f"  {column.name} {column.type}{''.join(' ' + r for r in roles)}{unit}")
    if len(kept) < len(table.columns):
        lines.append(f"  ({len(table.columns) - len(kept)} more columns not shown)")
    return "\n".join(lines)

