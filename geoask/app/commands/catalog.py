"""``geoask catalog``: show, search, draft and check the semantic catalog."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from geoask.app.commands.retrieval import register as register_retrieval_commands
from geoask.base.result_view import quoted_name
from geoask.catalog.ddl import column_comment
from geoask.catalog.describe import DescriptionOutput, DescriptionRefusal
from geoask.catalog.model import Catalog, JoinPath, Table, load_catalog
from geoask.errors import CatalogError
from geoask.settings import Settings, get_settings

if TYPE_CHECKING:
    from geoask.models.llm import ModelProvider
    from geoask.records.run_artifacts import ArtifactStore

app = typer.Typer(help="Show, search, draft and check the semantic catalog.",
                  no_args_is_help=True)
register_retrieval_commands(app)  # `geoask catalog index` and `geoask catalog search`


def _rows(table: Table) -> str:
    rows = table.expected_rows
    if not isinstance(rows, int):
        return rows
    return f"about {rows:,} (planner estimate)" if table.rows_estimated else f"{rows:,}"


def describe(table: Table) -> str:
    """Human-readable description of one table: theme, granularity, keys, labels, columns."""
    coverage = (f"{table.temporal_coverage.start} to {table.temporal_coverage.end}"
                if table.temporal_coverage else "none")
    lines = [
        f"{quoted_name(table.name)} — {table.title} ({_rows(table)} rows)",
        f"  {table.theme}",
        f"  spatial granularity: {table.spatial_granularity}; temporal: "
        f"{table.temporal_granularity}, coverage {coverage}",
        f"  primary key: {', '.join(table.primary_key)}",
    ]
    lines += [f"  unique: {', '.join(key)}" for key in table.unique]
    if table.labels is not None:  # what names the codes an answer carries (geoask ask's table)
        lines.append(f"  labels: {quoted_name(table.labels.name)} names "
                     f"{', '.join(quoted_name(code) for code in table.labels.codes)}")
    lines += [f"  foreign key: ({', '.join(fk.columns)}) -> {fk.ref_table}"
              f"({', '.join(fk.ref_columns)})" for fk in table.foreign_keys]
    lines += [f"  - {quoted_name(c.name)} {c.type}: {column_comment(c)}" for c in table.columns]
    lines.append(f"  source: {table.source}")
    return "\n".join(lines)


def _join_kind(catalog: Catalog, path: JoinPath) -> str:
    """``kind`` and, for key and attribute joins with known keys, the cardinality."""
    cardinality = catalog.join_cardinality(path)
    return path.kind if cardinality is None else f"{path.kind}, {cardinality.replace('_', '-')}"


def describe_catalog(catalog: Catalog) -> str:
    """Human-readable summary of every table and join path."""
    parts = [f"schema {catalog.schema_name}: {catalog.description}", ""]
    parts += [describe(t) + "\n" for t in catalog.tables]
    parts.append("join paths:")
    parts += [f"  {j.left} ~ {j.right} ({_join_kind(catalog, j)}): {j.description}"
              for j in catalog.join_paths]
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
    sample_budget: Annotated[float | None, typer.Option(
        "--sample-budget", min=0.1, help="Seconds the statistics of one table or view may take "
        "(default: GEOASK_CATALOG_SAMPLE_BUDGET_S); a slower one is noted in the draft.")
    ] = None,
    describe: Annotated[bool, typer.Option(
        "--describe", help="Ask the catalog agent (GEOASK_MODEL_CATALOG or GEOASK_MODEL) for "
        "titles, themes and column meanings; units only where the name or comment states them."
    )] = False,
) -> None:
    """Draft a catalog YAML from any PostgreSQL/PostGIS database; TODOs mark what to fill in."""
    from geoask.catalog.draft import draft_catalog, header_text, to_yaml, write_atomically

    if out.exists() and not force:
        raise CatalogError(f"{out} exists; pass --force to overwrite it")
    settings = get_settings()
    describer = _describer(settings) if describe else None  # no model: exit 2 before any work
    url = _url(database_url, settings)
    catalog = draft_catalog(url, schema or None, timeout_s=settings.statement_timeout_s,
                            sample_budget_s=sample_budget or settings.catalog_sample_budget_s)
    header = ""
    if describer is not None:
        catalog, header = describer.describe(catalog, url)
    write_atomically(out, to_yaml(catalog, header_text(catalog, _label(url)) + header),
                     force=force)
    columns = sum(len(t.columns) for t in catalog.tables)
    typer.echo(f"wrote {out}: {len(catalog.tables)} tables, {columns} columns, "
               f"{len(catalog.join_paths)} join paths, {len(catalog.todos())} TODOs "
               "(list them with `geoask catalog check --catalog FILE`)")


class _AgentDescriber:
    """The catalog agent on the configured model (``--describe``), one call per table.

    Each call goes through :func:`tasks.agent_calls.call_agent`, as every agent call of a
    question does: its transcript goes to ``calls/<n>-catalog.json`` of a run folder of its own
    under the artifact root (``store``; None keeps them in memory), so ``geoask runs show`` and
    a ``recorded:`` model read it; tokens are summed from the recorded calls.
    """

    def __init__(self, settings: Settings, models: ModelProvider,
                 store: ArtifactStore | None = None) -> None:
        from geoask.records.execution_log import ExecutionRecorder

        self.settings, self.models, self.store = settings, models, store
        run_id = store.folder.rsplit("/", 1)[-1] if store is not None else "catalog-describe"
        self.recorder = ExecutionRecorder(run_id, "catalog draft --describe", "catalog",
                                          store=store, secrets=settings.secret_values())

    def __call__(self, table: Table, facts: str) -> DescriptionOutput:
        from agents.catalog import CatalogDeps, catalog_agent, prompt
        from geoask.errors import AgentOutputError
        from tasks.agent_calls import call_agent

        deps = CatalogDeps(table=table, facts=facts)
        try:
            return call_agent(catalog_agent, deps, prompt(deps), models=self.models,
                              recorder=self.recorder, stage="describe")
        except AgentOutputError as error:  # rules broken on every attempt: table left as drafted
            return DescriptionRefusal(reason=str(error))

    @property
    def prompt_tokens(self) -> int:
        """Prompt tokens of every call so far."""
        return sum(call.prompt_tokens for call in self.recorder.log.model_calls)

    @property
    def completion_tokens(self) -> int:
        """Completion tokens of every call so far."""
        return sum(call.completion_tokens for call in self.recorder.log.model_calls)

    @property
    def requests(self) -> int:
        """Model requests of every call so far."""
        return sum(call.requests for call in self.recorder.log.model_calls)

    def describe(self, catalog: Catalog, url: str) -> tuple[Catalog, str]:
        """The described catalog and header lines; prints what was kept and the tokens used."""
        from geoask.catalog.describe import describe_catalog, sample_values

        limit = self.settings.catalog_describe_values
        samples = sample_values(url, catalog, limit, self.settings.statement_timeout_s)
        report = describe_catalog(catalog, self, samples, limit)
        for note in report.notes:
            typer.echo(note)
        for name, reason in report.refused.items():
            typer.echo(f"{quoted_name(name)}: not described ({reason})")
        typer.echo(f"catalog agent: {len(report.described)} of {len(catalog.tables)} tables "
                   f"described in {self.requests} model requests, {self.prompt_tokens:,} prompt "
                   f"+ {self.completion_tokens:,} completion tokens")
        header = (f"# Titles, themes and column meanings of {len(report.described)} tables were "
                  "written by the catalog agent\n# from names, comments and sampled values; "
                  "review them. Units only where a name or comment states them.\n")
        if self.store is not None:
            typer.echo(f"model calls: {self.store.folder} (geoask runs show "
                       f"{self.recorder.log.run_id} --calls)")
        return report.catalog, header


def _describer(settings: Settings) -> _AgentDescriber:
    """The catalog agent's describer; exits 2 with one line when no usable model is set."""
    from geoask.errors import ConfigurationError
    from geoask.models.llm import model_name_for
    from geoask.models.reference import REFERENCE_MODELS
    from geoask.records.run_artifacts import RunArtifacts
    from geoask.run.composition import model_provider

    try:
        if model_name_for("catalog", settings) in REFERENCE_MODELS:
            raise ConfigurationError(
                "--describe needs a language model, and the offline reference model only "
                "replays benchmark programs: set GEOASK_MODEL_CATALOG (or GEOASK_MODEL) to one")
        run_id = f"catalog-describe-{datetime.now(UTC):%Y%m%dT%H%M%S}"
        return _AgentDescriber(settings, model_provider(settings, roles=("catalog",)),
                               RunArtifacts(settings.artifact_root_url, run_id))
    except ConfigurationError as error:
        typer.secho(f"error: {error}", err=True, fg=typer.colors.RED)
        raise typer.Exit(2) from None


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
