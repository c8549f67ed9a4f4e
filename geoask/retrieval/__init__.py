"""Schema pre-filtering: the semantic catalog in a vector index, retrieved per question.

Entry point: :func:`open_retriever` (chroma index + embedder chosen by settings), then
:meth:`SchemaRetriever.retrieve`. Interfaces: :class:`SchemaIndex` (chroma or in-memory).
"""

from __future__ import annotations

from geoask.retrieval.filters import RetrievalIntent
from geoask.retrieval.index import InMemorySchemaIndex, SchemaIndex
from geoask.retrieval.retriever import (
    RetrievalConfig,
    RetrievedTable,
    SchemaRetriever,
    SchemaSubset,
)
from geoask.retrieval.service import open_retriever, shared_retriever

__all__ = [
    "InMemorySchemaIndex",
    "RetrievalConfig",
    "RetrievalIntent",
    "RetrievedTable",
    "SchemaIndex",
    "SchemaRetriever",
    "SchemaSubset",
    "open_retriever",
    "shared_retriever",
]
