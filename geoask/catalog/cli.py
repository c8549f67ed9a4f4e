"""``geoask catalog``: show the semantic catalog of the demo database."""

from __future__ import annotations

import json

import typer

from geoask.catalog.ddl import column_comment
from geoask.catalog.model import Catalog, Table, load_catalog
from geoask.retrieval.cli import register as register_retrieval_commands
from geoask.settings import get_settings

app = typer.Typer(help="Show and search the semantic catalog.", no_args_is_help=True)
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
