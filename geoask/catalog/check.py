"""``geoask catalog check``: whether the live database still matches a catalog.

Compares, in one read-only transaction: every table (kind, row count unless estimated, primary
and foreign keys) and column (exists, type as ``format_type`` spells it, SRID and geometry type,
nullability, stated range and values), tables and columns the catalog lacks, and each join
path (columns exist, comparable types, at least one matching row; for a spatial path with a
``predicate``, some of a bounded sample of left rows still match, see
:func:`geoask.catalog.spatial_joins.match_share`). The TODOs of the catalog
(:meth:`~geoask.catalog.model.Catalog.todos`) are listed last. Each problem is one line,
``table.column: problem`` (``table: ...`` for a table, ``left ~ right: ...`` for a join),
every name and database value in it quoted when it holds a control character
(:func:`~geoask.base.result_view.quoted_name`), so one problem never spans two lines. A range
the draft took from statistics or a sample (``range_sampled``) is approximate: the true range
of the data is not reported as a difference from it.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import psycopg
from psycopg import sql

from geoask.base.result_view import quoted_name as q
from geoask.catalog import introspect, profile, spatial_joins
from geoask.catalog.introspect import LiveColumn, Relation
from geoask.catalog.model import TODO, Catalog, Column, JoinPath, Table
from geoask.catalog.review import path_label
from geoask.catalog.spatial import spatial_modifiers

SRID_0_HINT = ("; for an SRID 0 column keep the type's SRID 0 and declare the CRS as geo.crs "
               "(EPSG:<code>, or planar with geo.units)")

_PG_NAMES = [
    (re.compile(r"^char\((\d+)\)$", re.I), r"character(\1)"),
    (re.compile(r"^varchar\((\d+)\)$", re.I), r"character varying(\1)"),
    (re.compile(r"^time$", re.I), "time without time zone"),
    (re.compile(r"^timestamp$", re.I), "timestamp without time zone"),
    (re.compile(r"^timestamptz$", re.I), "timestamp with time zone"),
    (re.compile(r"^(int|int4)$", re.I), "integer"),
    (re.compile(r"^int8$", re.I), "bigint"),
    (re.compile(r"^int2$", re.I), "smallint"),
    (re.compile(r"^(float8|float)$", re.I), "double precision"),
    (re.compile(r"^float4$", re.I), "real"),
    (re.compile(r"^bool$", re.I), "boolean"),
    (re.compile(r"^numeric\((\d+),\s*(\d+)\)$", re.I), r"numeric(\1,\2)"),
]


def pg_type_name(catalog_type: str) -> str:
    """A catalog column type as PostgreSQL's ``format_type()`` spells it.

    >>> pg_type_name("char(2)"), pg_type_name("varchar(40)"), pg_type_name("integer")
    ('character(2)', 'character varying(40)', 'integer')
    """
    text = catalog_type.strip()
    for pattern, replacement in _PG_NAMES:
        if pattern.match(text):
            return pattern.sub(replacement, text)
    return text


def check_catalog(url: str, catalog: Catalog, *, timeout_s: int = 30,
                  todos: bool = True) -> list[str]:
    """Problems between ``catalog`` and the database at ``url``, one line each ([] = clean).

    Ranges are checked against exact ``min``/``max`` (each query bounded by ``timeout_s``;
    a query that fails is reported, not raised); row counts only for tables whose
    ``expected_rows`` is not an estimate. With ``todos`` the catalog's TODO lines come last.

    Raises:
        DatabaseError: the database cannot be reached.

    """
    problems: list[str] = []
    with introspect.read_only(url, timeout_s) as conn:
        schemas = sorted({catalog.schema_of(t) for t in catalog.tables})
        live = {(r.schema, r.name): r for r in introspect.relations(conn)
                if r.schema in schemas}
        for table in catalog.tables:
            rel = live.get((catalog.schema_of(table), table.name))
            if rel is None:
                problems.append(f"{q(table.name)}: no table or view in schema "
                                f"{q(catalog.schema_of(table))} that this role can read")
                continue
            problems += _check_table(conn, table, rel)
        known = {(catalog.schema_of(t), t.name) for t in catalog.tables}
        problems += [f"{q(name)}: {rel.kind} in schema {q(schema)} is not in the catalog"
                     for (schema, name), rel in sorted(live.items())
                     if (schema, name) not in known]
        problems += _check_joins(conn, catalog, live)
    if todos:
        problems += catalog.todos()
    return problems


def _check_table(conn: psycopg.Connection, table: Table, rel: Relation) -> list[str]:
    out: list[str] = []
    name = q(table.name)
    if rel.kind != table.kind:
        out.append(f"{name}: is a {rel.kind} in the database, a {table.kind} in the catalog")
    for column in table.columns:
        live = rel.column(column.name)
        if live is None:
            out.append(f"{name}.{q(column.name)}: column missing in the database")
            continue
        out += [f"{name}.{q(column.name)}: {p}"
                for p in _check_column(conn, rel, column, live)]
    declared = {c.name for c in table.columns}
    out += [f"{name}.{q(c.name)}: column {q(c.type)} in the database is not in the catalog"
            for c in rel.columns if c.name not in declared]
    if table.primary_key != rel.primary_key:
        out.append(f"{q(table.name)}: primary key ({_names(table.primary_key)}) in the catalog, "
                   f"({_names(rel.primary_key)}) in the database")
    out += [f"{q(table.name)}: unique ({_names(key)}) in the catalog is not a UNIQUE "
            "constraint or unique index in the database"
            for key in table.unique if sorted(key) not in [sorted(k) for k in rel.unique]]
    stated = {(tuple(fk.columns), fk.ref_table, tuple(fk.ref_columns))
              for fk in table.foreign_keys}
    actual = {(tuple(fk.columns), fk.ref_table, tuple(fk.ref_columns))
              for fk in rel.foreign_keys}
    out += [f"{q(table.name)}: foreign key ({_names(c)}) -> {q(t)}({_names(r)}) is not declared "
            "in the database" for c, t, r in sorted(stated - actual)]
    out += [f"{q(table.name)}: foreign key ({_names(c)}) -> {q(t)}({_names(r)}) in the database "
            "is not in the catalog" for c, t, r in sorted(actual - stated)]
    if isinstance(table.expected_rows, int) and not table.rows_estimated:
        counted = _rows(conn, sql.SQL("SELECT count(*) FROM (SELECT 1 FROM {} LIMIT %s) s")
                        .format(rel.identifier), (max(table.expected_rows, profile.ROW_THRESHOLD)
                                                  + 1,))
        if isinstance(counted, str):
            out.append(f"{q(table.name)}: row count not checked ({counted})")
        elif counted[0][0] != table.expected_rows:
            out.append(f"{q(table.name)}: expected_rows {table.expected_rows}, the database has "
                       f"{counted[0][0]}{'+' if counted[0][0] > profile.ROW_THRESHOLD else ''}")
    return out


def _names(names: list[str] | tuple[str, ...]) -> str:
    """Column names for one line: comma-separated, each quoted where needed."""
    return ", ".join(map(q, names))


def _check_column(conn: psycopg.Connection, rel: Relation, column: Column,
                  live: LiveColumn) -> list[str]:
    out: list[str] = []
    stated = spatial_modifiers(column.type)
    actual = spatial_modifiers(live.type)
    if stated is not None and actual is not None:
        if stated[1] != actual[1]:
            out.append(f"SRID {stated[1]} in the catalog, {actual[1]} in the database"
                       + (SRID_0_HINT if actual[1] == 0 else ""))
        out += _check_declared_crs(column, [actual[1]])
        if stated[0] != actual[0]:
            out.append(f"geometry type {stated[0]} in the catalog, {actual[0]} in the database")
    elif pg_type_name(column.type).lower().replace(" ", "") != live.type.lower().replace(" ", ""):
        out.append(f"type {q(column.type)} in the catalog, {q(live.type)} in the database")
    elif column.geo is not None and live.name in rel.spatial:
        out += _check_sampled_geometry(conn, rel, column)  # unconstrained `geometry` column
    if column.nullable == live.not_null and rel.kind == "table":
        out.append("NOT NULL in the database, nullable in the catalog" if live.not_null
                   else "nullable in the database, NOT NULL in the catalog")
    if column.range is not None and not column.range_sampled and not out:
        out += _check_range(conn, rel, column, live)
    if column.values and not out:
        out += _check_values(conn, rel, column)
    return out


def _check_values(conn: psycopg.Connection, rel: Relation, column: Column) -> list[str]:
    assert column.values is not None
    col = sql.Identifier(column.name)
    rows = _rows(conn, sql.SQL("SELECT DISTINCT {c}::text FROM {t} WHERE {c} IS NOT NULL AND "
                               "NOT ({c}::text = ANY(%s)) ORDER BY 1 LIMIT 6")
                 .format(c=col, t=rel.identifier), ([str(v) for v in column.values],))
    if isinstance(rows, str):
        return [f"values not checked ({rows})"]
    if not rows:
        return []
    extra = ", ".join(repr(r[0]) for r in rows[:5]) + (", ..." if len(rows) > 5 else "")
    return [f"values {extra} in the database are not among the catalog's values"]


def _check_sampled_geometry(conn: psycopg.Connection, rel: Relation,
                            column: Column) -> list[str]:
    """SRID and type of a column without type modifiers, from its first 1,000 values."""
    assert column.geo is not None
    col = sql.Identifier(column.name)
    geom: sql.Composable = col
    if column.type.lower().startswith("geography"):
        geom = sql.SQL("{}::geometry").format(col)
    rows = _rows(conn, sql.SQL("SELECT DISTINCT ST_SRID(g), upper(GeometryType(g)) FROM "
                               "(SELECT {g} AS g FROM {t} WHERE {c} IS NOT NULL LIMIT 1000) v")
                 .format(g=geom, t=rel.identifier, c=col))
    if isinstance(rows, str):
        return [f"SRID not checked ({rows})"]
    out = []
    srids, types = sorted({r[0] for r in rows}), sorted({r[1] for r in rows})
    out += _check_declared_crs(column, srids)
    if srids and srids != [column.geo.srid]:
        out.append(f"SRID {column.geo.srid} in the catalog, {', '.join(map(str, srids))} in the "
                   "database (sampled)")
    if types and types != [column.geo.geometry_type]:
        out.append(f"geometry type {column.geo.geometry_type} in the catalog, "
                   f"{', '.join(types)} in the database (sampled)")
    return out


def _check_declared_crs(column: Column, srids: list[int]) -> list[str]:
    """A ``geo.crs`` declaration is for SRID 0 columns only; an SRID 0 column needs one."""
    declared = column.geo.crs if column.geo is not None else None
    if declared is not None and declared != TODO and srids and srids != [0]:
        return [f"geo.crs {declared} in the catalog, but the database has SRID "
                f"{', '.join(map(str, srids))}: declare a CRS only for SRID 0 columns"]
    if declared is None and srids == [0] and (spatial_modifiers(column.type) or ("", 0))[1] == 0:
        return ["SRID 0 in the database and no geo.crs in the catalog: the export refuses it "
                "until geo.crs is EPSG:<code> or planar (with geo.units metre|foot|unknown)"]
    return []


def _rows(conn: psycopg.Connection, query: sql.Composed | sql.SQL,
          params: Any = None) -> list[Any] | str:
    try:
        with conn.transaction():
            return conn.execute(query, params).fetchall()
    except psycopg.Error as error:
        return introspect.first_line(error)


def _check_range(conn: psycopg.Connection, rel: Relation, column: Column,
                 live: LiveColumn) -> list[str]:
    assert column.range is not None
    low, high = column.range
    col = sql.Identifier(column.name)
    if live.category == "S":
        rows = _rows(conn, sql.SQL("SELECT min({c}::text), max({c}::text), count(*) FILTER "
                                   "(WHERE {c}::text < %s OR {c}::text > %s) FROM {t}")
                     .format(c=col, t=rel.identifier), (str(low), str(high)))
        if isinstance(rows, str):
            return [f"range not checked ({rows})"]
        if rows[0][2]:
            return [f"range [{q(str(low))}, {q(str(high))}] in the catalog, "
                    f"[{q(str(rows[0][0]))}, {q(str(rows[0][1]))}] in the database"]
        return []
    rows = _rows(conn, sql.SQL("SELECT min({c}), max({c}) FROM {t}").format(c=col,
                                                                            t=rel.identifier))
    if isinstance(rows, str):
        return [f"range not checked ({rows})"]
    actual_low, actual_high = rows[0]
    if actual_low is None:
        return []
    if _less(actual_low, low) or _less(high, actual_high):
        return [f"range [{q(_text(low))}, {q(_text(high))}] in the catalog, "
                f"[{q(_text(actual_low))}, {q(_text(actual_high))}] in the database"]
    return []


def _text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return value.isoformat() if isinstance(value, dt.date | dt.datetime) else str(value)


def _less(a: Any, b: Any) -> bool:
    """Whether a < b for numbers, dates and ISO strings (dates are compared as dates)."""
    if isinstance(a, dt.date | dt.datetime) or isinstance(b, dt.date | dt.datetime):
        a, b = _as_time(a), _as_time(b)
        if type(a) is not type(b):
            return str(a) < str(b)
    elif isinstance(a, str) or isinstance(b, str):
        return str(a) < str(b)
    return bool(a < b)


def _as_time(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return dt.datetime.fromisoformat(value) if "T" in value or " " in value \
                else dt.date.fromisoformat(value)
        except ValueError:
            return value
    return value


def _check_joins(conn: psycopg.Connection, catalog: Catalog,
                 live: dict[tuple[str, str], Relation]) -> list[str]:
    out: list[str] = []
    for path in catalog.join_paths:
        label = path_label(path)
        ends = []
        for end in (path.left, path.right):
            name, _, col = end.partition(".")
            rel = live.get((catalog.schema_of(catalog.table(name)), name))
            ends.append((rel, col))
        if any(rel is None for rel, _ in ends):
            continue  # reported with the table
        (lrel, lcol), (rrel, rcol) = ends
        assert lrel is not None and rrel is not None
        if path.kind == "spatial":
            out += _check_spatial_join(conn, catalog, path, (lrel, lcol), (rrel, rcol))
            continue
        left, right = lrel.column(lcol), rrel.column(rcol)
        if left is None or right is None:
            missing = path.left if left is None else path.right
            out.append(f"{label}: column {q(missing)} missing in the database")
            continue
        if left.category != right.category:
            out.append(f"{label}: types {q(left.type)} and {q(right.type)} do not match")
            continue
        rows = _rows(conn, sql.SQL("SELECT EXISTS (SELECT 1 FROM {} l JOIN {} r ON l.{} = r.{})")
                     .format(lrel.identifier, rrel.identifier, sql.Identifier(lcol),
                             sql.Identifier(rcol)))
        if isinstance(rows, str):
            out.append(f"{label}: not checked ({rows})")
        elif not rows[0][0]:
            out.append(f"{label}: no row of {q(lrel.name)} matches a row of {q(rrel.name)}")
    return out


def _check_spatial_join(conn: psycopg.Connection, catalog: Catalog, path: JoinPath,
                        left: tuple[Relation, str], right: tuple[Relation, str]) -> list[str]:
    """Both ends are spatial; with a ``predicate``, some sampled left rows still match."""
    label = path_label(path)
    ends = []
    for rel, col in (left, right):
        name = col or next(iter(rel.spatial), "")
        if name not in rel.spatial:
            what = f"column {q(rel.name)}.{q(col)} is not" if col else f"{q(rel.name)} has no"
            return [f"{label}: {what} a geometry or geography column"]
        table = catalog.table(rel.name)
        geo = next((c.geo for c in table.columns if c.name == name), None)
        srid = rel.spatial[name].srid or (geo.srid if geo is not None else 0)
        rows = table.expected_rows if isinstance(table.expected_rows, int) else rel.reltuples
        ends.append(spatial_joins.GeoSide(rel, name, rel.spatial[name].kind, 0, srid,
                                          int(rows)))
    if path.predicate is None:
        return []  # a hand-written spatial path: nothing to measure
    counts = spatial_joins.match_share(conn, ends[0], ends[1], path.predicate)
    if counts is None:
        return [f"{label}: {path.predicate} not checked (the sample query failed)"]
    if counts[0] == 0:
        return [f"{label}: no sampled row of {q(left[0].name)} ({counts[1]} sampled) matches a "
                f"row of {q(right[0].name)} by {path.predicate}"]
    return []
