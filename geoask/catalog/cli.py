"""``geoask catalog``: show, search, draft and check the semantic catalog."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from geoask.catalog.ddl import column_comment
from geoask.catalog.model import Catalog, Table, load_catalog
from geoask.errors import CatalogError
from geoask.retrieval.cli import register as register_retrieval_commands
from geoask.settings import Settings, get_settings

app = typer.Typer(help="Show, search, draft and check the semantic catalog.",
                  no_args_is_help=True)
register_retrieval_commands(app)  # `geoask catalog index` and `geoask catalog search`


def _rows(table: Table) -> str:
    rows = table.expected_rows
    return f"{rows:,}" if isinstance(rows, int) else rows


def describe(table: Table) -> str:
    """Human-readable description of one table: theme, granularity, keys, columns."""
    coverage = (f"{table.temporal_coverage.start} to {table.temporal_coverage.end}"
                if table.temporal_coverage else "none")
    lines = [
        f"{table.name} — {table.title} ({_rows(table)} rows)",
        f"  {table.theme}",
        f"  spatial granularity: {table.spatial_granularity}; temporal: "
        f"{table.temporal_granularity}, coverage {coverage}",
        f"  primary key: {', '.join(table.primary_key)}",
    ]
    lines += [f"  foreign key: ({', '.join(fk.columns)}) -> {fk.ref_table}"
              f"({', '.join(fk.ref_columns)})" for fk in table.foreign_keys]
    lines += [f"  - {c.name} {c.type}: {column_comment(c)}" for c in table.columns]
    lines.append(f"  source: {table.source}")
    return "\n".join(lines)


def describe_catalog(catalog: Catalog) -> str:
    """Human-readable summary of every table and join path."""
    parts = [f"schema {catalog.schema_name}: {catalog.description}", ""]
    parts += [describe(t) + "\n" for t in catalog.tables]
    parts.append("join paths:")
    parts += [f"  {j.left} ~ {j.right} ({j.kind}): {j.description}" for j in catalog.join_paths]
    return "\n".join(parts)


@app.command()
def show(
    table: str | None = typer.Argument(None, help="Show only this table."),
    as_json: bool = typer.Option(False, "--json", help="Print the catalog entry as JSON."),
) -> None:
    """Print the catalog, or one table of it."""
    catalog = load_catalog(get_settings().catalog_path)
    if table is None:
        if as_json:
            typer.echo(catalog.model_dump_json(indent=2, by_alias=True))
        else:
            typer.echo(describe_catalog(catalog))
        return
    entry = catalog.table(table)
    typer.echo(json.dumps(entry.model_dump(mode="json"), indent=2) if as_json else describe(entry))


def _url(database_url: str | None, settings: Settings) -> str:
    from geoask.db.urls import reader_url

    return database_url or reader_url(settings)


def _label(url: str) -> str:
    """``dbname on host:port`` of a libpq URL, without user or password."""
    from psycopg.conninfo import conninfo_to_dict

    try:
        info = conninfo_to_dict(url)
    except Exception:  # only for a header line
        return "(unparsed URL)"
    host, port = info.get("host", "localhost"), info.get("port", 5432)
    return f"{info.get('dbname', '?')} on {host}:{port}"


@app.command()
def draft(
    out: Annotated[Path, typer.Option("--out", help="Catalog YAML to write (atomically).")],
    database_url: Annotated[str | None, typer.Option(
        "--database-url", help="libpq URL (default: the configured reader URL).")] = None,
    schema: Annotated[list[str] | None, typer.Option(
        "--schema", help="Schema to draft; repeatable (default: every schema with tables).")
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite --out if it exists.")] = False,
) -> None:
    """Draft a catalog YAML from any PostgreSQL/PostGIS database; TODOs mark what to fill in."""
    from geoask.catalog.draft import draft_catalog, header_text, to_yaml, write_atomically

    if out.exists() and not force:
        raise CatalogError(f"{out} exists; pass --force to overwrite it")
    settings = get_settings()
    url = _url(database_url, settings)
    catalog = draft_catalog(url, schema or None, timeout_s=settings.statement_timeout_s)
    write_atomically(out, to_yaml(catalog, header_text(catalog, _label(url))), force=force)
    columns = sum(len(t.columns) for t in catalog.tables)
    typer.echo(f"wrote {out}: {len(catalog.tables)} tables, {columns} columns, "
               f"{len(catalog.join_paths)} join paths, {len(catalog.todos())} TODOs "
               "(list them with `geoask catalog check --catalog FILE`)")


@app.command()
def check(
    catalog_file: Annotated[Path | None, typer.Option(
        "--catalog", help="Catalog YAML (default: GEOASK_CATALOG_PATH).")] = None,
    database_url: Annotated[str | None, typer.Option(
        "--database-url", help="libpq URL (default: the configured reader URL).")] = None,
) -> None:
    """Check the live database against a catalog; one line per problem, exit code 1 if any."""
    from geoask.catalog.check import check_catalog

    settings = get_settings()
    path = catalog_file or settings.catalog_path
    catalog = load_catalog(path)
    problems = check_catalog(_url(database_url, settings), catalog,
                             timeout_s=settings.statement_timeout_s)
    for line in problems:
        typer.echo(line)
    if problems:
        raise typer.Exit(1)
    typer.echo(f"{path}: {len(catalog.tables)} tables match the database; no TODOs")
