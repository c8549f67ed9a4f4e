"""The dataset manifest model (geoask/db/dataset.py) and where a dataset is loaded (urls)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from geoask.db.dataset import DatasetTable, column_types, create_table, load_dataset
from geoask.db.urls import dataset_target
from geoask.errors import ConfigurationError, DatasetError
from geoask.settings import get_settings

SPDATA = Path(__file__).resolve().parents[1] / "benchmark" / "databases" / "spdata"


def test_the_spdata_manifest_loads_with_native_srids_and_two_schemas():
    dataset = load_dataset(SPDATA)
    assert dataset.database == "spdata"
    assert dataset.schemas == ["us_census", "europe"]
    srids = {t.name: t.geometry.srid for t in dataset.tables if t.geometry}
    assert srids == {"ny8_tracts": 32618, "boston_tracts": 4267, "lux_cantons": 4326,
                     "london_cycle_docks": 4326}
    assert [t.name for t in dataset.tables if not t.primary_key] == ["ny8_leukemia"]
    assert [v.name for v in dataset.views] == ["ny8_tract_rates"]


def _manifest(tmp_path: Path, change) -> Path:
    raw = yaml.safe_load((SPDATA / "dataset.yaml").read_text())
    shutil.copytree(SPDATA / "data", tmp_path / "data")  # data files sit beside the manifest
    change(raw)
    path = tmp_path / "dataset.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def _set(*path_and_value):
    *path, value = path_and_value

    def change(raw):
        node = raw
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return change


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (_set("database", "postgres"), "database postgres is reserved"),
        (_set("database", "Sp Data"), "database: String should match pattern"),
        (_set("tables", 1, "name", "ny8_tracts"), "us_census.ny8_tracts is declared twice"),
        (_set("tables", 0, "schema", "public"), "schema public is reserved"),
        (_set("tables", 0, "geometry", "srid", -1), "tables.0.geometry.srid"),
        (_set("tables", 0, "geometry", "type", "Polygonz"), "tables.0.geometry.type"),
        (_set("tables", 0, "colour", "red"), "tables.0.colour: Extra inputs"),
        (_set("tables", 0, "file", "data/missing.parquet"),
         "table ny8_tracts: file data/missing.parquet not found"),
        (_set("tables", 0, "file", str(SPDATA / "data" / "ny8_tracts.parquet")),
         "lies outside the manifest's folder"),
        (_set("tables", 0, "file", "../elsewhere/ny8_tracts.parquet"),
         "lies outside the manifest's folder"),
        (_set("views", 0, "sql", "DELETE FROM us_census.ny8_tracts"),
         "view ny8_tract_rates: sql must be exactly one SELECT"),
        (_set("views", 0, "sql", "SELECT 1; SELECT 2"), "exactly one SELECT"),
        (_set("views", 0, "schema", "elsewhere"), "schema elsewhere has no table"),
        (_set("version", 2), "version"),
    ],
)
def test_a_bad_manifest_is_one_clear_error(tmp_path, change, message):
    with pytest.raises(DatasetError, match=r"^dataset manifest .*(is invalid|: table)") as error:
        load_dataset(_manifest(tmp_path, change))
    assert message in str(error.value)
    assert "\n" not in str(error.value)


def test_missing_and_non_yaml_manifests_are_named(tmp_path):
    with pytest.raises(DatasetError, match="does not exist"):
        load_dataset(tmp_path)
    (tmp_path / "dataset.yaml").write_text("tables: [")
    with pytest.raises(DatasetError, match="is not YAML"):
        load_dataset(tmp_path)


def _table(**extra) -> DatasetTable:
    return DatasetTable.model_validate({"name": "t", "schema": "s", "file": "t.parquet", **extra})


def test_column_types_follow_the_parquet_schema(tmp_path):
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"k": pa.array([1], pa.int32()), "x": [1.5], "n": ["a"],
                             "b": [True], "g": pa.array([b"\x01"], pa.binary())}), path)
    table = _table(primary_key=["k"], geometry={"column": "g", "type": "Point", "srid": 2263})
    types = column_types(path, table)
    assert types == [("k", "integer"), ("x", "double precision"), ("n", "text"),
                     ("b", "boolean"), ("g", "geometry(Point,2263)")]
    ddl = create_table("s_staging", table, types).as_string(None)
    assert '"k" integer NOT NULL' in ddl and '"g" geometry(Point,2263) NOT NULL' in ddl
    assert '"x" double precision,' in ddl


@pytest.mark.parametrize(
    ("columns", "table", "message"),
    [
        ({"a": [1]}, {"primary_key": ["k"]}, "has no column k"),
        ({"Name": ["x"]}, {}, "'Name' must be a lower-case identifier"),
        ({"d": pa.array([1], pa.decimal128(5, 2))}, {}, "column d has Parquet type decimal128"),
    ],
)
def test_column_types_refuse_what_they_cannot_map(tmp_path, columns, table, message):
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table(columns), path)
    with pytest.raises(DatasetError, match=message):
        column_types(path, _table(**table))


def test_an_external_server_needs_an_owner_url_to_the_dataset_database():
    settings = get_settings().model_copy(
        update={"database_url": "postgresql://reader:pw@db.example:5432/geoask"})
    with pytest.raises(ConfigurationError, match=r"pass --owner-url .* owns database spdata"):
        dataset_target(settings, "spdata")
    with pytest.raises(ConfigurationError, match="names database geoask, the manifest loads"):
        dataset_target(settings, "spdata", "postgresql://owner:pw@db.example/geoask")
    target = dataset_target(settings, "spdata", "postgresql://owner:pw@db.example/spdata")
    assert (target.reader_role, target.reader_url) == ("reader", None)


def test_the_embedded_cluster_takes_no_owner_url():
    settings = get_settings().model_copy(update={"database_url": None})
    with pytest.raises(ConfigurationError, match="only for an external server"):
        dataset_target(settings, "spdata", "postgresql://owner@x/spdata")


def test_the_embedded_clusters_own_database_is_never_a_dataset_target():
    settings = get_settings().model_copy(update={"database_url": None})
    with pytest.raises(ConfigurationError, match="is the embedded cluster's own"):
        dataset_target(settings, "geoask")
