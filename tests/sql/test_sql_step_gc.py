"""A statement's fetch and export run with the cyclic garbage collector paused (gc_pause).

The collector is off while the rows and the export's objects are built, back on after the
statement (also after a failure), and on only when the last of overlapping blocks ends; a
collector that was off before stays off.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest
import shapely

import geoask.sql.step as step_module
from geoask.base.gc_pause import gc_paused
from geoask.errors import QueryExecutionError
from geoask.sql.context import GuardContext
from geoask.sql.executor import QueryResult, ResultColumn, StaticSqlRunner

SQL = "SELECT id, geom FROM demo.airports"
RESULT = QueryResult((ResultColumn("id", "integer"), ResultColumn("geom", "geometry", True)),
                     [(1, shapely.set_srid(shapely.Point(1, 2), 4326))], 10, SQL)


@pytest.fixture
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_the_export_runs_with_the_collector_paused(collector_on, tmp_path, monkeypatch) -> None:
    seen: list[bool] = []
    export = step_module.export_result

    def watched(*args, **kwargs):
        seen.append(gc.isenabled())
        return export(*args, **kwargs)

    monkeypatch.setattr(step_module, "export_result", watched)
    run = step_module.run_statement(SQL, GuardContext(), StaticSqlRunner({SQL: RESULT}),
                                    str(tmp_path))
    assert run.exported.format == "geojson"
    assert seen == [False]
    assert gc.isenabled()


def test_the_collector_is_back_on_after_a_failed_statement(collector_on, tmp_path) -> None:
    failing = StaticSqlRunner({SQL: QueryExecutionError("other", "boom")})
    with pytest.raises(QueryExecutionError):
        step_module.run_statement(SQL, GuardContext(), failing, str(tmp_path))
    assert gc.isenabled()


def test_overlapping_blocks_turn_it_on_when_the_last_ends(collector_on) -> None:
    entered, release = threading.Event(), threading.Event()

    def other() -> None:
        with gc_paused():
            entered.set()
            release.wait(10)

    thread = threading.Thread(target=other)
    thread.start()
    entered.wait(10)
    with gc_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()  # the other thread's block still runs
    release.set()
    thread.join(10)
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off() -> None:
    was = gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        if was:
            gc.enable()
