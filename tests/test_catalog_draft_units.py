"""Pure parts of `catalog draft` and `catalog check`: time steps, YAML shape, type spelling,
atomic writing (no database)."""

from __future__ import annotations

import datetime as dt
import doctest
from pathlib import Path

import pytest

import geoask.catalog.abbreviations
import geoask.catalog.attribute_joins
import geoask.catalog.check
import geoask.catalog.columns
import geoask.catalog.draft
import geoask.catalog.join_path
import geoask.catalog.labels
import geoask.catalog.spatial
import geoask.catalog.spatial_joins
from geoask.catalog.abbreviations import candidates
from geoask.catalog.check import pg_type_name
from geoask.catalog.draft import _step, to_yaml, write_atomically
from geoask.catalog.labels import propose_labels
from geoask.catalog.model import TODO, load_catalog
from geoask.catalog.spatial import spatial_modifiers
from geoask.errors import CatalogError


@pytest.mark.parametrize("module", [geoask.catalog.abbreviations, geoask.catalog.check,
                                    geoask.catalog.columns, geoask.catalog.spatial,
                                    geoask.catalog.draft, geoask.catalog.spatial_joins,
                                    geoask.catalog.labels,
                                    geoask.catalog.attribute_joins, geoask.catalog.join_path])
def test_docstring_examples(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize(
    ("values", "step"),
    [
        ([1950, 1951, 1953], "annual"),
        ([1960, 1970, 1990], "decadal"),
        ([1952, 1957, 1962], TODO),
        ([2000], TODO),
        ([dt.date(1999, m, 1) for m in (1, 2, 5)], "monthly"),
        ([dt.date(y, 1, 1) for y in (1999, 2000)], "annual"),
        ([dt.date(2014, 9, d) for d in (1, 2, 4)], "daily"),
        ([dt.datetime(2014, 9, 1, 10), dt.datetime(2014, 9, 3, 12)], TODO),
    ],
)
def test_time_step(values, step):
    assert _step(values) == step


@pytest.mark.parametrize(
    ("written", "spelled"),
    [("char(2)", "character(2)"), ("varchar(10)", "character varying(10)"), ("int", "integer"),
     ("float8", "double precision"), ("timestamptz", "timestamp with time zone"),
     ("geometry(Point,32618)", "geometry(Point,32618)"), ("numeric(5, 2)", "numeric(5,2)")],
)
def test_pg_type_name(written, spelled):
    assert pg_type_name(written) == spelled


def test_spatial_modifiers_defaults():
    assert spatial_modifiers("geography(Point)") == ("POINT", 4326)
    assert spatial_modifiers("geometry(LineString)") == ("LINESTRING", 0)


def test_demo_catalog_round_trips_through_the_draft_yaml_writer(tmp_path):
    demo = load_catalog()
    path = tmp_path / "demo.yaml"
    path.write_text(to_yaml(demo))
    assert load_catalog(path) == demo
    text = path.read_text()
    assert "primary_key: [state_fips, year]" in text
    assert "range: [1929, 2009]" in text  # integer ranges stay integers


def test_write_atomically_refuses_and_leaves_no_temporary(tmp_path):
    out = tmp_path / "c.yaml"
    write_atomically(out, "a: 1\n")
    with pytest.raises(CatalogError, match="exists; pass --force"):
        write_atomically(out, "a: 2\n")
    write_atomically(out, "a: 3\n", force=True)
    assert out.read_text() == "a: 3\n"
    assert [p.name for p in tmp_path.iterdir()] == ["c.yaml"]
    with pytest.raises(CatalogError, match="does not exist"):
        write_atomically(tmp_path / "missing" / "c.yaml", "")
    with pytest.raises(CatalogError, match="is a folder; name the YAML file"):
        write_atomically(tmp_path, "", force=True)
    with pytest.raises(CatalogError, match=r"cannot write in /proc: "):
        write_atomically(Path("/proc/geoask-draft.yaml"), "")  # no one may create files there



# (column name, expected candidates): abbreviated pieces found, plain words left alone
ABBREVIATED = [
    ("pop8", {"pop": ["population"]}),
    ("cmedv", {"c": ["corrected", "count"], "med": ["median"], "v": ["value"]}),
    ("trctcode", {"trct": ["tract"]}),
    ("pct_ag", {"pct": ["percent"], "ag": ["agriculture", "agricultural"]}),
    ("medinc", {"med": ["median"], "inc": ["income", "incidence"]}),
    ("MedInc80", {"med": ["median"], "inc": ["income", "incidence"]}),
    ("PCTOWNHOME", {"pct": ["percent"], "own": ["owner-occupied", "owned"]}),
    ("county_fips", {"fips": ["Federal Information Processing Standards code"]}),
    ("state_name", {}),
    ("precipitation_mm", {}),
    ("nonwhite_births_1974", {}),  # "non" + "white": words, not "no" + "n"
    ("status", {}),
    ("geom", {}),
]

# census- and parcel-style names: each abbreviated piece found (abbreviations.yaml)
CENSUS = [
    ("rms", {"rms": ["rooms"]}),
    ("bths", {"bths": ["bathrooms"]}),
    ("num_bath", {"num": ["number"], "bath": ["bathrooms"]}),
    ("lot_sqft", {"sqft": ["square feet"]}),
    ("lotsz", {"sz": ["size"]}),
    ("sq_ft", {"sq": ["square"], "ft": ["feet"]}),
    ("popchg", {"pop": ["population"], "chg": ["change"]}),
    ("pop_chg", {"pop": ["population"], "chg": ["change"]}),
    ("age_0_4", {"age_0_4": ["age 0 to 4 years"]}),
    ("a5_9", {"a5_9": ["age 5 to 9 years"]}),
    ("age85plus", {"age85plus": ["age 85 years and over"]}),
    ("pop_a5_9", {"pop": ["population"], "a5_9": ["age 5 to 9 years"]}),
    ("hhinc", {"hh": ["household", "households"], "inc": ["income", "incidence"]}),
    ("medhhinc", {"med": ["median"], "hh": ["household", "households"],
                  "inc": ["income", "incidence"]}),
    ("hu_vac", {"hu": ["housing units"], "vac": ["vacant", "vacancy"]}),
    ("pct_own", {"pct": ["percent"], "own": ["owner-occupied", "owned"]}),
    ("pct_rent", {"pct": ["percent"], "rent": ["renter-occupied", "rent"]}),
    ("tot_pop", {"tot": ["total"], "pop": ["population"]}),
    ("avg_hh_sz", {"avg": ["average"], "hh": ["household", "households"], "sz": ["size"]}),
    ("yrblt", {"yr": ["year"], "blt": ["built"]}),
    ("moe_pop", {"moe": ["margin of error"], "pop": ["population"]}),
    # plain names stay without candidates
    ("borough", {}), ("shape_area", {}), ("county_name", {}), ("zoning", {}),
    ("bedrooms", {}), ("sale_price", {}), ("owner_name", {}), ("vacant", {}),
]


@pytest.mark.parametrize(("name", "expected"), CENSUS, ids=[a[0] for a in CENSUS])
def test_census_abbreviation_candidates(name, expected):
    assert candidates(name) == expected


def test_abbreviations_are_data_a_new_entry_needs_no_code(tmp_path):
    from geoask.catalog.abbreviations import DATA_PATH, load_abbreviations

    text = DATA_PATH.read_text().replace("abbreviations:\n", "abbreviations:\n  xyz: [xylophone]\n")
    extended = tmp_path / "abbreviations.yaml"
    extended.write_text(text)
    assert load_abbreviations(extended)["abbreviations"]["xyz"] == ("xylophone",)
    assert "xyz" not in load_abbreviations(DATA_PATH)["abbreviations"]
    extended.write_text("abbreviations: {}\nwords: []\nletters: {}\npatterns: [{pattern: '('}]\n")
    with pytest.raises(CatalogError, match=r"abbreviation file .* is invalid: error"):
        load_abbreviations(extended)


@pytest.mark.parametrize(("name", "expected"), ABBREVIATED, ids=[a[0] for a in ABBREVIATED])
def test_abbreviation_candidates(name, expected):
    assert candidates(name) == expected


def test_abbreviation_candidates_are_listed_as_todos():
    from geoask.catalog.model import Column, Table

    column = Column(name="medinc", type="integer", description=TODO,
                    abbreviation_candidates=candidates("medinc"))
    table = Table(name="t", title="T", theme=TODO, spatial_granularity=TODO,
                  temporal_granularity="static", source=TODO, expected_rows=1, primary_key=[],
                  columns=[column])
    assert "t.medinc: abbreviation candidates med, inc; confirm them into abbreviations or " \
        "delete them" in _catalog(table).todos()


def _catalog(table):
    from geoask.catalog.model import Catalog

    return Catalog.model_validate({"version": 1, "schema": "s", "description": "d",
                                   "tables": [table]})


def _rel(name, columns, primary_key=(), unique=()):
    from geoask.catalog.introspect import LiveColumn, Relation

    rel = Relation(oid=0, schema="s", name=name, kind="table", reltuples=0, comment=None,
                   primary_key=list(primary_key), unique=[list(u) for u in unique])
    for column, type_ in columns:
        type_name, category = {"text": ("text", "S"), "integer": ("int4", "N"),
                               "double precision": ("float8", "N")}[type_]
        rel.columns.append(LiveColumn(column, type_, type_name, category, False, None))
    return rel


def test_value_joins_need_a_shared_non_generic_name_and_the_match_share():
    from geoask.catalog.attribute_joins import MIN_MATCH_SHARE, infer_value_joins

    parcels = _rel("parcels", [("county_name", "text"), ("name", "text"), ("zoning", "text"),
                               ("lot_area", "double precision"), ("tract_id", "integer")])
    summary = _rel("county_summary", [("county_name", "text"), ("name", "text"),
                                      ("lot_area", "double precision"), ("tract_id", "integer")])
    owners = _rel("owners", [("zoning", "text")])
    shares = {"county_name": (5, 5), "zoning": (1, 4), "tract_id": (3, 4)}
    probed = []

    def probe(left, right, column):
        probed.append((left.name, right.name, column))
        return shares.get(column)

    rows = {"parcels": 40, "county_summary": 5, "owners": 10}
    paths = infer_value_joins([parcels, summary, owners], rows, set(), probe)
    assert sorted(probed) == [("parcels", "county_summary", "county_name"),
                              ("parcels", "county_summary", "tract_id"),
                              ("parcels", "owners", "zoning")]  # no name, no float measure
    assert [(p.left, p.right, p.match_share, p.sampled) for p in paths] == [
        ("parcels.county_name", "county_summary.county_name", 1.0, 5),
        ("parcels.tract_id", "county_summary.tract_id", 0.75, 4)]
    assert MIN_MATCH_SHARE > 1 / 4  # zoning: below the threshold, not proposed
    taken = {frozenset(("parcels.county_name", "county_summary.county_name"))}
    assert [p.left for p in infer_value_joins([parcels, summary], rows, taken, probe)] == [
        "parcels.tract_id"]  # a pair already joined by key is not probed again


def test_value_joins_point_onto_the_unique_side():
    from geoask.catalog.attribute_joins import value_candidates

    big = _rel("counties", [("county_name", "text")], unique=[["county_name"]])
    small = _rel("notes", [("county_name", "text")])
    assert [(a.name, b.name) for a, b, _ in value_candidates(
        [big, small], {"counties": 100, "notes": 2}, set())] == [("notes", "counties")]


def test_key_join_inference_is_unchanged_and_unique_keys_make_parents():
    from geoask.catalog.attribute_joins import infer_key_joins

    states = _rel("states", [("state_fips", "text")], primary_key=["state_fips"])
    codes = _rel("codes", [("state_fips", "text"), ("code", "text")], unique=[["code"]])
    rates = _rel("rates", [("state_fips", "text"), ("code", "text")])
    assert [(p.left, p.right) for p in infer_key_joins([states, codes, rates])] == [
        ("codes.state_fips", "states.state_fips"), ("rates.code", "codes.code"),
        ("rates.state_fips", "states.state_fips")]


class _NoQueries:
    """A connection that fails the test if any statement is sent."""

    def execute(self, *args, **kwargs):
        raise AssertionError(f"unexpected query {args[0]!r}")

    def transaction(self):
        raise AssertionError("unexpected transaction")


def test_a_relation_estimated_past_the_threshold_is_not_counted_and_says_so():
    from geoask.catalog import profile as profiling
    from geoask.catalog.introspect import Relation

    big = Relation(oid=0, schema="s", name="sensor_points", kind="table", reltuples=1e7,
                   comment=None)
    found = profiling.profile(_NoQueries(), big, threshold=100_000)
    assert (found.rows, found.estimated, found.sampled) == (10_000_000, True, True)


def test_spatial_join_probes_stop_at_the_per_relation_budget(monkeypatch):
    from geoask.catalog import profile as profiling
    from geoask.catalog import spatial_joins
    from geoask.catalog.introspect import Relation

    seen = []

    def rows(conn, query, params=None):
        seen.append(profiling._BUDGET.get())
        return []

    monkeypatch.setattr(profiling, "safe_rows", rows)
    rel = Relation(oid=0, schema="s", name="a", kind="table", reltuples=10, comment=None)
    side = spatial_joins.GeoSide(rel, "geom", "geometry", 0, 4326, 10)
    assert spatial_joins.match_share(object(), side, side, "ST_Within",
                                     budget=(0.5, 30)) is None
    assert len(seen) == 1 and seen[0] is not None and seen[0].seconds == 0.5


def test_a_widely_shared_name_is_probed_only_against_its_key_holders():
    from geoask.catalog.attribute_joins import MAX_NAME_RELATIONS, value_candidates

    many = [_rel(f"log_{i:02d}", [("inspector", "text")])
            for i in range(MAX_NAME_RELATIONS + 1)]
    assert value_candidates(many, {}, set()) == []  # unique nowhere: a shared attribute
    holder = _rel("inspectors", [("inspector", "text")], unique=[["inspector"]])
    pairs = value_candidates([*many, holder], {}, set())
    assert len(pairs) == len(many) and all(right is holder for _, right, _ in pairs)
    few = many[:MAX_NAME_RELATIONS]
    assert len(value_candidates(few, {}, set())) == len(few) * (len(few) - 1) // 2


CURATED = [Path("geoask/catalog/catalog.yaml"), Path("benchmark/databases/spdata/catalog.yaml"),
           Path("benchmark/databases/anycrs/catalog.yaml")]


@pytest.mark.parametrize("path", CURATED, ids=lambda path: path.parent.name)
def test_the_draft_proposes_the_curated_labels_and_no_others(path):
    # The labels of the shipped catalogs were written by hand; a draft of the same tables
    # (keys as the database declares them) proposes each of them - its codes the declared
    # keys, so possibly fewer - and none where nobody wrote one.
    tables = load_catalog(Path(__file__).parents[1] / path).tables
    for table in tables:
        singles = [key[0] for key in [table.primary_key, *table.unique] if len(key) == 1]
        proposed = propose_labels(table.name, table.primary_key, singles,
                                  {c.name: c.type for c in table.columns})
        if table.labels is None:
            assert proposed is None, table.name
        else:
            assert proposed is not None, table.name
            assert proposed.name == table.labels.name, table.name
            assert proposed.codes[0] == table.labels.codes[0], table.name
            assert set(proposed.codes) <= set(table.labels.codes), table.name
    assert any(table.labels is not None for table in tables)
