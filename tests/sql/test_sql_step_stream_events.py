"""A streamed statement's failures are recorded as the stage's that failed: the fetch's refusal
past the row cap as the executor's, a raster past its caps as the export's (as unstreamed)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pytest
import shapely
from rasterio.io import MemoryFile
from rasterio.transform import from_origin

from geoask.errors import QueryExecutionError
from geoask.sql.context import GuardContext
from geoask.sql.executor import QueryResult, ResultColumn, ResultStream, StreamingSqlRunner
from geoask.sql.guard import CheckedQuery
from geoask.sql.step import run_statement

POINTS = (ResultColumn("id", "integer"), ResultColumn("geom", "geometry", True))
RASTER = (ResultColumn("r", "bytea"),)


class CannedStreamRunner:
    """A :class:`StreamingSqlRunner` over a canned head and batches (the last may refuse)."""

    def __init__(self, head: QueryResult, batches: list[list[tuple[object, ...]]],
                 refuse_at: int | None = None) -> None:
        self.head, self.batches, self.refuse_at = head, batches, refuse_at

    def run(self, checked: CheckedQuery) -> QueryResult:
        """Not used: the step streams."""
        raise AssertionError("run_statement should stream through this runner")

    def close(self) -> None:
        """Nothing is kept."""

    @contextmanager
    def stream(self, checked: CheckedQuery, head_rows: int) -> Iterator[ResultStream]:
        """The canned stream; batch ``refuse_at`` raises ``result_too_large``."""
        def more() -> Iterator[list[tuple[object, ...]]]:
            for number, batch in enumerate(self.batches):
                if number == self.refuse_at:
                    raise QueryExecutionError("result_too_large", "more than the row cap")
                yield batch

        yield ResultStream(self.head, not self.batches, more(), lambda srids: {})


def _points(start: int, count: int) -> list[tuple[object, ...]]:
    return [(i, shapely.set_srid(shapely.Point(i * 1e-3, 1.0), 4326))
            for i in range(start, start + count)]


def _tiff(width: int, height: int) -> bytes:
    with MemoryFile() as memory:
        with memory.open(driver="GTiff", width=width, height=height, count=1, dtype="uint8",
                         crs="EPSG:4326", transform=from_origin(10, 20, 1, 1)) as sink:
            sink.write(np.ones((1, height, width), "u1"))
        return bytes(memory.read())


def _run(runner: StreamingSqlRunner, tmp_path, **context: int) -> list[tuple[str, str, str]]:
    events: list[tuple[str, str, str]] = []
    with pytest.raises(QueryExecutionError) as caught:
        run_statement("SELECT 1", GuardContext(columnar_rows=10, **context), runner,
                      str(tmp_path), on_event=lambda t, s, d, ms: events.append((t, s, d)))
    assert caught.value.kind == "result_too_large"
    return events


def test_a_refusal_while_batches_are_fetched_is_the_executors(tmp_path):
    runner = CannedStreamRunner(QueryResult(POINTS, _points(0, 10), 100, "SELECT 1"),
                                [_points(10, 10), _points(20, 10)], refuse_at=1)
    events = _run(runner, tmp_path)
    failed = [(tool, detail) for tool, status, detail in events if status == "error"]
    assert failed == [("executor", "result_too_large: more than the row cap")]
    assert not list(tmp_path.iterdir())


def test_a_raster_past_its_caps_in_a_stream_is_the_exports(tmp_path):
    runner = CannedStreamRunner(QueryResult(RASTER, [(_tiff(2000, 1000),)], 100, "SELECT 1"), [])
    events = _run(runner, tmp_path, max_result_mib=1)
    failed = [(tool, detail) for tool, status, detail in events if status == "error"]
    assert len(failed) == 1 and failed[0][0] == "export"
    assert failed[0][1].startswith("export: result_too_large") and "2000 x 1000" in failed[0][1]
