"""``geoask db``: start, stop, inspect and load the database."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated
from urllib.parse import urlsplit, urlunsplit

import typer

from geoask.catalog.model import load_catalog
from geoask.db.cluster import EmbeddedCluster
from geoask.db.status import DatabaseStatus, database_status
from geoask.db.urls import uses_external_database
from geoask.settings import get_settings

app = typer.Typer(help="Start, stop, inspect and load the PostGIS database.", no_args_is_help=True)


@app.command()
def up() -> None:
    """Start the embedded PostGIS cluster (idempotent); does nothing with GEOASK_DATABASE_URL."""
    settings = get_settings()
    if uses_external_database(settings):
        typer.echo("GEOASK_DATABASE_URL is set: using that server, nothing to start.")
        return
    cluster = EmbeddedCluster(settings)
    started = cluster.up()
    state = "started" if started else "already running"
    typer.echo(f"PostGIS {state} on 127.0.0.1:{settings.db_port} (data in {cluster.root})")


@app.command()
def down() -> None:
    """Stop the embedded cluster and the geoask Prefect server it holds (idempotent)."""
    settings = get_settings()
    if uses_external_database(settings):
        typer.echo("GEOASK_DATABASE_URL is set: the external server is not geoask's to stop.")
        return
    from geoask.service.local import stop_server

    server = stop_server(settings)  # its database lives in the cluster
    if server is not None:
        typer.echo(f"Prefect server at {server.dashboard_url} stopped.")
    stopped = EmbeddedCluster(settings).down()
    typer.echo("PostGIS stopped." if stopped else "PostGIS was not running.")


@app.command()
def status(
    as_json: bool = typer.Option(False, "--json", help="Print the status as JSON."),
) -> None:
    """Print whether the database runs, the reader role's URL and each catalog table's rows.

    Exits 1 when the database does not answer (not running, or no connection).
    """
    report = database_status(get_settings(), load_catalog(get_settings().catalog_path))
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
    else:
        _print_status(report)
    if not report.reachable:
        raise typer.Exit(1)


def _print_status(report: DatabaseStatus) -> None:
    typer.echo(f"database: {report.mode}, {'running' if report.running else 'not running'}")
    if report.reader_url:
        typer.echo(f"reader URL: {_masked(report.reader_url)}  (password: --json)")
    if report.message:
        typer.echo(report.message)
    typer.echo(f"catalog: {report.catalog}")
    if report.catalog_hint:
        typer.echo(f"  ({report.catalog_hint})")
    absent = "not loaded" if report.reachable else "unknown"
    for table, rows in report.row_counts.items():
        typer.echo(f"  {table:<28} {absent if rows is None else f'{rows:>9,} rows'}")


def _masked(url: str) -> str:
    """The URL with its password replaced by ``***``."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


@app.command()
def load(
    force: bool = typer.Option(False, "--force", help="Reload even if nothing changed."),
) -> None:
    """Load the demo data into the database (Prefect flow `load_demo_data`), verified."""
    settings = get_settings()
    if not uses_external_database(settings) and EmbeddedCluster(settings).up():
        typer.echo(f"started PostGIS on 127.0.0.1:{settings.db_port}")
    from flows.load_demo_data import load_demo_data
    from geoask.service.local import prefect_api

    with prefect_api(settings):
        summary = load_demo_data(force=force)
    verb = "loaded" if summary.changed else "unchanged (already loaded)"
    typer.echo(f"schema {summary.schema_name}: {verb}; {sum(summary.rows.values()):,} rows "
               f"in {len(summary.rows)} tables, verified")


@app.command("load-dataset")
def load_dataset(
    path: Annotated[Path, typer.Argument(
        help="A dataset.yaml manifest, or the folder holding one.")],
    force: bool = typer.Option(False, "--force", help="Reload even if nothing changed."),
    owner_url: str | None = typer.Option(
        None, "--owner-url", help="External server only: URL of a role owning the manifest's "
        "database there (embedded: created and owned by geoask_owner)."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Load a dataset manifest's GeoParquet files into its own database (flow `load_dataset`)."""
    from geoask.db.dataset import load_dataset as read_manifest

    settings = get_settings()
    read_manifest(path)  # a bad manifest fails here, before Prefect starts
    if not uses_external_database(settings) and EmbeddedCluster(settings).up():
        typer.echo(f"started PostGIS on 127.0.0.1:{settings.db_port}")
    from flows.load_dataset import load_dataset as load_flow
    from geoask.service.local import prefect_api

    with prefect_api(settings):
        summary = load_flow(path, force=force, owner_url=owner_url)
    if as_json:
        typer.echo(summary.model_dump_json(indent=2))
        return
    verb = "loaded" if summary.changed else "unchanged (already loaded)"
    typer.echo(f"database {summary.database}: {verb}; {len(summary.rows)} tables and views, "
               "verified")
    for name, rows in summary.rows.items():
        typer.echo(f"  {name:<36} {rows:>9,} rows")
    if summary.reader_url:
        typer.echo(f"reader URL: {_masked(summary.reader_url)}  (password: --json)")
