"""Names and features of the codes an answer carries: one bounded, read-only lookup by key.

An answer often identifies features by a code only - a state's FIPS code or postal
abbreviation, a county's FIPS code, an airport's IATA code - and a SQL step that ranks states by
income exports no geometry. Where the catalog marks a table's label column and the code columns
it names (:class:`geoask.catalog.labels.Labels`), :func:`look_up_keys` reads, in **one** query
through the run's SQL runner (the guard, the read-only reader role, the row cap), each
candidate code column's rows whose code is among the answer's values: the code, the name and the
geometry in EPSG:4326. The candidate matching the most distinct values wins (ties: catalog
order). A code that names two different names is left unnamed, never guessed; a value of the
wrong type for a column (text for an integer code), or outside the column's catalogued range, is
not looked up there.

The names fill the ``name`` column of the terminal answer
(:func:`geoask.base.answer_text.payload_table`); the features are the answer map's geometry when
the run exported none of the answer's features (:func:`geoask.maps.answer_map.draw_answer_maps`
says so in the legend).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final

import geopandas as gpd
from psycopg import sql

from geoask.base.formats import GEOJSON
from geoask.catalog.labels import code_kind
from geoask.catalog.model import PLANAR
from geoask.errors import GeoaskError
from geoask.maps.answer_features import answer_values
from geoask.maps.answer_values import NAME_COLUMN
from geoask.records.artifact_registry import ArtifactKind, ColumnInfo, RegistryEntry
from geoask.sql.context import GuardContext
from geoask.sql.guard import check_sql
from geoask.sql.shape import tables_read
from geoask.vocabulary.answers import AnswerType, FinalAnswer

if TYPE_CHECKING:
    from geoask.catalog.model import Catalog, Column, Table
    from geoask.settings import Settings
    from geoask.sql.executor import SqlRunner
    from geoask.vocabulary.artifacts import ArtifactRef

MAX_CODES: Final = 2000
"""Distinct code values looked up at most (more: no lookup; the map draws 2,000 at most)."""
MAX_CANDIDATES: Final = 6
"""Code columns one lookup reads at most (the first in catalog order)."""
LOOKUP_STEP: Final = "map"
"""The step name of the looked-up features' artifact (``map.us_states``)."""
MAX_CODE_CHARS: Final = 64
"""Longest text value looked up (codes are short: IATA 3, FIPS 5, ISO 3166 3 characters)."""
CHAR_WIDTH: Final = re.compile(r"^\s*(?:char|character|varchar|character varying)\s*\((\d+)\)",
                               re.IGNORECASE)
"""The declared width of a character code column: a longer value cannot be one of its codes."""
logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Candidate:
    """One code column an answer field's values may name: ``field`` values against ``code``."""

    field: str
    table: Table
    code: Column
    values: tuple[str | int, ...]


@dataclass(frozen=True)
class KeyedFeatures:
    """What a lookup found: names by code, and the coded features (None: no geometry).

    Attributes:
        table: the table looked up, schema-qualified.
        code: its code column the answer's values matched.
        field: the payload field whose values matched.
        names: the payload's code (as text) -> its name, for codes with exactly one name.
        features: the matched rows (code column, name column, geometry) in EPSG:4326, or None
            when the table has no geometry in a named CRS.
        looked_for: the distinct codes of ``field`` looked up in ``code``.
        sql: the lookup's SQL (all candidates; the features are ``table``'s rows).

    """

    table: str
    code: str
    field: str
    names: dict[str, str]
    features: gpd.GeoDataFrame | None
    looked_for: int = 0
    sql: str = ""

    def registry_entry(self, url: str, run_id: str) -> RegistryEntry:
        """The looked-up features as the run's artifact ``map.<table>`` at ``url`` (GeoJSON).

        Registered when the map drew them as the answer (the run exported none of its
        features), so ``AskResult.gdf``, the GeoPackage and a later turn have what the map
        shows; its source is the lookup's SQL, its coordinates WGS 84 as PostGIS gave them.
        """
        assert self.features is not None
        name = self.table.rpartition(".")[2]
        return RegistryEntry(
            ref=f"{LOOKUP_STEP}.{name}", name=name, kind=ArtifactKind.FEATURES, url=url,
            format=GEOJSON.name, srid=4326, bbox_wgs84=[float(v) for v in
                                                         self.features.total_bounds],
            geometry_types=sorted(set(self.features.geom_type.dropna())),
            row_count=len(self.features),
            columns=[ColumnInfo(name=str(c)) for c in self.features.columns
                     if c != self.features.geometry.name],
            step=LOOKUP_STEP, made_by="sql", source=self.sql, run_id=run_id)

    @property
    def how(self) -> str:
        """Where the map's geometry came from, for its legend (and how many codes it lacks)."""
        drawn = 0 if self.features is None else self.features[self.code].nunique()
        missing = (f"; {self.looked_for - drawn} of the {self.looked_for} codes not drawn (not "
                   "found, no geometry, or two names)" if drawn < self.looked_for else "")
        return f"geometry looked up in {self.table} by {self.code}{missing}; the run exported none"


def candidates(catalog: Catalog, answer: FinalAnswer,
               read: Collection[str] = ()) -> list[Candidate]:
    """The labelled code columns the answer's key values may name (module docstring).

    A list's ``id`` values may name any code column; a record's field only a code column of
    its own name (``fips`` also ``county_fips``), so a ``year`` is never taken for a road id,
    and a code column a field is named exactly after is that field's alone (a record's row
    ``id`` beside its ``canton_id`` is no canton). When some candidate table is among ``read``
    (the tables the run's SQL read), only those.
    """
    found: list[Candidate] = []
    for field, values in answer_values(answer).items():
        distinct = tuple(dict.fromkeys(v for v in values if _sendable(v)))
        if not distinct or len(distinct) > MAX_CODES:
            continue
        for table in catalog.tables:
            for name in table.labels.codes if table.labels else ():
                code = table.column(name)
                fitting = tuple(v for v in distinct if _fits(v, code))
                if fitting and _names_code(answer, field, name):
                    found.append(Candidate(field, table, code, fitting))
    exact = {(c.table.name, c.code.name) for c in found if c.field == c.code.name}
    found = [c for c in found
             if c.field == c.code.name or (c.table.name, c.code.name) not in exact]
    preferred = [c for c in found if c.table.name in read]
    return (preferred or found)[:MAX_CANDIDATES]


def _names_code(answer: FinalAnswer, field: str, code: str) -> bool:
    if answer.answer_type in (AnswerType.ENTITY_LIST, AnswerType.RANKED_LIST):
        return True
    field, code = field.casefold(), code.casefold()
    return field == code or code.endswith(f"_{field}") or field.endswith(f"_{code}")


def tables_read_by(step_artifacts: Iterable[Iterable[ArtifactRef]]) -> set[str]:
    """Names of the tables the SQL of a run's steps read."""
    statements = {ref.sql for refs in step_artifacts for ref in refs if ref.sql}
    return {name for sql in statements for name in tables_read(sql) or []}


def _sendable(value: Any) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or (
        isinstance(value, str) and value.isprintable() and "\\" not in value
        and 0 < len(value) <= MAX_CODE_CHARS)


def _fits(value: str | int, column: Column) -> bool:
    if code_kind(column.type) is not type(value):
        return False
    width = CHAR_WIDTH.match(column.type)
    if isinstance(value, str) and width and len(value) > int(width.group(1)):
        return False
    if column.range is None or not all(type(b) is type(value) for b in column.range):
        return True
    low, high = column.range
    return bool(low <= value <= high)  # type: ignore[operator]


def lookup_sql(catalog: Catalog, found: list[Candidate]) -> str:
    """One ``UNION ALL`` query reading every candidate's coded rows (psycopg's quoting).

    Columns: the candidate's index, the code and the name as text, the geometry in EPSG:4326
    (NULL for a table without geometry in a named CRS).
    """
    parts = []
    for index, candidate in enumerate(found):
        table, labels = candidate.table, candidate.table.labels
        assert labels is not None
        code = sql.Identifier(candidate.code.name)
        parts.append(sql.SQL(
            "SELECT {index} AS candidate, {code}::text AS code, {name}::text AS label, "
            "{geometry} AS geom FROM {schema}.{table} WHERE {code} IN ({values})").format(
            index=sql.Literal(index), code=code, name=sql.Identifier(labels.name),
            geometry=_geometry(table), schema=sql.Identifier(catalog.schema_of(table)),
            table=sql.Identifier(table.name),
            values=sql.SQL(", ").join(sql.Literal(v) for v in candidate.values)))
    return sql.SQL("\nUNION ALL\n").join(parts).as_string(None)


def _geometry(table: Table) -> sql.Composable:
    column = table.geometry_column
    if column is None or (column.geo is not None and (column.geo.srid == 0 or
                                                      column.geo.crs == PLANAR)):
        return sql.SQL("NULL::geometry")
    if column.type.replace(" ", "").lower().endswith(",4326)"):
        return sql.Identifier(column.name)
    return sql.SQL("ST_Transform({}, 4326)").format(sql.Identifier(column.name))


def look_up_keys(catalog: Catalog, runner: SqlRunner, settings: Settings,
                 answer: FinalAnswer | None, read: Collection[str] = ()) -> KeyedFeatures | None:
    """Names and features of the answer's codes (module docstring); None when none match.

    ``read`` names the tables the run's SQL read (:func:`tables_read_by`), preferred as
    candidates. A failed lookup (the database, the guard, the row cap) is logged and gives
    None: names and lookup geometry are a view of the answer, which stands without them.
    """
    found = candidates(catalog, answer, read) if answer is not None else []
    if not found:
        return None
    row_cap = 2 * sum(len(c.values) for c in found)
    context = GuardContext.from_settings(settings, policy="postgis", catalog=catalog,
                                         derive_functions=False)
    text = lookup_sql(catalog, found)
    # The guard checks all of it; its text limit bounds what a model writes, while this query's
    # length is bounded by MAX_CANDIDATES x MAX_CODES literals of MAX_CODE_CHARS (1,500 IATA
    # codes were 20,500 characters: over the limit, so they went unnamed and unmapped).
    limit = max(context.max_sql_chars, len(text))
    try:
        checked = check_sql(text, replace(context, row_cap=row_cap, max_sql_chars=limit))
        result = runner.run(checked)
    except GeoaskError as error:
        logger.warning("could not look up the answer's names: %s", str(error).splitlines()[0])
        return None
    keyed = best_match(catalog, found, result.rows)
    return None if keyed is None else replace(keyed, sql=text)


def best_match(catalog: Catalog, found: list[Candidate],
               rows: list[tuple[Any, ...]]) -> KeyedFeatures | None:
    """The candidate whose codes matched the most distinct values, from the lookup's rows.

    None when nothing matched, or when two tables' code columns matched as many values (which
    one the answer means cannot be told) and named them differently.
    """
    by_candidate: dict[int, list[tuple[Any, ...]]] = {}
    for row in rows:
        by_candidate.setdefault(int(row[0]), []).append(row)
    matches = {i: len({r[1] for r in matched}) for i, matched in by_candidate.items()}
    if not matches:
        return None
    most = max(matches.values())
    tied = [i for i, n in sorted(matches.items()) if n == most]
    if len({frozenset((r[1], r[2]) for r in by_candidate[i]) for i in tied}) > 1:
        logger.info("answer codes match %s alike; not named",
                    ", ".join(sorted({found[i].table.name for i in tied})))
        return None
    index = tied[0]
    candidate, matched = found[index], by_candidate[index]
    labels = candidate.table.labels
    assert labels is not None
    named: dict[str, set[str]] = {}
    for _, code, label, _ in matched:
        named.setdefault(code, set()).add(label)
    names = {code: next(iter(n)) for code, n in named.items() if len(n) == 1 and None not in n}
    shapes = [r for r in matched if r[3] is not None and r[1] in names]
    features = gpd.GeoDataFrame(
        {candidate.code.name: [_as_payload(r[1], candidate) for r in shapes],
         labels.name: [r[2] for r in shapes]},
        geometry=[r[3] for r in shapes], crs=4326) if shapes else None
    if features is not None:
        features.attrs[NAME_COLUMN] = labels.name
    return KeyedFeatures(catalog.qualified_name(candidate.table), candidate.code.name,
                         candidate.field, names, features, len(candidate.values))


def _as_payload(code: str, candidate: Candidate) -> str | int:
    """A code read as text, typed back as the payload holds it (integers stay integers)."""
    return int(code) if all(isinstance(v, int) for v in candidate.values) else code
