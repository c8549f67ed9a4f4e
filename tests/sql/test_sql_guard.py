"""check_sql: what text runs (wrapping, LIMIT, identifier quoting), structured failures, the
fixture-file format and the `geoask sql check` command."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from geoask.app.cli import app
from geoask.errors import GeoaskError, QueryRejectedError
from geoask.sql import GuardContext, check_sql, find_violation
from geoask.sql.casefile import load_cases

CAP = GuardContext(row_cap=100)


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT a FROM t", "SELECT * FROM (\nSELECT a FROM t\n) AS q LIMIT 101"),
        ("SELECT a FROM t;", "SELECT * FROM (\nSELECT a FROM t\n) AS q LIMIT 101"),
        ("SELECT a FROM t -- note", "SELECT * FROM (\nSELECT a FROM t -- note\n) AS q LIMIT 101"),
        ("SELECT a FROM t LIMIT 5", "SELECT a FROM t LIMIT 5"),
        ("SELECT a FROM t LIMIT 5;  ", "SELECT a FROM t LIMIT 5"),
        ("SELECT a FROM t LIMIT 100", "SELECT a FROM t LIMIT 100"),
        ("SELECT a FROM t LIMIT 500",
         "SELECT * FROM (\nSELECT a FROM t LIMIT 500\n) AS q LIMIT 101"),
        ("SELECT a FROM t LIMIT ALL",
         "SELECT * FROM (\nSELECT a FROM t LIMIT ALL\n) AS q LIMIT 101"),
        ("SELECT a FROM t FETCH FIRST 3 ROWS ONLY", "SELECT a FROM t FETCH FIRST 3 ROWS ONLY"),
        ("SELECT a FROM t OFFSET 5", "SELECT * FROM (\nSELECT a FROM t OFFSET 5\n) AS q LIMIT 101"),
        ("SELECT * FROM (SELECT a FROM t LIMIT 5) s",
         "SELECT * FROM (\nSELECT * FROM (SELECT a FROM t LIMIT 5) s\n) AS q LIMIT 101"),
        ("SELECT 1 UNION SELECT 2 LIMIT 1", "SELECT 1 UNION SELECT 2 LIMIT 1"),
    ],
)
def test_text_that_runs(sql, expected):
    assert check_sql(sql, CAP).sql == expected


def test_wrapper_is_reported_and_body_offset_points_at_the_submitted_text():
    checked = check_sql("SELECT a FROM t", CAP)
    assert checked.row_limit_added and checked.row_cap == 100
    assert checked.sql[checked.body_offset :].startswith("SELECT a FROM t")
    unwrapped = check_sql("SELECT a FROM t LIMIT 1", CAP)
    assert not unwrapped.row_limit_added and unwrapped.body_offset == 0


def test_postgis_text_is_kept_verbatim_not_regenerated():
    sql = (
        "SELECT iata FROM demo.airports "
        "ORDER BY geom <-> 'SRID=4326;POINT(0 0)'::geometry LIMIT 3"
    )
    assert check_sql(sql, GuardContext(policy="postgis")).sql == sql


def test_case_sensitive_catalog_names_are_quoted():
    context = GuardContext(case_sensitive_names=frozenset({"MixedCase", "PopTotal", "lower"}))
    checked = check_sql("SELECT poptotal, t.POPTOTAL FROM demo.mixedcase t LIMIT 1", context)
    assert checked.sql == 'SELECT "PopTotal", t."PopTotal" FROM demo."MixedCase" t LIMIT 1'
    assert checked.quoted_identifiers == ("PopTotal", "PopTotal", "MixedCase")


def test_quoting_leaves_quoted_ambiguous_and_function_names_alone():
    context = GuardContext(case_sensitive_names=frozenset({"Name", "NAME", "Count", "PopTotal"}))
    sql = 'SELECT name, count(*), "poptotal" FROM t GROUP BY 1 LIMIT 1'
    assert check_sql(sql, context).sql == sql


def test_rejection_is_a_structured_error():
    with pytest.raises(QueryRejectedError) as caught:
        check_sql("SELECT 1,\n  pg_read_file('/etc/passwd')", CAP)
    error = caught.value
    assert error.as_dict() == {
        "rule": "allowed_functions",
        "description": error.description,
        "fragment": "pg_read_file('/etc/passwd')",
        "line": 2,
        "col": 3,
    }
    assert error.exit_code == 2
    assert "allowed_functions" in str(error) and "pg_read_file" in str(error)


@pytest.mark.parametrize(
    ("sql", "fragment"),
    [("", ""), ("-- nothing", ""), ("SELECT 'unterminated", ""), ("SELECT 1 ) x", ""),
     ("SELECT (((" + "(" * 40 + "1" + ")" * 43, ""), ("SELECT " + "x, " * 7000 + "1", "")],
)
def test_parse_failures_name_the_parses_rule(sql, fragment):
    violation = find_violation(sql, CAP)
    assert violation is not None and violation.rule == "parses"
    if fragment:
        assert violation.fragment == fragment


def test_case_file_format(tmp_path):
    path = tmp_path / "cases.sql"
    path.write_text(
        "# notes\n@policy separated postgis\n@contract topk\n"
        "### first => topk_contract\nSELECT 1\nFROM t\n\n### second\nSELECT 2\n"
    )
    first, second = load_cases(path)
    assert (first.title, first.sql) == ("first", "SELECT 1\nFROM t")
    assert first.expected_rule == "topk_contract"
    assert first.policies == ("separated", "postgis") and first.contract == "topk"
    assert (second.title, second.sql, second.expected_rule) == ("second", "SELECT 2", None)
    assert second.source == "cases.sql:8"


def test_case_file_rejects_an_empty_case(tmp_path):
    path = tmp_path / "bad.sql"
    path.write_text("### empty\n\n### next\nSELECT 1\n")
    with pytest.raises(GeoaskError, match="has no SQL"):
        load_cases(path)


def test_cli_check_prints_the_sql_that_would_run(tmp_path):
    path = tmp_path / "q.sql"
    path.write_text("SELECT state_name FROM demo.us_states;\n")
    result = CliRunner().invoke(app, ["sql", "check", str(path)])
    assert result.exit_code == 0, result.output
    assert result.output.strip().endswith(") AS q LIMIT 100001")
    assert "SELECT state_name FROM demo.us_states" in result.output


def test_cli_check_reads_stdin_and_exits_2_naming_the_rule():
    result = CliRunner().invoke(app, ["sql", "check", "-"], input="SELECT ST_Area(geom) FROM t")
    assert result.exit_code == 2
    assert "rejected by rule: spatial_policy" in result.output
    assert "fragment: ST_Area(geom)" in result.output


def test_cli_check_refuses_stdin_that_is_not_utf8():
    result = CliRunner().invoke(app, ["sql", "check", "-"], input=b"SELECT 1 AS \xff")
    assert result.exit_code != 0
    assert isinstance(result.exception, GeoaskError)
    assert "cannot read SQL from standard input" in str(result.exception)


@pytest.mark.parametrize("name", ["../../tmp/escape", "a/b", "", ".hidden", "-x", "a\n"])
def test_cli_run_name_must_be_a_plain_file_name(tmp_path, name):
    result = CliRunner().invoke(app, ["sql", "run", "--out", str(tmp_path), "--name", name, "-"],
                                input="SELECT 1 AS n")
    assert result.exit_code == 2, result.output  # a usage error, before anything runs
    assert "not a plain file name" in result.output
    assert list(tmp_path.iterdir()) == []


def test_cli_check_policy_and_contract_options():
    sql = "SELECT ST_Area(geom) FROM t"
    allowed = CliRunner().invoke(app, ["sql", "check", "--policy", "postgis"], input=sql)
    assert allowed.exit_code == 0
    result = CliRunner().invoke(
        app, ["sql", "check", "--policy", "postgis", "--contract", "topk"], input=sql
    )
    assert result.exit_code == 2 and "topk_contract" in result.output


@pytest.mark.parametrize("where", ["--policy", "GEOASK_SQL_POLICY"])
def test_an_unknown_policy_is_one_plain_usage_line_naming_the_choices(where, monkeypatch):
    if where == "--policy":
        result = CliRunner().invoke(app, ["sql", "check", "--policy", "weird"], input="SELECT 1")
    else:
        monkeypatch.setenv(where, "weird")
        result = CliRunner().invoke(app, ["sql", "check"], input="SELECT 1")
    text = " ".join(result.output.replace("│", " ").split())
    assert result.exit_code == 2
    assert "'weird' is no spatial policy; use one of separated, postgis" in text
    assert "Value error" not in text and "Input should be" not in text


def test_cli_check_missing_file_is_a_clear_error(tmp_path):
    result = CliRunner().invoke(app, ["sql", "check", str(tmp_path / "nope.sql")])
    assert isinstance(result.exception, GeoaskError)
    assert "does not exist" in str(result.exception)


def test_catalog_names_feed_quoting_and_geometry_columns():
    from geoask.catalog.model import Catalog
    from geoask.sql.context import catalog_names

    def table(name, columns, schema=None):
        return {"name": name, "schema": schema, "title": name, "theme": "TODO",
                "spatial_granularity": "parcel", "temporal_granularity": "static",
                "source": "test", "expected_rows": 1, "primary_key": [],
                "columns": [{"name": c, "type": t, "description": "TODO"} for c, t in columns]}

    catalog = Catalog.model_validate({"version": 1, "schema": "Demo", "description": "t",
                                      "tables": [
        table("Parcels", [("parcel_id", "integer"), ("AreaHa", "numeric"),
                          ("Shape", "geometry(Polygon,2263)"), ("site", "geography(Point,4326)")]),
        table("zones", [("zone_id", "integer")], schema="Planning"),
    ]})
    case_sensitive, geometry = catalog_names(catalog)
    assert case_sensitive == {"Demo", "Planning", "Parcels", "AreaHa", "Shape"}
    assert geometry == {"shape", "site"}
    checked = check_sql("SELECT zone_id FROM Planning.zones",
                        GuardContext(case_sensitive_names=case_sensitive))
    assert '"Planning".zones' in checked.sql


def test_cli_run_unusable_out_fails_before_the_query_runs(monkeypatch):
    from geoask.errors import ArtifactWriteError
    from geoask.sql.executor import PostgresSqlRunner

    def never(*args, **kwargs):
        raise AssertionError("the query ran although --out is unusable")

    monkeypatch.setattr(PostgresSqlRunner, "from_settings", classmethod(never))
    result = CliRunner().invoke(app, ["sql", "run", "--out", "weird://x", "-"],
                                input="SELECT 1 AS n")
    assert isinstance(result.exception, ArtifactWriteError)
    assert "not a storage location" in str(result.exception)


def test_cli_check_ignores_a_leading_byte_order_mark(tmp_path):
    path = tmp_path / "bom.sql"
    path.write_bytes("\ufeffSELECT 1 AS n".encode())
    result = CliRunner().invoke(app, ["sql", "check", str(path)])
    assert result.exit_code == 0, result.output
    assert "SELECT 1 AS n" in result.output


def test_parse_failure_message_names_no_sqlglot_class():
    # sqlglot cannot parse this array type; PostgreSQL's grammar can, and it only reads
    assert find_violation("SELECT '{}'::int[][1][1]", CAP) is None
    violation = find_violation("SELECT '{}'::int[][1][1] FROM", CAP)
    assert violation is not None and violation.rule == "parses"
    assert "<class" not in violation.description and "sqlglot" not in violation.description
    assert "syntax error" in violation.description
