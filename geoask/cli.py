"""The ``geoask`` command line.

Run ``geoask --help``. Sub-commands live next to what they drive (``geoask/db/cli.py``,
``geoask/catalog/cli.py``, ...) and are registered here. User-facing errors
(:class:`geoask.errors.GeoaskError`) are printed as one message, never as a traceback.
"""

from __future__ import annotations

import sys

import typer

from geoask.console import one_line_console_logs
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


def main() -> None:
    """Console entry point: run the app, turning geoask errors into a message and exit code."""
    one_line_console_logs()
    try:
        app()
    except GeoaskError as error:
        typer.secho(f"error: {error}", err=True, fg=typer.colors.RED)
        sys.exit(error.exit_code)
