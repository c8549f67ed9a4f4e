"""A large result without geometry streams as Parquet, like a large vector result as GeoParquet.

Before, such a result was read whole into memory and written as one JSON file. Now, past
``columnar_rows`` rows, each fetched batch is a Parquet row group (atomic write, the same caps),
and the preview, the evidence, the GeoPackage's tables, the maps and the compute agent's
instructions read it through the export-format registry.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from agents.compute import read_inputs_rule
from geoask.base.formats import PARQUET, Content, export_format, stored_format
from geoask.errors import QueryExecutionError
from geoask.maps.answer_features import feature_layers
from geoask.sql.executor import QueryResult, ResultColumn, ResultStream
from geoask.sql.export import export_result
from geoask.sql.stream_export import export_stream
from geoask.vocabulary.artifacts import ArtifactRef
from geoask.vocabulary.evidence import exported_records

COLUMNS = (ResultColumn("id", "integer"), ResultColumn("name", "text"),
           ResultColumn("share", "double precision"))


def rows(start: int, count: int) -> list[tuple[object, ...]]:
    """Rows ``start..start+count`` of the table."""
    return [(i, f"parcel {i}", i / 4) for i in range(start, start + count)]


def table_stream(head: list[tuple[object, ...]], batches: list[list[tuple[object, ...]]], *,
                 refuse_after: int | None = None) -> ResultStream:
    """A table stream over canned batches; ``refuse_after`` batches, then the row cap."""

    def more() -> Iterator[list[tuple[object, ...]]]:
        for number, batch in enumerate(batches):
            if refuse_after is not None and number == refuse_after:
                raise QueryExecutionError("result_too_large", "more than the row cap")
            yield batch

    result = QueryResult(COLUMNS, head, 10**6, "SELECT ...")
    return ResultStream(result, complete=not batches, batches=more(),
                        definitions=lambda _srids: {})


def test_a_large_table_streams_as_parquet_row_groups(tmp_path):
    stream = table_stream(rows(0, 100), [rows(100, 100), rows(200, 50)])
    exported = export_stream(stream, str(tmp_path), name="cand", columnar_rows=100)
    assert exported.format == PARQUET.name == "parquet"
    assert exported.data_path == str(tmp_path / "cand.parquet")
    assert not (tmp_path / "cand.json").exists()
    metadata = pq.read_metadata(exported.data_path)
    assert metadata.num_row_groups == 3  # the head and each batch, written as they came
    assert b"geo" not in (metadata.metadata or {})
    frame = pd.read_parquet(exported.data_path)
    assert list(frame["id"]) == list(range(250))
    assert frame.loc[249, "name"] == "parcel 249" and frame.loc[2, "share"] == 0.5
    assert exported.preview.row_count == 250
    assert exported.preview.geometry_column is None
    assert len(exported.preview.first_rows) == 5


def test_the_evidence_reads_the_streamed_table_through_the_registry(tmp_path):
    exported = export_stream(table_stream(rows(0, 20), [rows(20, 5)]), str(tmp_path),
                             columnar_rows=20)
    records = exported_records(exported, lambda url: Path(url).read_bytes())
    assert records[24] == {"id": 24, "name": "parcel 24", "share": 6.0}
    assert stored_format(exported.format) is PARQUET


def test_a_table_refused_past_the_row_cap_leaves_no_file(tmp_path):
    stream = table_stream(rows(0, 10), [rows(10, 10), rows(20, 10)], refuse_after=1)
    with pytest.raises(QueryExecutionError, match="row cap"):
        export_stream(stream, str(tmp_path), name="big", columnar_rows=10)
    assert list(tmp_path.iterdir()) == []


def test_a_table_that_ends_in_its_head_stays_json(tmp_path):
    exported = export_stream(table_stream(rows(0, 3), []), str(tmp_path), name="few",
                             columnar_rows=100)
    assert exported.format == "json"
    assert (tmp_path / "few.json").exists()


def test_a_whole_table_of_columnar_size_is_parquet_too(tmp_path):
    result = QueryResult(COLUMNS, rows(0, 30), 10**6, "SELECT ...")
    exported = export_result(result, str(tmp_path), name="all", columnar_rows=30)
    assert exported.format == "parquet"
    assert list(pd.read_parquet(exported.data_path)["id"]) == list(range(30))
    small = export_result(result, str(tmp_path), name="some", columnar_rows=31)
    assert small.format == "json"


def test_readers_see_a_table_parquet_as_a_table():
    assert export_format("parquet").content is Content.TABLE
    table = ArtifactRef(name="cand", url="/run/sql-1/cand.parquet", format=PARQUET.name)
    assert feature_layers([[table]]) == []  # no map layer
    assert "pandas.read_parquet" in read_inputs_rule()
