"""The compute agent: script checks (table-driven) and its validator's retries."""

from __future__ import annotations

import ast

import pytest
from agent_builders import make_constraints, make_intent, make_step, retry_feedback
from pydantic_ai.exceptions import UnexpectedModelBehavior

from agents import compute as compute_module
from agents.compute import (
    ComputeAttempt,
    ComputeDeps,
    InputArtifact,
    compute_agent,
    compute_errors,
    imports_available,
    missing_fields_really_missing,
    no_dynamic_code,
    no_host_paths,
    parse_script,
    prints_protocol_json,
    projects_for_distances,
    prompt,
    reads_every_input,
)
from geoask.base.formats import EXPORT_FORMATS
from geoask.errors import AgentOutputError
from geoask.models.llm import model_call_error
from geoask.models.scripted import ScriptedModel
from geoask.vocabulary.drafts import ComputeRefusal, ComputeScript
from geoask.vocabulary.plan import Distance, OperationIntent, SpatialPredicate, SpatialTopology

GOOD = """\
import json
import geopandas as gpd
parks = gpd.read_file("/input/parks.geojson")
schools = gpd.read_file("/input/schools.geojson")
utm = parks.estimate_utm_crs()
near = parks.to_crs(utm).sjoin_nearest(schools.to_crs(utm), max_distance=1000.0)
result = {"n": len(near)}
print(json.dumps({"status": "success", "summary": f"{len(near)} parks", "result": result}))
"""
INPUTS = [InputArtifact("parks", "/input/parks.geojson",
                        "columns: id (integer), name (text)\nrows: 40 rows\ngeometry: geom Point"),
          InputArtifact("schools", "/input/schools.geojson",
                        "columns: id (integer), kind (text)\nrows: 9 rows")]


def tree(source: str) -> ast.Module:
    return ast.parse(source)


# (title, rule, script, expected fragment or None)
SCRIPT_CASES = [
    ("analysis imports ok", imports_available, GOOD, None),
    ("stdlib ok", imports_available, "import math, statistics\nfrom collections import Counter",
     None),
    ("sklearn submodule ok", imports_available, "from sklearn.cluster import DBSCAN", None),
    ("subprocess", imports_available, "import subprocess", "subprocess"),
    ("network via urllib", imports_available, "from urllib.request import urlopen", "urllib"),
    ("database driver", imports_available, "import psycopg", "psycopg"),
    ("unknown package", imports_available, "import requests", "requests"),
    ("plain calls ok", no_dynamic_code, GOOD, None),
    ("eval", no_dynamic_code, "x = eval('1+1')", "eval"),
    ("__import__", no_dynamic_code, "m = __import__('os')", "__import__"),
    ("sandbox paths ok", no_host_paths, GOOD + "open('/scratch/out.csv', 'w')", None),
    ("host path", no_host_paths, "open('/etc/passwd').read()", "/etc/passwd"),
    ("protocol printed", prints_protocol_json, GOOD, None),
    ("no json output", prints_protocol_json, "print('done')", "json.dumps"),
]


@pytest.mark.parametrize(("rule", "script", "expected"), [c[1:] for c in SCRIPT_CASES],
                         ids=[c[0] for c in SCRIPT_CASES])
def test_script_rules(rule, script, expected):
    error = rule(tree(script))
    if expected is None:
        assert error is None
    else:
        assert error is not None and expected in error, error


@pytest.mark.parametrize(("script", "expected"), [
    (GOOD, None),
    ("import glob\nfiles = glob.glob('/input/*.geojson')", None),
    ("import os\np = os.path.join('/input', 'parks.geojson')", "/input/schools.geojson"),
    ("x = 1", "/input/parks.geojson, /input/schools.geojson"),
], ids=["both paths", "glob", "one missing", "none"])
def test_reads_every_input(script, expected):
    error = reads_every_input(tree(script), INPUTS)
    assert (error is None) if expected is None else (expected in error)


WITHIN_1_KM = make_intent(topology=SpatialTopology(
    predicate=SpatialPredicate.WITHIN_DISTANCE, distance=Distance(value=1, unit="km")))


@pytest.mark.parametrize(("script", "intent", "expected"), [
    (GOOD, WITHIN_1_KM, None),
    ("import json\nparks.buffer(0.01)", WITHIN_1_KM, "projected CRS"),
    ("import json\nparks.area", make_intent(operation=OperationIntent.MEASURE), "projected CRS"),
    ("import json\nparks.describe()", make_intent(), None),
    ("from pyproj import Geod\nGeod(ellps='WGS84').geometry_area_perimeter(g)",
     make_intent(operation=OperationIntent.MEASURE), None),
    ("import pyproj\npyproj.Geod(ellps='WGS84').inv(0, 0, 1, 1)", WITHIN_1_KM, None),
    ("import json\nparks.to_crs(2263).area", make_intent(operation=OperationIntent.MEASURE),
     None),
], ids=["projects", "buffer in degrees", "area in degrees", "no distance", "geodesic area",
        "geodesic distance", "native metric crs"])
def test_projects_for_distances(script, intent, expected):
    error = projects_for_distances(tree(script), intent)
    assert (error is None) if expected is None else (expected in error)


def test_syntax_error_names_the_line():
    assert parse_script("x = 1\nif x\n") == "the script does not parse: line 2: expected ':'"


def deps(**changes) -> ComputeDeps:
    fields = dict(question="How many parks lie within 1 km of a school?",
                  step=make_step("python-1", inputs=["sql-1"]),
                  constraints=make_constraints(computation_needed=True, geometry_needed=True,
                                               input_mode="multiple",
                                               operation_category="spatial_geometry"),
                  inputs=INPUTS, schema_text="demo.parks(id, name, geom)",
                  executed_sql=["SELECT id, name, geom FROM demo.parks"], intent=WITHIN_1_KM)
    fields.update(changes)
    return ComputeDeps(**fields)


def test_compute_errors_combine_rules():
    bad = ComputeScript(script="import subprocess\nprint('x')", method="m")
    errors = compute_errors(bad, deps())
    assert len(errors) == 4, errors  # import, protocol, inputs unread, no projection
    assert compute_errors(ComputeScript(script=GOOD, method="UTM, EPSG:326xx"), deps()) == []
    assert compute_errors(ComputeRefusal(reason="no geom", missing_fields=["geom"]), deps()) == []


def test_prompt_has_table4_inputs_and_failures():
    d = deps(previous_attempts=[ComputeAttempt(script="x", error="missing_field: KeyError 'pop'")])
    text = prompt(d)
    for piece in ("/input/parks.geojson", "columns: id (integer), name (text)",
                  "SELECT id, name, geom",
                  "within_distance", "geometry_needed", "KeyError 'pop'"):
        assert piece in text


def test_broken_script_is_retried_and_fixed_script_accepted():
    fixed = ComputeScript(script=GOOD, method="UTM zone from estimate_utm_crs()")
    scripted = ScriptedModel({"compute": [ComputeScript(script="print(", method="m"), fixed]})
    result = compute_agent.run_sync(prompt(deps()), deps=deps(), model=scripted.model("compute"))
    assert result.output == fixed
    assert any("does not parse" in t for t in retry_feedback(result.all_messages()))


def test_exhausted_budget_is_a_clear_error():
    bad = ComputeScript(script="import socket", method="m")
    scripted = ScriptedModel({"compute": [bad] * (compute_module.OUTPUT_RETRIES + 1)})
    with pytest.raises(UnexpectedModelBehavior) as caught:
        compute_agent.run_sync(prompt(deps()), deps=deps(), model=scripted.model("compute"))
    assert isinstance(model_call_error(caught.value, "compute"), AgentOutputError)


@pytest.mark.parametrize(("missing", "expected"), [
    (["enrollment"], None),
    (["kind"], "kind (in schools)"),
    (["enrollment", "name"], "name (in parks)"),
    ([], None),
], ids=["really missing", "present", "one present", "none listed"])
def test_refusal_fields_must_be_really_missing(missing, expected):
    refusal = ComputeRefusal(reason="need field", missing_fields=missing)
    error = missing_fields_really_missing(refusal, INPUTS)
    assert (error is None) if expected is None else (expected in error)
    assert bool(compute_errors(refusal, deps())) is (expected is not None)


def test_refusal_naming_a_present_field_is_retried():
    wrong = ComputeRefusal(reason="no school kind", missing_fields=["kind"])
    real = ComputeRefusal(reason="no enrollment", missing_fields=["enrollment"])
    scripted = ScriptedModel({"compute": [wrong, real]})
    result = compute_agent.run_sync(prompt(deps()), deps=deps(), model=scripted.model("compute"))
    assert result.output == real


def test_prompt_names_each_inputs_native_crs_and_metric_crs(tmp_path):
    """An input exported from EPSG:2263 (US feet) tells the agent its CRS, units and metric CRS."""
    import shapely

    from geoask.sql.executor import QueryResult, ResultColumn
    from geoask.sql.export import export_result

    parcel = shapely.set_srid(shapely.box(985000, 200000, 986000, 201000), 2263)
    result = QueryResult((ResultColumn("id", "integer"),
                          ResultColumn("geom", "geometry", True, "city.parcels.geom")),
                         [(1, parcel)], 10, "SELECT id, geom FROM city.parcels")
    exported = export_result(result, str(tmp_path))
    parcels = InputArtifact("parcels", "/input/result.geojson", exported.preview.to_text())
    text = prompt(deps(inputs=[parcels]))
    assert "crs of geom: stored in EPSG:2263 (NAD83 / New York Long Island (ftUS); US survey " \
           "foot)" in text
    assert 'to_crs("EPSG:2263")' in text and "native" in text
    assert "pyproj.Geod" in compute_module.INSTRUCTIONS
    assert "never in degrees" in compute_module.INSTRUCTIONS


def test_prompt_of_an_input_over_several_utm_zones_says_equal_area_and_geodesic(tmp_path):
    """Parks across the contiguous US: areas in Conus Albers, distances with pyproj.Geod."""
    import shapely

    from geoask.sql.executor import QueryResult, ResultColumn
    from geoask.sql.export import export_result

    parks = [shapely.set_srid(shapely.box(x, y, x + 0.1, y + 0.1), 4326)
             for x, y in ((-122.5, 37.7), (-74.1, 40.6))]
    result = QueryResult((ResultColumn("id", "integer"),
                          ResultColumn("geom", "geometry", True, "us.parks.geom")),
                         [(i, park) for i, park in enumerate(parks)], 10,
                         "SELECT id, geom FROM us.parks")
    exported = export_result(result, str(tmp_path))
    inputs = [InputArtifact("parks", "/input/result.geojson", exported.preview.to_text())]
    text = " ".join(prompt(deps(inputs=inputs)).split())
    assert ('areas: to_crs("EPSG:5070") (NAD83 / Conus Albers; metre; extent spans 9 UTM zones: '
            'equal-area EPSG:5070 for areas; distances: geodesic (pyproj.Geod))') in text
    rule = " ".join(compute_module.INSTRUCTIONS.split())
    assert ('where the line says "distances: geodesic" it is an equal-area CRS for areas only: '
            'measure distances on the lon/lat with pyproj.Geod(ellps="WGS84")') in rule


def test_instructions_say_how_to_read_every_export_format():
    rule = " ".join(compute_module.read_inputs_rule().split())
    for fmt in EXPORT_FORMATS:
        assert fmt.script_hint in rule
    assert rule.startswith("- Read inputs only from their /input paths (GeoJSON: ")
    assert compute_module.read_inputs_rule() in compute_module.INSTRUCTIONS


def test_instructions_tell_how_to_read_geoparquet_and_that_it_is_wgs84():
    text = " ".join(compute_module.INSTRUCTIONS.split())
    assert "GeoParquet .parquet: geopandas.read_parquet" in text
    assert "Feature inputs (.geojson and .parquet) are WGS 84 lon/lat (EPSG:4326)" in text


def test_planar_inputs_are_measured_in_their_own_units_and_the_prompt_says_so(tmp_path):
    """An SRID 0 input declared planar in feet: no to_crs asked for, its units in the prompt."""
    import shapely

    from geoask.sql.executor import QueryResult, ResultColumn
    from geoask.sql.export import export_result

    parcel = shapely.box(985000, 200000, 986000, 201000)  # SRID 0
    result = QueryResult((ResultColumn("id", "integer"),
                          ResultColumn("geom", "geometry", True, "city.parcels.geom")),
                         [(1, parcel)], 10, "SELECT id, geom FROM city.parcels")
    exported = export_result(result, str(tmp_path),
                             declared_planar={"city.parcels.geom": "foot"})
    planar = InputArtifact("parcels", "/input/result.geojson", exported.preview.to_text())
    located = InputArtifact("parks", "/input/parks.geojson", "crs of geom: stored in EPSG:4326")
    records = InputArtifact("counts", "/input/counts.json", "columns: n (integer)")
    text = prompt(deps(inputs=[planar]))
    assert "crs of geom: planar coordinates in foot" in text
    assert "measure areas and distances directly in foot" in text
    assert "planar coordinates" in compute_module.INSTRUCTIONS
    measure = make_intent(operation=OperationIntent.MEASURE)
    area = tree("import json\nparcels.area")
    assert projects_for_distances(area, measure, [planar, records]) is None
    assert "projected CRS" in projects_for_distances(area, measure, [planar, located])
    assert "projected CRS" in projects_for_distances(area, measure, [records])
