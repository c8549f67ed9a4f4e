import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from geoask.app.cli import app
from geoask.errors import ConfigurationError
from geoask.settings import get_settings

FIXTURE_CATALOG = Path(__file__).with_name("catalog_fixture.yaml")

runner = CliRunner()


@pytest.fixture
def cli_env(tmp_path, monkeypatch):
    monkeypatch.setenv("GEOASK_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GEOASK_CATALOG_PATH", str(FIXTURE_CATALOG))
    monkeypatch.setenv("GEOASK_DEMO_DATA_DIR", str(tmp_path / "no-data"))
    get_settings.cache_clear()
    yield tmp_path
    get_settings.cache_clear()


def test_index_builds_once_then_reports_up_to_date(cli_env):
    first = runner.invoke(app, ["catalog", "index"])
    assert first.exit_code == 0, first.output
    assert first.output.startswith("indexed 5 tables, 18 columns")
    second = runner.invoke(app, ["catalog", "index"])
    assert second.output.startswith("index up to date: 5 tables")
    forced = runner.invoke(app, ["catalog", "index", "--force"])
    assert forced.output.startswith("indexed 5 tables")
    assert (cli_env / "home" / "chroma").is_dir()


def test_search_ranks_tables_and_marks_joined_ones(cli_env):
    result = runner.invoke(app, ["catalog", "search", "monthly precipitation per grid cell"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split()[1] == "climate_grid_monthly"
    assert "climate_grid_cells" in result.output
    assert lines[-1].startswith("prompt text: ")


def test_search_json_with_filters(cli_env):
    result = runner.invoke(
        app,
        ["catalog", "search", "rainfall in September 1999", "--json", "--k", "3",
         "--temporal", "monthly", "--period", "1999-09"],
    )
    assert result.exit_code == 0, result.output
    subset = json.loads(result.output)
    names = [t["name"] for t in subset["tables"]]
    assert "state_income_annual" not in names and "city_incidents" not in names
    assert len(names) <= 3
    assert subset["intent"]["period_start"] == "1999-09"
    assert subset["token_count"] > 0
    joined = [t for t in subset["tables"] if t["joined_in"]]
    assert all(t["joined_from"] for t in joined)


def test_bad_filter_is_a_clear_error(cli_env):
    result = runner.invoke(app, ["catalog", "search", "rain", "--period", "Sept 99"])
    assert isinstance(result.exception, ConfigurationError)
    assert "YYYY" in str(result.exception)


@pytest.mark.parametrize(
    ("text", "message"),
    [("", "is empty"), ("   ", "is empty"), ("\udcff rain", "not valid UTF-8"),
     ("x" * 2001, "at most 2,000")],
)
def test_unusable_search_text_is_refused(text, message):
    from geoask.app.commands.retrieval import checked_query_text
    from geoask.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match=message):
        checked_query_text(text)
