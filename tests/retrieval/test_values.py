import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from geoask.retrieval.values import ParquetValueSource, is_text_column


@pytest.fixture
def data_dir(tmp_path):
    pq.write_table(
        pa.table({"state_fips": ["13", "48", None], "state_name": ["Georgia", "Texas", None],
                  "state_abbr": ["GA", "TX", None], "land_area_km2": [1.0, 2.0, 3.0]}),
        tmp_path / "us_states.parquet",
    )
    pq.write_table(
        pa.table({"incident_id": list(range(5)),
                  "offense": ["arson", "fraud", "arson", "fight", "theft"]}),
        tmp_path / "city_incidents.parquet",
    )
    return tmp_path


@pytest.mark.parametrize(
    ("column_type", "expected"),
    [("text", True), ("char(2)", True), ("varchar(10)", True), ("integer", False),
     ("geometry(Point,4326)", False), ("double precision", False)],
)
def test_is_text_column(catalog, column_type, expected):
    column = catalog.table("us_states").columns[0].model_copy(update={"type": column_type})
    assert is_text_column(column) is expected


def test_reads_distinct_text_values(catalog, data_dir):
    values = ParquetValueSource(data_dir).distinct_values(catalog)
    assert values["us_states.state_name"] == ["Georgia", "Texas"]
    assert values["city_incidents.offense"] == ["arson", "fight", "fraud", "theft"]
    assert "us_states.land_area_km2" not in values  # not text
    assert not any(k.startswith("climate") for k in values)  # no file: skipped


def test_columns_with_many_values_are_left_out(catalog, data_dir):
    values = ParquetValueSource(data_dir, max_distinct=3).distinct_values(catalog)
    assert "city_incidents.offense" not in values
    assert values["us_states.state_abbr"] == ["GA", "TX"]


def test_values_are_cached_until_a_file_changes(catalog, data_dir, tmp_path):
    cache_dir = tmp_path / "cache"
    source = ParquetValueSource(data_dir, cache_dir=cache_dir)
    first = source.distinct_values(catalog)
    assert (cache_dir / "column_values.json").exists()
    assert source.distinct_values(catalog) == first
    pq.write_table(pa.table({"offense": ["burglary"]}), data_dir / "city_incidents.parquet")
    assert source.distinct_values(catalog)["city_incidents.offense"] == ["burglary"]
