from collections.abc import Sequence

import numpy as np
import pytest

from geoask.catalog.model import TemporalGranularity as T
from geoask.retrieval import (
    InMemorySchemaIndex,
    RetrievalConfig,
    RetrievalIntent,
    SchemaRetriever,
)
from geoask.retrieval.documents import DocumentKind, SchemaDocument
from geoask.retrieval.index import IndexHit
from geoask.retrieval.retriever import query_clauses, relative_cutoff


class FixedHitsIndex:
    """A SchemaIndex fake that answers every query with fixed similarities."""

    def __init__(self, tables: dict[str, float], columns: dict[str, float]) -> None:
        self.tables = tables
        self.columns = columns

    def content_hash(self) -> str | None:
        return "fixed"

    def rebuild(self, documents: Sequence[SchemaDocument], vectors, content_hash: str) -> None:
        raise AssertionError("not expected")

    def query(self, vectors, kind: DocumentKind, k: int) -> list[list[IndexHit]]:
        if kind == "table":
            hits = [IndexHit(t, None, s) for t, s in self.tables.items()][:k]
        else:
            hits = [IndexHit(*c.split("."), s) for c, s in self.columns.items()][:k]
        return [hits for _ in vectors]


class ZeroEmbedder:
    name = "zero"
    dims = 4

    def embed(self, texts):
        return np.zeros((len(texts), self.dims), np.float32)


@pytest.fixture
def retriever(catalog, embedder):
    r = SchemaRetriever(catalog, InMemorySchemaIndex(), embedder, count_tokens=len)
    r.ensure_index()
    return r


def test_score_combines_table_and_best_column_similarity(catalog):
    index = FixedHitsIndex(
        {"us_states": 0.5, "climate_grid_cells": 0.9},
        {"us_states.state_name": 0.9, "us_states.geom": 0.2, "climate_grid_cells.geom": 0.1},
    )
    config = RetrievalConfig(alpha=0.75, lexical_weight=0.0)
    retriever = SchemaRetriever(catalog, index, ZeroEmbedder(), config, count_tokens=len)
    scores = {s.name: s.score for s in retriever.rank("anything")}
    assert scores["us_states"] == pytest.approx(0.25 * 0.5 + 0.75 * 0.9)
    assert scores["climate_grid_cells"] == pytest.approx(0.25 * 0.9 + 0.75 * 0.1)
    assert scores["city_incidents"] == 0.0


def test_lexical_match_adds_to_the_score(catalog):
    index = FixedHitsIndex({"us_states": 0.5}, {})
    config = RetrievalConfig(lexical_weight=0.2)
    retriever = SchemaRetriever(catalog, index, ZeroEmbedder(), config, count_tokens=len)
    ranked = {s.name: s for s in retriever.rank("FIPS of Georgia")}
    # two terms naming only us_states: lexical weight 2, capped at 1
    assert ranked["us_states"].lexical_score == 1.0
    assert ranked["us_states"].score == pytest.approx(0.4 * 0.5 + 0.2 * 1.0)
    assert ranked["us_states"].semantic_score == pytest.approx(0.4 * 0.5)


@pytest.mark.parametrize("alpha", [0.5, 0.2, 1.1])
def test_alpha_must_exceed_one_half(alpha):
    with pytest.raises(ValueError, match="alpha"):
        RetrievalConfig(alpha=alpha)


def test_index_is_rebuilt_only_when_the_catalog_changes(catalog, embedder):
    index = InMemorySchemaIndex()
    first = SchemaRetriever(catalog, index, embedder)
    assert first.ensure_index() is True
    assert SchemaRetriever(catalog, index, embedder).ensure_index() is False
    changed = catalog.model_copy(update={"description": "another description"})
    assert SchemaRetriever(changed, index, embedder).ensure_index() is True
    assert index.rebuild_count == 2


@pytest.mark.parametrize(
    ("question", "needed"),
    [
        ("per-capita income of Texas in 1990", {"state_income_annual", "us_states"}),
        ("total rainfall of each grid cell in September 1999",
         {"climate_grid_monthly", "climate_grid_cells"}),
        ("how many burglaries were reported in New Haven", {"city_incidents"}),
        ("land area of each state", {"us_states"}),
    ],
)
def test_retrieves_the_tables_a_question_needs(retriever, question, needed):
    subset = retriever.retrieve(question)
    assert needed <= set(subset.table_names)


def test_geometry_table_is_joined_in_and_marked(retriever):
    subset = retriever.retrieve("monthly precipitation totals in 1999")
    tables = {t.name: t for t in subset.tables}
    assert tables["climate_grid_cells"].joined_in
    assert tables["climate_grid_cells"].joined_from == "climate_grid_monthly"
    assert "joined in: referenced by climate_grid_monthly" in subset.prompt_text


def test_monthly_intent_excludes_annual_table(retriever):
    intent = RetrievalIntent(temporal_granularity=T.MONTHLY, period_start="1999-09")
    subset = retriever.retrieve("per-capita income of Georgia in September 1999", intent)
    assert "state_income_annual" not in subset.table_names


def test_within_keeps_exactly_the_chosen_tables(retriever):
    subset = retriever.retrieve("monthly precipitation per grid cell",
                                within=["climate_grid_monthly", "us_states", "no_such_table"])
    # no join completion: climate_grid_cells (referenced by the monthly table) stays out
    assert sorted(subset.table_names) == ["climate_grid_monthly", "us_states"]
    assert "demo.climate_grid_cells" not in subset.prompt_text


def test_geometry_columns_can_be_left_out(retriever):
    with_geometry = retriever.retrieve("state outlines", within=["us_states"])
    without = retriever.retrieve("state outlines", within=["us_states"], geometry=False)
    assert "geom" in with_geometry.tables[0].columns
    assert "geom" not in without.tables[0].columns
    assert "geometry(" in with_geometry.prompt_text and "geometry(" not in without.prompt_text


def test_within_ignores_the_intent_filters(retriever):
    monthly = RetrievalIntent(temporal_granularity=T.MONTHLY, period_start="1999-09")
    subset = retriever.retrieve("income", monthly, within=["state_income_annual"])
    assert "state_income_annual" in subset.table_names
    assert retriever.retrieve("income", monthly, within=[]).table_names == []


def test_table_budget_is_respected(catalog, embedder):
    config = RetrievalConfig(max_tables=1, min_relative_score=0.01)
    retriever = SchemaRetriever(catalog, InMemorySchemaIndex(), embedder, config)
    retriever.ensure_index()
    assert len(retriever.retrieve("income rainfall incidents states grid").tables) == 1


def test_irrelevant_columns_are_trimmed_but_keys_and_geometry_kept(catalog, embedder):
    config = RetrievalConfig(min_columns=1, column_margin=0.0)
    retriever = SchemaRetriever(catalog, InMemorySchemaIndex(), embedder, config)
    retriever.ensure_index()
    subset = retriever.retrieve("land area of each state in square kilometres")
    states = next(t for t in subset.tables if t.name == "us_states")
    # key + geometry + the one most similar column
    assert states.columns == ["state_fips", "land_area_km2", "geom"]
    assert states.omitted_columns == 2
    assert "(2 more columns not shown)" in subset.prompt_text
    typed = subset.catalog_tables(catalog)
    assert [t.name for t in typed] == subset.table_names
    assert [c.name for c in typed[0].columns] == subset.tables[0].columns


def test_prompt_text_is_smaller_than_the_full_catalog(catalog, embedder):
    from geoask.retrieval.render import render_catalog

    config = RetrievalConfig(min_ranked_tables=1)
    retriever = SchemaRetriever(catalog, InMemorySchemaIndex(), embedder, config, len)
    retriever.ensure_index()
    subset = retriever.retrieve("how many burglaries were reported in New Haven")
    assert subset.table_names == ["city_incidents"]
    assert subset.token_count == len(subset.prompt_text)  # count_tokens=len here
    assert subset.token_count < len(render_catalog(catalog)) / 3


def test_min_ranked_tables_keeps_the_runner_up(catalog, embedder):
    config = RetrievalConfig(min_ranked_tables=2, min_relative_score=1.0, lexical_keep=9.0)
    retriever = SchemaRetriever(catalog, InMemorySchemaIndex(), embedder, config)
    retriever.ensure_index()
    ranked = [s.name for s in retriever.rank("how many burglaries were reported in New Haven")]
    subset = retriever.retrieve("how many burglaries were reported in New Haven")
    assert [t.name for t in subset.tables if not t.joined_in] == ranked[:2]


@pytest.mark.parametrize(
    ("scores", "fraction", "expected"),
    [([0.8, 0.5, 0.4], 0.5, 0.65), ([0.8, 0.5, 0.4], 0.0, 0.5), ([0.8, 0.5, 0.4], 1.0, 0.8),
     ([0.6, 0.6], 0.3, 0.6), ([], 0.3, 0.0)],
)
def test_relative_cutoff(scores, fraction, expected):
    assert relative_cutoff(scores, fraction) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("land area of the states", ["land area of the states"]),
        ("land area of each state", ["land area of each state", "land area", "state"]),
        ("rainfall per county compared with SIDS deaths",
         ["rainfall per county compared with SIDS deaths", "rainfall", "county", "SIDS deaths"]),
        ("counties with more than 100,000 people",
         ["counties with more than 100,000 people", "counties", "more than 100,000 people"]),
        ("incidents near I-95, and roads", ["incidents near I-95, and roads", "incidents",
                                            "I-95", "roads"]),
    ],
)
def test_query_clauses(query, expected):
    assert query_clauses(query) == expected


def test_same_subtask_is_served_from_cache(retriever):
    first = retriever.retrieve("land area of each state")
    again = retriever.retrieve("land  area of each   state")
    assert again is first
    assert retriever.cache_hits == 1
    in_1990 = RetrievalIntent(period_start="1990")
    assert retriever.retrieve("land area of each state", in_1990) is not first
    assert retriever.retrieve("land area of each state", within=["us_states"]) is not first
    assert retriever.cache_hits == 1


def test_rebuild_clears_the_cache(retriever):
    first = retriever.retrieve("land area of each state")
    retriever.ensure_index(force=True)
    assert retriever.retrieve("land area of each state") is not first


def test_config_defaults_match_the_settings_defaults():
    from geoask.settings import Settings

    assert RetrievalConfig.from_settings(Settings()) == RetrievalConfig()
