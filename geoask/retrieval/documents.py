"""Index documents built from the semantic catalog, and the catalog's content hash.

One table-level document per table (title, theme, spatial and temporal granularity, coverage)
and one column-level document per column (meaning, unit, values, abbreviations, example).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Literal

from geoask.catalog.model import Catalog, Column, Table

DOCUMENT_FORMAT_VERSION = 2
"""Bump when the document texts change, so existing indexes are rebuilt."""

DocumentKind = Literal["table", "column"]

_SENTENCE_END = re.compile(r"(?<=[.;])\s+(?=[A-Z(])")
_LIST_SEP = re.compile(r",\s+(?![^()]*\))")


@dataclass(frozen=True)
class SchemaDocument:
    """One text to embed: a table (``column`` is None) or one of its columns."""

    id: str
    kind: DocumentKind
    table: str
    column: str | None
    text: str


def coverage_text(table: Table) -> str:
    """'1929 to 2009', or 'no time dimension' for a static table."""
    if table.temporal_coverage is None:
        return "no time dimension"
    return f"{table.temporal_coverage.start} to {table.temporal_coverage.end}"


def theme_passages(theme: str) -> list[str]:
    """Split a table theme into sentences, and an 'Answers questions such as' list into items.

    Each item is one example question: a mean-pooled static embedding of a long text blurs.

    >>> theme_passages("Income by state. Answers questions such as: the richest state, growth.")
    ['Income by state.', 'the richest state', 'growth']
    """
    passages: list[str] = []
    for sentence in _SENTENCE_END.split(theme.strip()):
        head, colon, rest = sentence.partition(":")
        if colon and head.lower().startswith("answers questions"):
            passages += [q.strip(" .") for q in _LIST_SEP.split(rest) if q.strip(" .")]
        elif sentence.strip():
            passages.append(sentence.strip())
    return passages


def table_documents(table: Table) -> list[SchemaDocument]:
    """The table-level documents: a summary and one document per theme passage.

    The summary gives name, title, granularity and coverage; a table's similarity to a query is
    the best over its documents.
    """
    step = str(table.temporal_granularity)
    summary = (
        f"{table.name.replace('_', ' ')}: {table.title}. "
        f"One row per {str(table.spatial_granularity).replace('_', ' ')}"
        f"{'' if step == 'static' else ' and ' + step + ' period'}"
        f"; coverage {coverage_text(table)}."
    )
    texts = [summary, *theme_passages(table.theme)]
    return [
        SchemaDocument(id=f"t:{table.name}:{i}", kind="table", table=table.name, column=None,
                       text=text)
        for i, text in enumerate(texts)
    ]


def column_document(table: Table, column: Column) -> SchemaDocument:
    """The column-level document: meaning, unit, values, abbreviations, example."""
    parts = [f"{column.name.replace('_', ' ')} of {table.title}: {column.description}"]
    if column.unit:
        parts.append(f"Unit: {column.unit}.")
    if column.values:
        parts.append("Values: " + ", ".join(map(str, column.values[:30])) + ".")
    if column.abbreviations:
        parts.append("; ".join(f"{k} = {v}" for k, v in column.abbreviations.items()) + ".")
    if column.example:
        parts.append(f"Example: {column.example}.")
    return SchemaDocument(id=f"c:{table.name}.{column.name}", kind="column", table=table.name,
                          column=column.name, text=" ".join(parts))


def catalog_documents(catalog: Catalog) -> list[SchemaDocument]:
    """All table- and column-level documents of ``catalog``, tables first."""
    docs = [d for t in catalog.tables for d in table_documents(t)]
    docs += [column_document(t, c) for t in catalog.tables for c in t.columns]
    return docs


def catalog_content_hash(catalog: Catalog, embedder_name: str) -> str:
    """SHA-256 over the catalog's content, the embedder and the document format.

    The index is rebuilt only when this changes.
    """
    digest = hashlib.sha256()
    digest.update(f"format={DOCUMENT_FORMAT_VERSION};embedder={embedder_name};".encode())
    digest.update(catalog.model_dump_json(by_alias=True).encode())
    return digest.hexdigest()
