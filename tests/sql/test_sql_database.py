"""Against the real PostGIS: execution, classified errors, export round trip, and attacks sent
with the guard switched off - the role and the read-only transaction must stop them too."""

from __future__ import annotations

import psycopg
import pytest
import shapely
from typer.testing import CliRunner

from geoask.app.cli import app
from geoask.errors import QueryExecutionError, QueryRejectedError
from geoask.sql import GuardContext, check_sql
from geoask.sql.executor import PostgresSqlRunner

pytestmark = pytest.mark.db

POSTGIS = GuardContext(policy="postgis")


@pytest.fixture(scope="module")
def runner(reader_url: str) -> PostgresSqlRunner:
    return PostgresSqlRunner(reader_url, statement_timeout_s=2)


def _scalar(url: str, sql: str):
    with psycopg.connect(url) as connection:
        return connection.execute(sql).fetchone()[0]


def test_result_rows_types_and_geometry(runner):
    result = runner.run(check_sql("SELECT iata, geom FROM demo.airports ORDER BY iata", POSTGIS))
    assert [c.name for c in result.columns] == ["iata", "geom"]
    assert [c.is_geometry for c in result.columns] == [False, True]
    assert result.columns[1].type_name == "geometry"
    assert result.row_count > 2
    assert all(shapely.get_srid(row[1]) == 4326 for row in result.rows)


def test_a_result_past_the_row_cap_is_refused_never_cut(runner):
    with pytest.raises(QueryExecutionError) as caught:
        runner.run(check_sql("SELECT iata FROM demo.airports", GuardContext(row_cap=2)))
    assert caught.value.kind == "result_too_large"
    assert "more than 2 rows" in str(caught.value) and "bounding-box" in str(caught.value)
    exact = runner.run(check_sql("SELECT iata FROM demo.airports LIMIT 2", GuardContext(row_cap=2)))
    assert exact.row_count == 2 and exact.row_cap == 2


@pytest.mark.parametrize(
    ("sql", "kind"),
    [
        ("SELECT * FROM demo.no_such_table", "undefined_table"),
        ("SELECT no_such_column FROM demo.airports", "undefined_column"),
        ("SELECT iata + 1 FROM demo.airports", "type_mismatch"),
        ("SELECT iata FROM demo.airports WHERE iata = 1", "type_mismatch"),
        ("SELECT iata, count(*) FROM demo.airports", "grouping"),
        ("SELECT 1 / 0", "division_by_zero"),
        ("SELECT count(*) FROM generate_series(1, 1000000000)", "timeout"),
        ("SELECT * FROM geoask_meta.load_state", "permission"),
    ],
)
def test_database_errors_are_classified(runner, sql, kind):
    with pytest.raises(QueryExecutionError) as caught:
        runner.run(check_sql(sql, POSTGIS))
    assert caught.value.kind == kind
    assert caught.value.server_message and caught.value.sqlstate


def test_a_timeout_names_the_limit_and_its_setting(runner):
    with pytest.raises(QueryExecutionError) as caught:
        runner.run(check_sql("SELECT count(*) FROM generate_series(1, 1000000000)", POSTGIS))
    assert "the statement timeout is 2 s (GEOASK_STATEMENT_TIMEOUT_S)" in str(caught.value)
    assert caught.value.as_dict()["hint"].startswith("the statement timeout is 2 s")


@pytest.mark.parametrize(
    "sql", ["SELECT 'a' 'b'", "SELECT iata FROM demo.airports LIMIT 5, 10",
            "SELECT * FROM (SELECT 1)"],
)
def test_syntax_errors_are_refused_by_postgres_grammar_before_running(sql):
    with pytest.raises(QueryRejectedError) as caught:
        check_sql(sql, POSTGIS)
    assert caught.value.rule == "parses" and "PostgreSQL" in caught.value.description


def test_error_position_refers_to_the_submitted_text(runner):
    with pytest.raises(QueryExecutionError) as caught:
        runner.run(check_sql("SELECT iata,\n  no_such_column FROM demo.airports", POSTGIS))
    assert (caught.value.line, caught.value.col) == (2, 3)
    assert caught.value.position == len("SELECT iata,\n  ") + 1


def test_cli_run_exports_geojson_that_geopandas_reads_back_exactly(reader_url, tmp_path,
                                                                     monkeypatch):
    import geopandas
    import numpy as np

    for module in ("geoask.sql.executor", "geoask.sql.catalog_functions"):  # where it is used
        monkeypatch.setattr(f"{module}.reader_url", lambda settings: reader_url)
    sql = "SELECT state_fips, state_name, geom FROM demo.us_states ORDER BY state_fips LIMIT 5"
    result = CliRunner().invoke(app, ["sql", "run", "--out", str(tmp_path), "-"], input=sql)
    assert result.exit_code == 0, result.output
    assert "MultiPolygon" in result.output

    frame = geopandas.read_file(tmp_path / "result.geojson")
    with psycopg.connect(reader_url) as connection:
        expected = connection.execute(
            "SELECT state_fips, state_name, ST_AsBinary(geom) FROM demo.us_states "
            "ORDER BY state_fips LIMIT 5"
        ).fetchall()
    assert f"rows: {len(expected)} rows" in result.output
    assert frame["state_fips"].tolist() == [row[0] for row in expected]
    assert frame["state_name"].tolist() == [row[1] for row in expected]
    for geometry, row in zip(frame.geometry, expected, strict=True):
        if row[2] is None:
            assert geometry is None
            continue
        reference = shapely.from_wkb(bytes(row[2]))
        assert geometry.geom_type == reference.geom_type
        assert np.array_equal(shapely.get_coordinates(geometry), shapely.get_coordinates(reference))
    assert (tmp_path / "result.preview.json").exists()


def test_cli_run_reports_a_classified_database_error(reader_url, tmp_path, monkeypatch):
    for module in ("geoask.sql.executor", "geoask.sql.catalog_functions"):  # where it is used
        monkeypatch.setattr(f"{module}.reader_url", lambda settings: reader_url)
    result = CliRunner().invoke(
        app, ["sql", "run", "--out", str(tmp_path), "-"], input="SELECT nope FROM demo.airports"
    )
    assert isinstance(result.exception, QueryExecutionError)
    assert result.exception.kind == "undefined_column"
    assert list(tmp_path.iterdir()) == []


# Sent WITHOUT the guard: each must still fail at the database.
ATTACKS = [
    ("DELETE FROM demo.airports", "permission"),
    ("UPDATE demo.us_states SET state_name = 'x'", "permission"),
    ("INSERT INTO demo.airports (iata) VALUES ('ZZZ')", "permission"),
    ("TRUNCATE demo.airports", "permission"),
    ("DROP TABLE demo.airports", "permission"),
    ("CREATE TABLE demo.stolen AS SELECT * FROM demo.airports", "permission"),
    ("CREATE TEMP TABLE stolen AS SELECT 1", "permission"),
    ("SELECT * INTO stolen FROM demo.airports", "permission"),
    ("WITH d AS (DELETE FROM demo.airports RETURNING *) SELECT count(*) FROM d", "permission"),
    ("SELECT * FROM demo.airports FOR UPDATE", "permission"),
    ("SELECT 1; DELETE FROM demo.airports", "syntax"),
    ("SELECT 1; COMMIT; DELETE FROM demo.airports", "syntax"),
    ("COMMIT; SET default_transaction_read_only = off; DELETE FROM demo.airports", "syntax"),
    ("DO $$ BEGIN DELETE FROM demo.airports; END $$", "permission"),
    ("SELECT pg_read_file('/etc/passwd')", "permission"),
    ("SELECT lo_import('/etc/passwd')", "permission"),
    ("COPY demo.airports TO PROGRAM 'id'", "permission"),
    ("COPY demo.airports FROM '/etc/passwd'", "permission"),
    ("SET ROLE postgres", "permission"),
    ("ALTER ROLE geoask_reader SET default_transaction_read_only = off", "permission"),
    ("SELECT pg_sleep(10)", "timeout"),
    ("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid()",
     "permission"),
]


@pytest.mark.parametrize(("sql", "kind"), ATTACKS, ids=[sql[:50] for sql, _ in ATTACKS])
def test_attack_without_guard_is_stopped_by_the_database(runner, reader_url, sql, kind):
    before = _scalar(reader_url, "SELECT count(*) FROM demo.airports")
    with pytest.raises(QueryExecutionError) as caught:
        runner.run_text(sql, row_cap=10)
    assert caught.value.kind == kind, caught.value
    assert _scalar(reader_url, "SELECT count(*) FROM demo.airports") == before
    assert _scalar(reader_url, "SELECT to_regclass('demo.stolen')") is None


def test_session_changes_without_guard_vanish_with_the_connection(runner):
    runner.run_text("SELECT set_config('statement_timeout', '0', false)", row_cap=1)
    after = runner.run_text("SELECT current_setting('statement_timeout')", row_cap=1)
    assert after.rows == [("2s",)]
    runner.run_text("SELECT pg_advisory_lock(424242)", row_cap=1)
    relocked = runner.run_text("SELECT pg_try_advisory_lock(424242)", row_cap=1)
    assert relocked.rows == [(True,)]


def _allowed_cases():
    from pathlib import Path

    from geoask.sql.casefile import load_case_folder

    folder = Path(__file__).resolve().parents[1] / "fixtures" / "sql" / "allowed"
    return load_case_folder(folder)


@pytest.mark.parametrize("case", _allowed_cases(), ids=lambda case: f"{case.source} {case.title}")
def test_every_allowed_fixture_runs_on_the_demo_database(reader_url, case):
    # The most permissive policy the file names; a small cap keeps heavy queries short.
    context = GuardContext(policy=case.policies[-1], contract=case.contract, row_cap=5)
    runner = PostgresSqlRunner(reader_url, statement_timeout_s=20)
    try:
        result = runner.run(check_sql(case.sql, context))
    except QueryExecutionError as error:  # it ran and returned more rows than the cap
        assert error.kind == "result_too_large", error
    else:
        assert result.row_count <= 5


def test_an_empty_result_keeps_its_columns_and_exports_an_empty_feature_collection(
        runner, tmp_path):
    """Found by the attack pass: no row used to lose every column (and the GeoJSON file)."""
    import json

    from geoask.sql.step import run_statement

    run = run_statement("SELECT iata, geom FROM demo.airports WHERE false", POSTGIS, runner,
                        str(tmp_path), name="none")
    assert [c.name for c in run.result.columns] == ["iata", "geom"]
    assert run.result.columns[1].is_geometry and run.result.row_count == 0
    assert run.exported.data_path.endswith("none.geojson")
    collection = json.loads((tmp_path / "none.geojson").read_text())
    assert collection["type"] == "FeatureCollection" and collection["features"] == []
