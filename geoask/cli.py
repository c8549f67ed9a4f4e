"""The ``geoask`` command line.

Run ``geoask --help``. Sub-commands live next to what they drive (``geoask/db/cli.py``,
``geoask/catalog/cli.py``, ...) and are registered here. User-facing errors
(:class:`geoask.errors.GeoaskError`) are printed as one message, never as a traceback.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable

import typer

from geoask.errors import GeoaskError

app = typer.Typer(
    name="geoask",
    help="Answer questions about spatial data in PostGIS by generating, checking and running code.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _register() -> None:
    from geoask.catalog.cli import app as catalog_app
    from geoask.db.cli import app as db_app

    app.add_typer(db_app, name="db")
    app.add_typer(catalog_app, name="catalog")
    from sandbox.cli import app as sandbox_app

    app.add_typer(sandbox_app, name="sandbox")
    from geoask.sql.cli import app as sql_app

    app.add_typer(sql_app, name="sql")
    from geoask.bench.cli import app as bench_app

    app.add_typer(bench_app, name="bench")
    from geoask.ask_cli import app as ask_app

    app.add_typer(ask_app, name="ask")
    from geoask.service.cli import app as server_app

    app.add_typer(server_app, name="server")


_register()


def _one_line_console_logs() -> None:
    """Print Prefect's log records on the console without tracebacks.

    A failing stage logs its exception with the traceback; the user gets geoask's one-line
    error instead, while the Prefect run log (UI/API handlers) keeps the full traceback.
    """
    import logging

    from prefect.logging.configuration import setup_logging
    from prefect.logging.handlers import PrefectConsoleHandler

    setup_logging()
    loggers = [logging.getLogger(), *(logging.getLogger(name) for name in
                                      list(logging.root.manager.loggerDict))]
    for logger in loggers:
        for handler in getattr(logger, "handlers", []):
            if isinstance(handler, PrefectConsoleHandler) and not hasattr(handler, "_geoask"):
                handler.emit = _without_traceback(handler.emit)  # type: ignore[method-assign,assignment]
                handler._geoask = True  # type: ignore[attr-defined]


def _without_traceback(emit: Callable[[logging.LogRecord], None]
                       ) -> Callable[[logging.LogRecord], None]:
    def emit_one_line(record: logging.LogRecord) -> None:
        if record.exc_info or record.exc_text:
            record = logging.makeLogRecord({**record.__dict__, "exc_info": None,
                                            "exc_text": None})
        emit(record)

    return emit_one_line


def main() -> None:
    """Console entry point: run the app, turning geoask errors into a message and exit code."""
    _one_line_console_logs()
    try:
        app()
    except GeoaskError as error:
        typer.secho(f"error: {error}", err=True, fg=typer.colors.RED)
        sys.exit(error.exit_code)
