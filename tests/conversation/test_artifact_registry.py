"""The typed artifact registry: entries from previews and script results, the JSON file, and
each pre-dispatch rule failing on the input it guards against and passing otherwise."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from geoask.catalog.model import load_catalog
from geoask.records.artifact_registry import (
    ArtifactKind,
    ArtifactRegistry,
    ColumnInfo,
    RegistryEntry,
    column_units,
    entry_from_sql,
    preview_url,
    step_entries,
)
from geoask.run.predispatch import (
    DISPATCH_RULES,
    StepInputs,
    check_inputs,
    dispatch_problems,
    features_in_export_crs,
    geometry_available,
    input_files_exist,
    input_names_distinct,
    inputs_inside_artifact_root,
    inputs_registered,
)
from geoask.vocabulary.artifacts import ArtifactRef

PREVIEW = {
    "columns": [{"name": "fips", "type": "text"}, {"name": "births_1974", "type": "integer"},
                {"name": "geom", "type": "geometry"}],
    "row_count": 10, "truncated": False, "row_cap": 1000, "first_rows": [],
    "geometry_column": "geom", "geometry_types": ["MultiPolygon"],
    "bbox_wgs84": [-84.3, 33.9, -75.5, 36.6],
    "native_crs": [{"column": "geom", "crs": "EPSG:4267"}],
}


def _entry(ref: str, url: str = "/x/cells.geojson", kind: ArtifactKind = ArtifactKind.FEATURES,
           srid: int | None = 4326, native_crs: str | None = None) -> RegistryEntry:
    return RegistryEntry(ref=ref, name=ref.rsplit(".", 1)[-1], kind=kind, url=url,
                         format="geojson", srid=srid, native_crs=native_crs, step="sql-1",
                         made_by="sql", run_id="r")


def test_an_sql_entry_records_kind_crs_bounds_count_and_catalog_units():
    artifact = ArtifactRef(name="high_sids", url="/run/sql-1/high_sids.geojson",
                           format="geojson", sql="SELECT 1")
    units = column_units([load_catalog().table("nc_counties")])
    entry = entry_from_sql(artifact, PREVIEW, step="sql-1", run_id="r1", units=units)
    assert (entry.ref, entry.kind, entry.srid, entry.native_crs) == (
        "sql-1.high_sids", ArtifactKind.FEATURES, 4326, "EPSG:4267")
    assert entry.row_count == 10 and entry.bbox_wgs84 == PREVIEW["bbox_wgs84"]
    assert entry.columns == [ColumnInfo(name="fips", type="text"),
                             ColumnInfo(name="births_1974", type="integer", unit="births")]
    assert entry.source == "SELECT 1" and entry.made_by == "sql"
    assert "stored in EPSG:4267" in entry.to_text()
    records = entry_from_sql(artifact, {**PREVIEW, "geometry_column": None, "native_crs": []},
                             step="sql-1", run_id="r1", units={})
    assert records.kind is ArtifactKind.RECORDS and records.srid is None


def test_step_entries_read_the_preview_beside_the_data_and_the_saved_script_result(tmp_path):
    data = tmp_path / "sql-1" / "high_sids.geojson"
    data.parent.mkdir()
    data.write_text("{}")
    (tmp_path / "sql-1" / "high_sids.preview.json").write_text(json.dumps(PREVIEW))
    result = tmp_path / "python-1" / "result.json"
    result.parent.mkdir()
    result.write_text(json.dumps({"summary": "s", "result": [{"fips": "1", "rate": 2.5}],
                                  "script": "/run/python-1/script-1.py"}))
    artifacts = [ArtifactRef(name="high_sids", url=str(data), format="geojson", sql="SELECT"),
                 ArtifactRef(name="result", url=str(result), format="json"),
                 ArtifactRef(name="plot.png", url="/run/plot.png", format="image/png")]
    entries = step_entries(lambda url: Path(url).read_text(), artifacts, step="python-1",
                           run_id="r", units={})
    assert [e.kind for e in entries] == [ArtifactKind.FEATURES, ArtifactKind.RECORDS,
                                         ArtifactKind.FILE]
    assert entries[1].row_count == 1 and entries[1].source == "/run/python-1/script-1.py"
    assert [(c.name, c.type) for c in entries[1].columns] == [("fips", "str"), ("rate", "float")]


def test_the_registry_file_round_trips_and_a_rerun_step_replaces_its_entries(tmp_path):
    url = str(tmp_path / "registry.json")
    registry = ArtifactRegistry(url, conversation="wake", turn=2)
    registry.add([_entry("sql-1.cells")])
    registry.add([_entry("sql-1.cells", url="/y/cells.geojson"), _entry("sql-1.wake")])
    loaded = ArtifactRegistry.load(url)
    assert [(e.ref, e.url) for e in loaded] == [("sql-1.cells", "/y/cells.geojson"),
                                                ("sql-1.wake", "/x/cells.geojson")]
    assert {(e.conversation, e.turn) for e in loaded} == {("wake", 2)}
    assert ArtifactRegistry.load(str(tmp_path / "none.json")) == []


GOOD = StepInputs("python-1", ("turn-1.sql-1.cells",), {"turn-1.sql-1.cells":
                  _entry("turn-1.sql-1.cells")}, frozenset({"turn-1.sql-1.cells"}), True)


@pytest.mark.parametrize(("rule", "bad"), [
    (inputs_registered, StepInputs("python-1", ("turn-1.sql-1.x",), {}, frozenset())),
    (input_files_exist, StepInputs("python-1", GOOD.refs, GOOD.entries, frozenset())),
    (inputs_inside_artifact_root, StepInputs("python-1", GOOD.refs, GOOD.entries, GOOD.existing,
                                             outside=frozenset(GOOD.refs))),
    (features_in_export_crs, StepInputs("python-1", GOOD.refs, {
        "turn-1.sql-1.cells": _entry("turn-1.sql-1.cells", srid=2263)}, GOOD.existing)),
    (geometry_available, StepInputs("python-1", GOOD.refs, {
        "turn-1.sql-1.cells": _entry("turn-1.sql-1.cells", kind=ArtifactKind.RECORDS,
                                     srid=None)}, GOOD.existing, geometry_needed=True)),
    (input_names_distinct, StepInputs("python-1", ("turn-1.sql-1.cells", "turn-2.sql-1.cells"),
                                      {"turn-1.sql-1.cells": _entry("turn-1.sql-1.cells"),
                                       "turn-2.sql-1.cells": _entry("turn-2.sql-1.cells")},
                                      frozenset({"turn-1.sql-1.cells", "turn-2.sql-1.cells"}))),
])
def test_each_dispatch_rule_fails_on_its_problem_and_passes_good_inputs(rule, bad):
    assert rule in DISPATCH_RULES
    assert rule(GOOD) is None
    message = rule(bad)
    assert message is not None
    assert message in dispatch_problems(bad)


def test_planar_features_pass_the_export_crs_rule_and_say_so_but_other_non_wgs84_do_not():
    planar = _entry("sql-1.trees", srid=None, native_crs="planar")
    inputs = StepInputs("python-1", ("sql-1.trees",), {"sql-1.trees": planar},
                        frozenset({"sql-1.trees"}))
    assert planar.planar and features_in_export_crs(inputs) is None
    assert "planar (own coordinates, not lon/lat)" in planar.to_text()
    unknown = _entry("sql-1.trees", srid=None, native_crs=None)  # no declaration: refused
    assert not unknown.planar
    assert features_in_export_crs(StepInputs("python-1", ("sql-1.trees",),
                                             {"sql-1.trees": unknown},
                                             frozenset({"sql-1.trees"}))) is not None


def test_within_one_run_the_geometry_rule_leaves_records_inputs_alone():
    records = _entry("sql-1.county_1990", kind=ArtifactKind.RECORDS, srid=None)
    inputs = StepInputs("python-1", ("sql-1.county_1990",), {"sql-1.county_1990": records},
                        frozenset({"sql-1.county_1990"}), geometry_needed=True)
    assert dispatch_problems(inputs) == []


def test_check_inputs_asks_the_filesystem_and_requires_reused_refs_registered(tmp_path):
    present = tmp_path / "cells.geojson"
    present.write_text("{}")
    entries = {"turn-1.sql-1.cells": _entry("turn-1.sql-1.cells", url=str(present)),
               "turn-1.sql-1.gone": _entry("turn-1.sql-1.gone", url=str(tmp_path / "g.json"))}
    assert check_inputs("python-1", ["turn-1.sql-1.cells", "sql-1.unregistered"], entries) == []
    assert "no longer exist" in check_inputs("python-1", ["turn-1.sql-1.gone"], entries)[0]
    assert "turn-3.sql-1.x" in check_inputs("python-1", ["turn-3.sql-1.x"], entries)[0]


def test_a_reused_file_outside_the_artifact_root_is_not_used(tmp_path):
    # Attack pass: an edited conversation file pointed a turn at a forged copy elsewhere.
    root = tmp_path / "artifacts"
    inside = root / "run1" / "sql-1" / "cells.geojson"
    inside.parent.mkdir(parents=True)
    inside.write_text("{}")
    forged = tmp_path / "elsewhere" / "cells.geojson"
    forged.parent.mkdir()
    forged.write_text("{}")
    (root / "link").symlink_to(tmp_path / "elsewhere")
    for url, ok in ((inside, True), (forged, False), ("/etc/passwd", False),
                    (root / "link" / "cells.geojson", False),
                    (root / "run1" / ".." / ".." / "elsewhere" / "cells.geojson", False)):
        entries = {"turn-1.sql-1.cells": _entry("turn-1.sql-1.cells", url=str(url))}
        problems = check_inputs("python-1", ["turn-1.sql-1.cells"], entries,
                                roots=[str(root), str(tmp_path / "sandbox")])
        assert (problems == []) is ok, (url, problems)
        assert ok or "outside the artifact root" in problems[0]


def test_preview_url_sits_beside_the_data_file():
    assert preview_url("s3://b/run/sql-1/a.json") == "s3://b/run/sql-1/a.preview.json"


def test_a_geoparquet_export_is_registered_as_features_and_reused_with_its_geometry(tmp_path):
    import shapely

    from geoask.sql.executor import QueryResult, ResultColumn
    from geoask.sql.export import export_result

    rows = [(i, shapely.set_srid(shapely.Point(500_000 + i, 4_500_000), 32618))
            for i in range(30)]
    result = QueryResult((ResultColumn("id", "integer"),
                          ResultColumn("geom", "geometry", True, "demo.sites.geom")),
                         rows, 100, "SELECT id, geom FROM demo.sites")
    exported = export_result(result, str(tmp_path / "run1" / "sql-1"), name="sites",
                             columnar_rows=10)
    artifact = ArtifactRef(name="sites", url=exported.data_path, format=exported.format,
                           sql="SELECT id, geom FROM demo.sites")
    [entry] = step_entries(lambda url: Path(url).read_text(), [artifact], step="sql-1",
                           run_id="run1", units={})
    assert (entry.kind, entry.format, entry.srid, entry.native_crs, entry.row_count) == (
        ArtifactKind.FEATURES, "geoparquet", 4326, "EPSG:32618", 30)
    assert entry.url.endswith("sites.parquet")
    assert "geometry" in entry.to_artifact_ref().fields
    reused = {"turn-1.sql-1.sites": entry.model_copy(update={"ref": "turn-1.sql-1.sites"})}
    assert check_inputs("python-1", ["turn-1.sql-1.sites"], reused, geometry_needed=True,
                        roots=[str(tmp_path)]) == []
