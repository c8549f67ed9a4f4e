"""``geoask catalog index`` and ``geoask catalog search``: build and query the schema index.

Registered on the ``geoask catalog`` sub-app by :func:`register`.
"""

from __future__ import annotations

import json

import typer

from geoask.retrieval.filters import RetrievalIntent
from geoask.retrieval.retriever import SchemaSubset


def index(
    force: bool = typer.Option(
        False, "--force", help="Rebuild even if unchanged (and re-read the column values)."),
) -> None:
    """Index the catalog into the schema index and read its value lexicon from the database.

    The index is rebuilt only when the catalog changed; the distinct values of short text
    columns (place names, categories) are read once per catalog and database, over the reader
    role, and stored with the index. An unreachable database is a warning: the index is built
    without values.
    """
    from geoask.retrieval.service import index_values, open_retriever
    from geoask.settings import get_settings

    retriever = open_retriever(ensure_index=False)
    rebuilt = retriever.ensure_index(force=force)
    n_columns = sum(len(t.columns) for t in retriever.catalog.tables)
    state = "indexed" if rebuilt else "index up to date:"
    typer.echo(
        f"{state} {len(retriever.catalog.tables)} tables, {n_columns} columns "
        f"(embedder {retriever.embedder.name}, catalog hash {retriever.content_hash[:12]})"
    )
    values = index_values(get_settings(), retriever.catalog, force=force)
    if values.warning:
        typer.echo(f"warning: {values.warning}", err=True)
    else:
        verb = "read from the database" if values.state == "read" else "up to date:"
        typer.echo(f"column values {verb} {len(values.values)} text columns with at most "
                   f"{get_settings().retrieval_value_max_distinct} distinct values")


def format_subset(subset: SchemaSubset) -> str:
    """Ranked tables with scores, joined-in tables marked, then the token count."""
    lines = []
    for rank, table in enumerate(subset.tables, start=1):
        if table.joined_in:
            lines.append(f"{rank:>2}. {table.name:<28} joined in via {table.joined_from}")
            continue
        lexical = f"  lexical: {', '.join(table.lexical_terms)}" if table.lexical_terms else ""
        lines.append(
            f"{rank:>2}. {table.name:<28} score {table.score:.3f}  (table "
            f"{table.table_similarity:.3f}, column {table.column_similarity:.3f}){lexical}"
        )
    lines.append(f"prompt text: {subset.token_count} tokens")
    return "\n".join(lines)


MAX_QUERY_CHARS = 2000


def checked_query_text(text: str) -> str:
    """The search text, stripped; raises ConfigurationError when empty, not UTF-8 or too long."""
    from geoask.errors import ConfigurationError

    stripped = text.strip()
    if not stripped:
        raise ConfigurationError("the search text is empty; give a question or subtask")
    try:
        stripped.encode("utf-8")
    except UnicodeEncodeError:
        raise ConfigurationError("the search text is not valid UTF-8") from None
    if len(stripped) > MAX_QUERY_CHARS:
        raise ConfigurationError(
            f"the search text has {len(stripped):,} characters; at most {MAX_QUERY_CHARS:,}")
    return stripped


def search(
    text: str = typer.Argument(..., help="Question or planner subtask to retrieve tables for."),
    k: int = typer.Option(8, "--k", min=1, max=8, help="Most tables to return (1-8)."),
    as_json: bool = typer.Option(False, "--json", help="Print the schema subset as JSON."),
    temporal: str | None = typer.Option(
        None, "--temporal", help="Hard filter: temporal granularity (monthly, annual, ...)."
    ),
    period: str | None = typer.Option(
        None, "--period", help="Hard filter: period needed, YYYY[-MM[-DD]] or START/END."
    ),
    show_prompt: bool = typer.Option(False, "--prompt", help="Also print the prompt text."),
) -> None:
    """Rank the catalog's tables for TEXT (joined-in tables marked)."""
    from dataclasses import replace

    from pydantic import ValidationError

    from geoask.errors import ConfigurationError
    from geoask.retrieval.service import open_retriever

    text = checked_query_text(text)
    try:
        start, _, end = (period or "").partition("/")
        intent = RetrievalIntent(
            temporal_granularity=temporal,  # type: ignore[arg-type]
            period_start=start or None, period_end=end or start or None,
        ) if (temporal or period) else None
    except ValidationError as error:
        problems = "; ".join(dict.fromkeys(str(e["msg"]) for e in error.errors()))
        raise ConfigurationError(f"invalid filter option: {problems}") from None
    retriever = open_retriever()
    retriever.config = replace(retriever.config, max_tables=k)
    subset = retriever.retrieve(text, intent)
    if as_json:
        typer.echo(json.dumps(subset.model_dump(mode="json"), indent=2))
        return
    typer.echo(format_subset(subset))
    if show_prompt:
        typer.echo("\n" + subset.prompt_text)


def register(app: typer.Typer) -> None:
    """Add ``index`` and ``search`` to the ``geoask catalog`` typer app."""
    app.command("index")(index)
    app.command("search")(search)
