"""One SQL statement of a step: guard -> read-only execution -> export, the same for every caller.

The question flow's SQL task, the benchmark's program runner and ``geoask sql run`` all run a
statement through :func:`run_statement`; each records the events it cares about through
``on_event`` (the flow's execution log) and maps the errors to its own outcome.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

from geoask.errors import CrsError, GeoaskError, QueryExecutionError, QueryRejectedError
from geoask.sql.context import GuardContext
from geoask.sql.executor import QueryResult, SqlRunner, StreamingSqlRunner
from geoask.sql.export import ExportedResult, export_result
from geoask.sql.guard import CheckedQuery, check_sql
from geoask.sql.stream_export import export_stream

ToolEvent = Callable[[str, str, str, float], None]
"""``(tool, status, detail, milliseconds)``: tool is guard, executor or export (0.0: untimed)."""


@dataclass(frozen=True)
class StatementRun:
    """A statement that passed the guard, ran and was exported.

    Attributes:
        name: the statement's name (the exported file's stem).
        checked: what the guard accepted and what ran (``checked.sql``).
        result: every row (a result past the row cap is refused by the executor); for a
            result streamed to GeoParquet, its columns only (the rows are in the file).
        exported: where the GeoJSON/JSON file and its preview were written.
        milliseconds: time spent executing and fetching.

    """

    name: str
    checked: CheckedQuery
    result: QueryResult
    exported: ExportedResult
    milliseconds: float


def run_statement(
    sql: str,
    context: GuardContext,
    runner: SqlRunner,
    out_dir: str,
    *,
    name: str = "result",
    preview_rows: int = 5,
    on_event: ToolEvent | None = None,
) -> StatementRun:
    """Check ``sql``, run it read-only and export the result into ``out_dir``.

    Args:
        sql: the submitted statement (executed as submitted, never regenerated).
        context: the guard's policy, contract, row cap and catalog names; its
            ``declared_srids`` and ``declared_planar`` resolve geometry values with SRID 0 in
            the export, its ``raster_bands`` describe a raster's bands in the preview, its
            ``columnar_rows`` sends a large vector result out as GeoParquet.
        runner: executes the checked statement (``PostgresSqlRunner`` as the reader role).
        out_dir: local folder or fsspec URL receiving ``<name>.geojson|parquet|json|tif`` and
            a preview.
        name: file stem of the export.
        preview_rows: rows kept in the preview.
        on_event: called for each stage's outcome (see :data:`ToolEvent`).

    Raises:
        QueryRejectedError: a guard rule failed.
        QueryExecutionError: the database refused or failed the statement.
        DatabaseError: the database cannot be reached.
        CrsError: a geometry's CRS cannot be told (SRID 0 and none declared in the
            catalog) - the message names the catalog field to set.
        ArtifactWriteError: the export could not be written.

    A raster past its caps (``context.max_result_mib``) is a ``QueryExecutionError`` of kind
    ``result_too_large``, like a result past the row cap: a step failure, never a crash.

    """
    record = on_event or _ignore
    try:
        checked = check_sql(sql, context)
    except QueryRejectedError as error:
        record("guard", "rejected", str(error), 0.0)
        raise
    record("guard", "ok", name, 0.0)
    options: dict[str, Any] = {"name": name, "preview_rows": preview_rows,
               "declared_srids": context.declared_srids,
               "declared_planar": context.declared_planar, "raster_bands": context.raster_bands,
               "columnar_rows": context.columnar_rows,
               "max_result_mib": context.max_result_mib}
    if context.columnar_rows is not None and isinstance(runner, StreamingSqlRunner):
        return _run_streamed(checked, runner, out_dir, options, record)
    begin = time.perf_counter()
    try:
        result = runner.run(checked)
    except QueryExecutionError as error:
        record("executor", "error", str(error), _ms_since(begin))
        raise
    milliseconds = _ms_since(begin)
    record("executor", "ok", f"{name}: {result.row_count} rows", milliseconds)
    with _export_events(record):
        exported = export_result(result, out_dir, **options)
    record("export", "ok", exported.data_path, 0.0)
    return StatementRun(name, checked, result, exported, milliseconds)


def _run_streamed(checked: CheckedQuery, runner: StreamingSqlRunner, out_dir: str,
                  options: dict[str, Any], record: ToolEvent) -> StatementRun:
    """Execute and export together: a large vector result is written as it is fetched.

    The executor's time is that of the first ``columnar_rows`` rows; the rest is the export's.
    A refusal while the later batches are fetched is recorded as the executor's; any other
    failure of the export (a CRS, a raster past its caps) as the export's.
    """
    begin = time.perf_counter()
    exporting = False
    fetch_failures: list[BaseException] = []
    try:
        with runner.stream(checked, options["columnar_rows"]) as stream:
            milliseconds = _ms_since(begin)
            record("executor", "ok", f"{options['name']}: {stream.head.row_count}"
                   f"{'' if stream.complete else '+'} rows", milliseconds)
            exporting = True
            watched = replace(stream, batches=_watched(stream.batches, fetch_failures))
            with _export_events(record, passing=fetch_failures):
                exported = export_stream(watched, out_dir, **options)
    except QueryExecutionError as error:
        if not exporting or any(error is failure for failure in fetch_failures):
            record("executor", "error", str(error), _ms_since(begin))
        raise
    record("export", "ok", exported.data_path, 0.0)
    result = stream.head if stream.complete else replace(stream.head, rows=[])
    return StatementRun(options["name"], checked, result, exported, milliseconds)


def _watched(batches: Iterator[list[tuple[Any, ...]]], failures: list[BaseException]
             ) -> Iterator[list[tuple[Any, ...]]]:
    """``batches``, keeping the error that stopped their fetch in ``failures``."""
    try:
        yield from batches
    except GeoaskError as error:
        failures.append(error)
        raise


@contextmanager
def _export_events(record: ToolEvent, passing: Sequence[BaseException] = ()) -> Iterator[None]:
    """Record an export's failure (``crs: ...`` or ``export: ...``) and let it pass on.

    The errors in ``passing`` (a fetch's, surfacing inside a streamed export) pass unrecorded.
    """
    try:
        yield
    except GeoaskError as error:
        if not any(error is other for other in passing):
            record("export", "error", f"{'crs' if isinstance(error, CrsError) else 'export'}: "
                   f"{error}", 0.0)
        raise


def _ms_since(begin: float) -> float:
    return (time.perf_counter() - begin) * 1000


def _ignore(tool: str, status: str, detail: str, milliseconds: float) -> None:
    """Default ``on_event``: record nothing."""
