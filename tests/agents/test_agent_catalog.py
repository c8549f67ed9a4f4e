"""The catalog agent (`catalog draft --describe`): its rules (table-driven), what a draft keeps
of its output, a scripted run with a validator retry, the OpenAI-compatible wire path against
the local fake server, and the CLI without a model."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from agent_builders import retry_feedback
from fake_chat_server import FakeChatServer, ToolCall
from pydantic_ai import models

from agents import catalog as catalog_module
from agents.catalog import CatalogDeps, catalog_agent, catalog_errors, prompt
from geoask.app.commands.catalog import _AgentDescriber
from geoask.catalog.abbreviations import candidates
from geoask.catalog.describe import (
    ColumnMeaning,
    DescriptionRefusal,
    StatedUnit,
    TableDescription,
    apply_description,
    describe_catalog,
    table_facts,
)
from geoask.catalog.model import TODO, Catalog, Column, Table
from geoask.models.recorded import load_transcripts
from geoask.models.scripted import ScriptedModel
from geoask.records.run_artifacts import RunArtifacts
from geoask.run.composition import model_provider
from geoask.settings import Settings

GEOASK = str(Path(sys.executable).with_name("geoask"))


def _column(name: str, type_: str = "double precision", description: str = TODO,
            unit: str | None = TODO) -> Column:
    return Column(name=name, type=type_, description=description, unit=unit,
                  abbreviation_candidates=candidates(name))


TABLE = Table(
    name="stations", title=TODO, theme=TODO, spatial_granularity="point",
    temporal_granularity="static", source=TODO, expected_rows=40, primary_key=["station_id"],
    columns=[
        _column("station_id", "integer", unit=None),
        _column("precipitation_mm"),
        _column("rainfall"),
        _column("depth", description="Snow depth at 7 am, in centimetres."),
        _column("medinc"),
        _column("status", "text", unit=None),
    ])
CATALOG = Catalog.model_validate({"version": 1, "schema": "byo", "description": TODO,
                                  "tables": [TABLE]})
DEPS = CatalogDeps(table=TABLE, facts=table_facts(CATALOG, TABLE, {"status": ["open"]}, 8))


def _meaning(column: str, **changes) -> ColumnMeaning:
    return ColumnMeaning.model_validate({"column": column,
                                         "meaning": f"The {column} of the station.", **changes})


def make_description(*columns: ColumnMeaning, **changes) -> TableDescription:
    """A valid description of TABLE with ``changes`` applied."""
    fields = {"table": "stations", "title": "Weather stations",
              "theme": "Weather stations with precipitation and income of their area.",
              "columns": list(columns)}
    return TableDescription.model_validate({**fields, **changes})


MM = {"stated_unit": StatedUnit(unit="mm", evidence="_mm")}
# (title, output, expected rule message fragment or None)
CASES = [
    ("plain description passes", make_description(_meaning("status")), None),
    ("unit in the name passes", make_description(_meaning("precipitation_mm", **MM)), None),
    ("unit in the comment passes", make_description(_meaning(
        "depth", stated_unit=StatedUnit(unit="centimetres", evidence="centimetres"))), None),
    ("unit not in name or comment", make_description(_meaning(
        "rainfall", stated_unit=StatedUnit(unit="mm", evidence="mm"))), "not written in its name"),
    ("evidence that is not the unit", make_description(_meaning(
        "precipitation_mm", stated_unit=StatedUnit(unit="inches", evidence="mm"))),
     "not written in its name"),
    ("guessed unit passes", make_description(_meaning("rainfall", guessed_unit="mm")), None),
    ("another table", make_description(table="gauges"), "describe table 'stations'"),
    ("unknown column", make_description(_meaning("wind")), "not in the table"),
    ("column twice", make_description(_meaning("status"), _meaning("status")),
     "described twice"),
    ("listed abbreviation passes", make_description(_meaning(
        "medinc", abbreviations={"med": "median", "inc": "income"})), None),
    ("abbreviation not a candidate", make_description(_meaning(
        "status", abbreviations={"st": "state"})), "not listed candidates"),
]


@pytest.mark.parametrize(("output", "expected"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_catalog_rules(output, expected):
    errors = catalog_errors(output, DEPS)
    if expected is None:
        assert errors == []
    else:
        assert len(errors) == 1 and expected in errors[0], errors


def test_refusal_needs_a_reason():
    assert catalog_errors(DescriptionRefusal(reason="names say nothing"), DEPS) == []
    assert catalog_errors(DescriptionRefusal(reason=" "), DEPS) != []


def test_facts_are_bounded_and_carry_comments_candidates_and_values():
    facts = table_facts(CATALOG, TABLE, {"status": [f"s{i}" for i in range(20)]}, 3)
    assert facts.startswith("Table byo.stations (table, 40 rows)")
    assert "comment: Snow depth at 7 am, in centimetres." in facts
    assert "abbreviation candidates: med=median, inc=income/incidence" in facts
    assert "values: 's0', 's1', 's2'" in facts and "'s3'" not in facts
    assert prompt(DEPS) == DEPS.facts


def test_the_draft_keeps_only_what_the_rules_allow():
    output = make_description(
        _meaning("precipitation_mm", **MM),
        _meaning("rainfall", stated_unit=StatedUnit(unit="mm", evidence="mm")),  # unstated
        _meaning("depth", guessed_unit="cm"),
        _meaning("medinc", abbreviations={"med": "median"}, guessed_unit="USD"))
    table, notes = apply_description(TABLE, output)
    assert (table.title, table.theme) == ("Weather stations", output.theme)
    assert table.column("precipitation_mm").unit == "mm"
    assert table.column("rainfall").unit == TODO  # dropped by unit_is_stated
    assert table.column("rainfall").description == "The rainfall of the station."
    assert table.column("depth").description == "Snow depth at 7 am, in centimetres."  # kept
    assert table.column("depth").unit == TODO  # a guess is never written
    medinc = table.column("medinc")
    assert medinc.abbreviations == {"med": "median"}
    assert medinc.abbreviation_candidates == {"inc": ["income", "incidence"]}
    assert medinc.unit == TODO
    assert table.column("status").description == TODO  # not described: stays TODO
    assert notes == [
        "stations.rainfall: unit 'mm' dropped: not stated in the column's name or comment",
        "stations.depth: guessed unit 'cm' left out; unit stays TODO",
        "stations.medinc: guessed unit 'USD' left out; unit stays TODO",
    ]


def _scripted_describer(scripted: ScriptedModel):
    def describe(table: Table, facts: str):
        deps = CatalogDeps(table=table, facts=facts)
        result = catalog_agent.run_sync(prompt(deps), deps=deps, model=scripted.model("catalog"))
        describe.messages = result.all_messages()
        return result.output

    return describe


def test_scripted_agent_fills_themes_and_meanings_and_a_stated_unit_rule_retries():
    unstated = make_description(_meaning("rainfall", stated_unit=StatedUnit(unit="mm",
                                                                            evidence="mm")))
    fixed = make_description(_meaning("rainfall", guessed_unit="mm"),
                             _meaning("precipitation_mm", **MM))
    scripted = ScriptedModel({"catalog": [unstated, fixed]})
    describer = _scripted_describer(scripted)
    report = describe_catalog(CATALOG, describer, {}, 8)
    table = report.catalog.table("stations")
    assert report.described == ["stations"] and report.refused == {}
    assert table.theme == fixed.theme and table.title == "Weather stations"
    assert table.column("rainfall").unit == TODO
    assert table.column("precipitation_mm").unit == "mm"
    feedback = " ".join(retry_feedback(describer.messages))
    assert "unit 'mm' is not written in its name or comment" in feedback
    assert [call.output for call in scripted.calls] == ["TableDescription", "TableDescription"]


def test_without_the_unit_rule_the_unstated_unit_reaches_the_validator_output(monkeypatch):
    # the rule tuple is what retries; removing it lets the model's unstated unit through
    monkeypatch.setattr(catalog_module, "CATALOG_RULES", tuple(
        r for r in catalog_module.CATALOG_RULES if r.__name__ != "stated_units_are_stated"))
    unstated = make_description(_meaning("rainfall", stated_unit=StatedUnit(unit="mm",
                                                                            evidence="mm")))
    scripted = ScriptedModel({"catalog": [unstated]})
    output = _scripted_describer(scripted)(TABLE, DEPS.facts)
    assert output.columns[0].stated_unit is not None  # accepted: the rule is what stops it


def test_a_refusal_leaves_the_table_as_drafted():
    scripted = ScriptedModel({"catalog": [DescriptionRefusal(reason="names say nothing")]})
    report = describe_catalog(CATALOG, _scripted_describer(scripted), {}, 8)
    assert report.refused == {"stations": "names say nothing"}
    assert report.catalog == CATALOG


@pytest.fixture
def allow_local_requests(monkeypatch):
    # Requests go only to the fake server on 127.0.0.1.
    monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", True)


@pytest.mark.usefixtures("allow_local_requests")
def test_one_describe_call_over_the_openai_compatible_wire_counts_tokens(tmp_path):
    arguments = make_description(_meaning("precipitation_mm", **MM)).model_dump(mode="json")
    with FakeChatServer([ToolCall("TableDescription", arguments)]) as server:
        settings = Settings(model_catalog="openai-compatible:fake-qwen",
                            openai_base_url=server.base_url, openai_api_key="sk-local",
                            model_timeout_s=10.0, model_request_timeout_s=30.0)
        describer = _AgentDescriber(settings, model_provider(settings, roles=("catalog",)),
                                    RunArtifacts(str(tmp_path), "catalog-describe-1"))
        report = describe_catalog(CATALOG, describer, {}, 8)
    assert report.catalog.table("stations").column("precipitation_mm").unit == "mm"
    assert (describer.prompt_tokens, describer.completion_tokens, describer.requests) == (
        321, 45, 1)
    # the call's transcript, as a question's calls have them, with the API key redacted
    [transcript] = load_transcripts(tmp_path / "catalog-describe-1")
    assert (transcript.role, transcript.stage, transcript.status) == ("catalog", "describe", "ok")
    assert transcript.requests[0].input_tokens == 321
    assert "sk-local" not in (tmp_path / "catalog-describe-1" / "calls" / "1-catalog.json"
                              ).read_text()
    request = server.requests[0]
    assert request["model"] == "fake-qwen"
    tools = {tool["function"]["name"] for tool in request["tools"]}
    assert tools == {"final_result_TableDescription", "final_result_DescriptionRefusal"}
    user = " ".join(str(m["content"]) for m in request["messages"] if m["role"] == "user")
    assert "Table byo.stations" in user and "precipitation_mm double precision" in user


def _draft(tmp_path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("GEOASK_MODEL")}
    return subprocess.run(
        [GEOASK, "catalog", "draft", "--describe", "--out", str(tmp_path / "d.yaml"),
         "--database-url", "postgresql://nobody@127.0.0.1:1/none"],
        env={**clean, **env}, capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize(("env", "message"), [
    ({}, "no language model is configured for the catalog agent"),
    ({"GEOASK_MODEL": "reference"}, "offline reference model only replays"),
])
def test_describe_without_a_model_is_one_line_exit_2_and_writes_nothing(tmp_path, env, message):
    result = _draft(tmp_path, **env)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.db
def test_cli_describe_against_the_fake_server_writes_kept_meanings(database, tmp_path):
    from geoask.catalog.draft import draft_catalog
    from geoask.catalog.model import load_catalog

    names = sorted(t.name for t in load_catalog(database.settings.catalog_path).tables)
    airports = {"table": "airports", "title": "Airports",
                "theme": "Airports of the United States with codes and locations.",
                "columns": [{"column": "geom", "meaning": "Location of the airport.",
                             "guessed_unit": "km"}]}
    refusal = {"reason": "left for a person"}
    replies = [ToolCall("TableDescription", airports)]
    replies += [ToolCall("DescriptionRefusal", refusal) for _ in names[1:]]
    out = tmp_path / "described.yaml"
    with FakeChatServer(replies) as server:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GEOASK_MODEL")}
        result = subprocess.run(
            [GEOASK, "catalog", "draft", "--describe", "--schema", "demo", "--out", str(out),
             "--database-url", database.reader_url],
            env={**env, "GEOASK_MODEL_CATALOG": "openai-compatible:fake",
                 "GEOASK_OPENAI_BASE_URL": server.base_url, "GEOASK_OPENAI_API_KEY": "sk-x"},
            capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    assert len(server.requests) == len(names)  # one call per table
    assert f"catalog agent: 1 of {len(names)} tables described in {len(names)} model requests, " \
        f"{321 * len(names):,} prompt + {45 * len(names):,} completion tokens" in result.stdout
    catalog = load_catalog(out)
    geom = catalog.table("airports").column("geom")
    assert geom.unit == "degree (EPSG:4326)"  # drafted from the CRS; the agent's guess not kept
    drafted = draft_catalog(database.reader_url, ["demo"])
    for table in catalog.tables:  # COMMENT ON texts stay apart, unreviewed, never overwritten
        assert table.from_database == drafted.table(table.name).from_database != {}
        assert drafted.table(table.name).title == drafted.table(table.name).theme == "TODO"
        described = table.name == "airports"
        assert (table.theme == airports["theme"]) is described
        assert (table.theme == "TODO") is not described  # refused: left for a person
    assert catalog.table("airports").title == "Airports"  # the agent's title fills a TODO
    assert "Titles, themes and column meanings of 1 tables were written" in out.read_text()
