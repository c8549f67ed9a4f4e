"""``geoask catalog draft``: a catalog YAML drafted from any PostgreSQL/PostGIS database.

The draft follows the shape of ``geoask/catalog/catalog.yaml``: per table or view its kind,
row count, keys (primary and ``unique``), declared foreign keys, ``COMMENT ON`` texts (kept
apart in ``from_database``, unreviewed: never a title, theme or description a model is shown
until a person confirms them, see :mod:`geoask.catalog.review`; a table's comment once:
:func:`title_and_theme`), and per column its type,
nullability, range (``range_sampled`` when it comes from statistics or a sample of a big
relation), few distinct values and, for geometry/geography columns, geometry type,
SRID, CRS name and units, extent and validity (:class:`~geoask.catalog.model.GeoInfo`); a
raster column's CRS, pixel size, tiling, extent, pixel types and nodata from ``raster_columns``
(:class:`~geoask.catalog.model.RasterInfo`, band names, meanings and units ``TODO``). Join
paths are the declared foreign keys plus *inferred* ones (``inferred: true``): same-named,
same-typed key columns and same-named columns whose sampled values match
(:mod:`geoask.catalog.attribute_joins`), each with its ``cardinality`` from the keys, and
spatial joins between geometry tables whose extents overlap, with the predicate and the sampled
match share (:mod:`geoask.catalog.spatial_joins`). The statistics of one relation share a time
budget (``sample_budget_s``); one that runs out gets a ``notes`` line and no measured joins.
Names that look abbreviated get ``abbreviation_candidates``
(:mod:`geoask.catalog.abbreviations`). What the database cannot tell (titles, themes,
provenance, units of numbers, a polygon table's spatial unit) is written as ``TODO`` for a
person to fill in; ``Catalog.todos()`` and ``geoask catalog check`` list them. The draft
validates as a :class:`~geoask.catalog.model.Catalog` before it is written.
"""

from __future__ import annotations

import datetime as dt
import itertools
import math
import os
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psycopg
import yaml
from pydantic import ValidationError

from geoask.catalog import abbreviations, attribute_joins, introspect, profile, spatial_joins
from geoask.catalog.introspect import LiveColumn, Relation
from geoask.catalog.labels import propose_labels
from geoask.catalog.model import (
    TODO,
    Catalog,
    Column,
    ForeignKey,
    GeoInfo,
    RasterBand,
    RasterInfo,
    Table,
    TemporalCoverage,
    TemporalGranularity,
    Todo,
)
from geoask.catalog.spatial import SpatialKind, spatial_kind
from geoask.errors import CatalogError, validation_problems

_INTEGER = re.compile(r"^(smallint|integer|bigint|numeric\(\d+,\s*0\))$")


def draft_catalog(url: str, schemas: Sequence[str] | None = None, *,
                  threshold: int = profile.ROW_THRESHOLD, timeout_s: int = 30,
                  sample_budget_s: float = profile.RELATION_BUDGET_S) -> Catalog:
    """Introspect the database at ``url`` and return a draft catalog of ``schemas``.

    ``schemas`` default to every non-system schema with a table the role can read; the
    catalog's ``schema`` is the first one, tables of the others name theirs. Relations of at
    most ``threshold`` rows are profiled exactly, bigger ones from estimates and samples.
    Geometry facts are in each column's own CRS (``GeoInfo.extent`` in its units). The
    statistics of one relation take at most ``sample_budget_s`` seconds; a relation whose
    sampling stopped gets a note and no measured join paths.

    Raises:
        DatabaseError: the database cannot be reached.
        CatalogError: a schema is unknown or unreadable, there is no table at all, or two
            schemas hold tables of the same name (draft them separately).

    """
    with introspect.read_only(url, timeout_s) as conn:
        rels = introspect.relations(conn, schemas)
        if not rels:
            raise CatalogError("the database has no table this role can read")
        names: dict[str, str] = {}
        for rel in rels:
            if rel.name in names:
                raise CatalogError(f"table {rel.name} is in schemas {names[rel.name]} and "
                                   f"{rel.schema}; draft them with separate --schema runs")
            names[rel.name] = rel.schema
        order = list(dict.fromkeys(schemas or [r.schema for r in rels]))
        home = order[0]
        postgis = introspect.postgis_schema(conn) or "public"
        budget = (sample_budget_s, timeout_s)
        try:
            tables = [_table(conn, rel, home, threshold, postgis, {r.name for r in rels}, budget)
                      for rel in rels]
        except ValidationError as error:  # a bug of the draft, reported in one line
            raise CatalogError(
                f"the draft does not validate: {validation_problems(error)}") from None
        probe = attribute_joins.sql_probe(conn, {t.name: t for t in tables}, *budget)
        measured = [t for t in tables if not t.notes]  # sampling stopped: not probed again
        join_paths = attribute_joins.join_paths(rels, tables, probe) + \
            spatial_joins.infer_spatial_joins(conn, rels, measured, budget=budget)
        comment = conn.execute("SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace "
                               "WHERE nspname = %s", (home,)).fetchone()
    copied = {"description": comment[0].strip()} if comment and (comment[0] or "").strip() \
        else {}
    try:
        catalog = Catalog.model_validate({
            "version": 1, "schema": home, "description": TODO, "tables": tables,
            "join_paths": join_paths, "from_database": copied,
        })
    except ValidationError as error:
        raise CatalogError(f"the draft does not validate: {validation_problems(error)}") from None
    return catalog.model_copy(update={"join_paths": [
        p.model_copy(update={"cardinality": catalog.join_cardinality(p)})
        for p in catalog.join_paths]})


def _table(conn: psycopg.Connection, rel: Relation, home: str, threshold: int, postgis: str,
           drafted: set[str], budget: tuple[float, int]) -> Table:
    with profile.time_budget(*budget) as spent:
        prof = profile.profile(conn, rel, threshold)
        keys = _key_columns(rel)
        columns = [_column(conn, rel, c, prof, keys, postgis) for c in rel.columns]
        temporal = [c for c in rel.columns if profile.is_temporal(c)]
        step, coverage = _time(conn, rel, temporal, prof)
    title, theme = title_and_theme(rel.comment)
    return Table.model_validate({
        "name": rel.name,
        **({} if rel.schema == home else {"schema": rel.schema}),
        "kind": rel.kind,
        "title": TODO,
        "theme": TODO,
        "from_database": {k: v for k, v in (("title", title), ("theme", theme)) if v != TODO},
        "spatial_granularity": _spatial_granularity(columns),
        "temporal_granularity": step,
        "temporal_coverage": coverage,
        "source": TODO,
        "expected_rows": prof.rows if prof.rows > 0 else TODO,
        "rows_estimated": prof.estimated,
        "primary_key": rel.primary_key,
        "unique": rel.unique,
        "foreign_keys": [
            ForeignKey(columns=fk.columns, ref_table=fk.ref_table, ref_columns=fk.ref_columns,
                       ref_schema=None if fk.ref_schema == rel.schema else fk.ref_schema)
            for fk in rel.foreign_keys if fk.ref_table in drafted],
        "columns": columns,
        "labels": propose_labels(rel.name, rel.primary_key, _code_columns(rel),
                                 {c.name: c.type for c in rel.columns}),
        "notes": [spent.note] if spent.stopped else [],
    })


THEME_CHARS = 100
"""A table comment longer than this, or of several sentences, is a theme, not a title."""


def title_and_theme(comment: str | None) -> tuple[str, str]:
    """Where a table comment would go: the title if short, else the theme; the other is TODO.

    A comment of one sentence of at most :data:`THEME_CHARS` characters names the table (its
    title, final stop dropped); a longer one describes it (its theme, kept whole); a person
    writes the other. No comment: both TODO. The draft keeps the result in ``from_database``
    for a person to confirm, never in the table's own title and theme.

    >>> title_and_theme("Census tracts of New York.")
    ('Census tracts of New York', 'TODO')
    >>> title_and_theme("US states and DC. Boundaries from TIGER, generalised to 1:500k.")
    ('TODO', 'US states and DC. Boundaries from TIGER, generalised to 1:500k.')
    >>> title_and_theme(None), title_and_theme("Roads")
    (('TODO', 'TODO'), ('Roads', 'TODO'))
    """
    text = (comment or "").strip()
    if not text:
        return TODO, TODO
    sentences = re.split(r"(?<=[.!?])\s", text)
    if len(sentences) == 1 and len(text) <= THEME_CHARS:
        return text.rstrip(".!? ") or TODO, TODO
    return TODO, (text if len(text) >= 20 else TODO)


def _key_columns(rel: Relation) -> set[str]:
    keys = set(rel.primary_key) | {c for u in rel.unique for c in u}
    keys |= {c for fk in rel.foreign_keys for c in fk.columns}
    return keys | {c.name for c in rel.columns if attribute_joins.KEY_NAME.match(c.name)}


def _code_columns(rel: Relation) -> list[str]:
    """Columns that identify this table's rows: one-column keys the database declares.

    Not a column that merely looks like a code (``state_abbr`` in a table of airports
    names the airport's state; ``county_fips`` in one of roads refers to a county).
    """
    singles = {key[0] for key in [rel.primary_key, *rel.unique] if len(key) == 1}
    return [c.name for c in rel.columns if c.name in singles]


def _column(conn: psycopg.Connection, rel: Relation, col: LiveColumn, prof: profile.Profile,
            keys: set[str], postgis: str) -> Column:
    comment = (col.comment or "").strip()
    data: dict[str, Any] = {
        "name": col.name, "type": col.type, "description": TODO,
        "from_database": {"description": comment} if len(comment) >= 10 else {},
        "nullable": not col.not_null,
        "abbreviation_candidates": abbreviations.candidates(col.name),
    }
    if spatial_kind(col.type) is SpatialKind.RASTER:
        facts = introspect.raster_facts(conn, rel.schema, rel.name, col.name)
        if facts is not None:
            data["raster"] = RasterInfo(
                srid=facts.srid, pixel_size=facts.pixel_size, width=facts.width,
                height=facts.height, tile_size=facts.tile_size, extent=facts.extent,
                bands=[RasterBand(index=i, name=TODO, description=TODO, unit=TODO,
                                  pixel_type=kind, nodata=value) for i, (kind, value)
                       in enumerate(zip(facts.pixel_types, facts.nodata, strict=True), 1)])
        return Column.model_validate(data)
    spatial = rel.spatial.get(col.name)
    if spatial is not None:
        geo = profile.geometry_profile(conn, rel, col.name, spatial, prof, postgis)
        crs = introspect.crs_info(conn, geo.srid)
        data["unit"] = f"{crs.units} ({crs.authority})" if crs.units else TODO
        crs_todo, crs_note = _undeclared_crs(geo.srid, geo.extent)
        data["geo"] = GeoInfo(geometry_type=geo.geometry_type, srid=geo.srid, crs_name=crs.name,
                              crs_units=crs.units, extent=geo.extent, valid_share=geo.valid_share,
                              sampled=geo.sampled, crs=crs_todo, crs_note=crs_note)
        return Column.model_validate(data)
    if profile.is_ranged(col):
        data["range"] = profile.value_range(conn, rel, col, prof)
        data["range_sampled"] = prof.sampled
        if profile.is_temporal(col) and col.category == "N":
            data["unit"] = "year"
            years = profile.distinct_numbers(conn, rel, col, prof, profile.MAX_VALUES + 1)
            if 0 < len(years) <= profile.MAX_VALUES:
                data["values"] = [int(y) for y in years]
        elif col.category == "N" and col.name not in keys:
            data["unit"] = TODO
    elif col.category == "S":
        data["values"] = profile.distinct_values(conn, rel, col, prof)
    return Column.model_validate(data)


def _undeclared_crs(srid: int, extent: tuple[float, float, float, float] | None
                    ) -> tuple[Todo | None, str | None]:
    """``TODO`` and what the coordinates suggest, for an SRID 0 column; else ``(None, None)``.

    The observation is a hint for the person filling in the draft, never a decision.

    >>> _undeclared_crs(0, (-79.0, 35.5, -78.2, 36.1))[1][:58]
    'SRID 0: coordinates x -79 to -78.2, y 35.5 to 36.1 lie wit'
    >>> _undeclared_crs(4326, None)
    (None, None)
    """
    if srid != 0:
        return None, None
    if extent is None:
        return TODO, "SRID 0 and no coordinates sampled"
    minx, miny, maxx, maxy = extent
    lonlat = max(abs(minx), abs(maxx)) <= 180 and max(abs(miny), abs(maxy)) <= 90
    where = f"SRID 0: coordinates x {minx:.6g} to {maxx:.6g}, y {miny:.6g} to {maxy:.6g}"
    return TODO, where + (
        " lie within longitude/latitude range (EPSG:4326 is possible, not certain)" if lonlat
        else " are not longitude/latitude (a projected CRS, or planar)") + (
        "; set geo.crs: EPSG:<code>, or planar with geo.units metre|foot|unknown")


def _spatial_granularity(columns: list[Column]) -> str:
    geo = next((c.geo for c in columns if c.geo is not None), None)
    if geo is not None and "POINT" in geo.geometry_type:
        return "point"
    if geo is not None and "LINE" in geo.geometry_type:
        return "line"
    return TODO  # polygons (state? parcel? grid cell?) and attribute tables: a person knows


def _time(conn: psycopg.Connection, rel: Relation, temporal: list[LiveColumn],
          prof: profile.Profile) -> tuple[str, TemporalCoverage | None]:
    if not temporal:
        return TemporalGranularity.STATIC.value, None
    first = temporal[0]
    bounds = profile.value_range(conn, rel, first, prof)
    coverage = None
    if bounds is not None:
        start, end = (str(v)[:10] for v in bounds)
        coverage = TemporalCoverage(start=start, end=end)
    values = profile.distinct_numbers(conn, rel, first, prof)
    return _step(values), coverage


def _step(values: list[Any]) -> str:
    """The time step of sorted distinct years or dates: annual, decadal, monthly, daily or TODO."""
    if len(values) < 2:
        return TODO
    if all(isinstance(v, int) for v in values):
        gap = math.gcd(*(b - a for a, b in itertools.pairwise(values)))
        return {1: "annual", 10: "decadal"}.get(gap, TODO)
    days = [v.date() if isinstance(v, dt.datetime) else v for v in values]
    if not all(isinstance(d, dt.date) for d in days):
        return TODO
    if all(d.day == 1 and d.month == 1 for d in days):
        return "annual"
    if all(d.day == 1 for d in days):
        return "monthly"
    gaps = {(b - a).days for a, b in itertools.pairwise(days)}
    return "daily" if min(gaps) == 1 else TODO


class _Dumper(yaml.SafeDumper):
    """Block style, but short lists of scalars in flow style (``primary_key: [a, b]``)."""


def _represent_list(dumper: yaml.SafeDumper, data: list[Any]) -> yaml.Node:
    flow = len(data) <= 12 and all(isinstance(v, str | int | float) for v in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow)


_Dumper.add_representer(list, _represent_list)


def to_yaml(catalog: Catalog, header: str = "") -> str:
    """The catalog as YAML in the shape of ``catalog.yaml`` (defaults left out)."""
    data = catalog.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    for table in data["tables"]:
        for column in table["columns"]:
            bounds = column.get("range")
            if bounds and _INTEGER.match(column["type"]) and all(
                    isinstance(v, float) and v.is_integer() for v in bounds):
                column["range"] = [int(v) for v in bounds]
    body = yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
    return header + body


def header_text(catalog: Catalog, database: str) -> str:
    """Comment lines that open a draft: where it came from and how many TODOs it has."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (f"# Draft semantic catalog of database {database},\n"
            f"# written by `geoask catalog draft` on {stamp}.\n"
            f"# Fill in every TODO ({len(catalog.todos())} left), confirm or delete the inferred "
            "join paths,\n# then run `geoask catalog check --catalog FILE`. Extents are in each "
            "column's own CRS units.\n")


def write_atomically(path: Path, text: str, *, force: bool = False) -> None:
    """Write ``text`` to ``path`` via a temporary file in the same folder, then rename.

    Raises:
        CatalogError: ``path`` is a folder, exists and ``force`` is false, its folder does not
            exist, or it cannot be written (the OS reason is named); no partial file is left.

    """
    if path.is_dir():
        raise CatalogError(f"{path} is a folder; name the YAML file to write")
    if path.exists() and not force:
        raise CatalogError(f"{path} exists; pass --force to overwrite it")
    if not path.parent.is_dir():
        raise CatalogError(f"folder {path.parent} does not exist")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as error:
        raise CatalogError(f"cannot write in {path.parent}: {error.strerror}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        if force:
            os.replace(tmp, path)
        else:
            os.link(tmp, path)  # fails if someone created path meanwhile
            os.unlink(tmp)
    except FileExistsError:
        os.unlink(tmp)
        raise CatalogError(f"{path} exists; pass --force to overwrite it") from None
    except OSError as error:
        os.unlink(tmp)
        raise CatalogError(f"cannot write {path}: {error.strerror}") from None
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
