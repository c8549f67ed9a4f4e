"""The semantic catalog agrees with the live database: tables, columns, types, keys, comments,
join paths, row counts and value ranges.

`geoask catalog check` (:func:`~geoask.catalog.check.check_catalog`) covers all of it except the
loader's ``COMMENT ON`` texts and the spatial join paths; the explicit tests below stay as a
second, independent statement of the same facts."""

from __future__ import annotations

import psycopg
import pytest
from psycopg import sql

from geoask.catalog.check import check_catalog, pg_type_name
from geoask.catalog.ddl import column_comment, table_comment
from geoask.catalog.model import Catalog, load_catalog
from geoask.db.cluster import data_schema

pytestmark = pytest.mark.db

@pytest.fixture(scope="module")
def catalog(database) -> Catalog:
    return load_catalog(database.settings.catalog_path)


@pytest.fixture(scope="module")
def conn(database):
    with psycopg.connect(database.reader_url, autocommit=True) as connection:
        yield connection


def test_catalog_check_is_clean(catalog, database):
    assert catalog.todos() == []
    assert check_catalog(database.reader_url, catalog) == []


def test_same_tables(catalog, conn, database):
    live = {r[0] for r in conn.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
        (data_schema(database.settings),))}
    assert live == {t.name for t in catalog.tables}


def test_columns_types_nullability_and_comments(catalog, conn, database):
    schema = data_schema(database.settings)
    for table in catalog.tables:
        regclass = f"{schema}.{table.name}"
        rows = conn.execute(
            "SELECT attname, format_type(atttypid, atttypmod), attnotnull, "
            "col_description(attrelid, attnum) FROM pg_attribute "
            "WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum",
            (regclass,)).fetchall()
        expected = [(c.name, pg_type_name(c.type), not c.nullable, column_comment(c))
                    for c in table.columns]
        assert rows == expected, table.name
        (comment,) = conn.execute("SELECT obj_description(%s::regclass, 'pg_class')",
                                  (regclass,)).fetchone()
        assert comment == table_comment(table)


def test_keys(catalog, conn, database):
    schema = data_schema(database.settings)
    for table in catalog.tables:
        cons = conn.execute(
            "SELECT contype, array(SELECT attname FROM unnest(conkey) WITH ORDINALITY k(n, i) "
            "JOIN pg_attribute a ON a.attrelid = conrelid AND a.attnum = k.n ORDER BY i), "
            "confrelid::regclass::text FROM pg_constraint WHERE conrelid = %s::regclass",
            (f"{schema}.{table.name}",)).fetchall()
        primary = [c[1] for c in cons if c[0] == "p"]
        assert primary == [table.primary_key], table.name
        foreign = sorted((c[1], c[2].split(".")[-1]) for c in cons if c[0] == "f")
        assert foreign == sorted((fk.columns, fk.ref_table) for fk in table.foreign_keys)


def test_row_counts_and_ranges(catalog, conn, database):
    schema = sql.Identifier(data_schema(database.settings))
    for table in catalog.tables:
        target = sql.SQL("{}.{}").format(schema, sql.Identifier(table.name))
        (rows,) = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(target)).fetchone()
        assert rows == table.expected_rows, table.name
        for column in table.columns:
            if column.range is None or not isinstance(column.range[0], int | float):
                continue
            low, high = conn.execute(sql.SQL("SELECT min({c}), max({c}) FROM {t}").format(
                c=sql.Identifier(column.name), t=target)).fetchone()
            assert column.range[0] <= low <= high <= column.range[1], (table.name, column.name)


def test_join_paths_are_valid(catalog, conn, database):
    schema = sql.Identifier(data_schema(database.settings))
    for path in catalog.join_paths:
        left_table, _, left_col = path.left.partition(".")
        right_table, _, right_col = path.right.partition(".")
        left = sql.SQL("{}.{}").format(schema, sql.Identifier(left_table))
        right = sql.SQL("{}.{}").format(schema, sql.Identifier(right_table))
        if path.kind == "spatial":
            lg = catalog.table(left_table).geometry_column
            rg = catalog.table(right_table).geometry_column
            assert lg is not None and rg is not None, path
            # "valid" for a spatial path: some features lie within ~1 km (0.01°) of each other
            condition = sql.SQL("ST_DWithin(l.{}, r.{}, 0.01)").format(
                sql.Identifier(lg.name), sql.Identifier(rg.name))
        else:
            condition = sql.SQL("l.{} = r.{}").format(sql.Identifier(left_col),
                                                     sql.Identifier(right_col))
        query = sql.SQL("SELECT EXISTS (SELECT 1 FROM {} l JOIN {} r ON {})").format(
            left, right, condition)
        assert conn.execute(query).fetchone() == (True,), f"{path.left} ~ {path.right}"
