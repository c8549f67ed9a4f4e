"""The :class:`SchemaIndex` protocol and its in-memory implementation (for tests and fakes).

A schema index stores the embedded :class:`SchemaDocument` s of one catalog together with the
catalog's content hash, and answers nearest-neighbour queries by cosine similarity.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from geoask.retrieval.documents import DocumentKind, SchemaDocument


@dataclass(frozen=True)
class IndexHit:
    """A document found by a query; ``similarity`` is cosine similarity in [-1, 1]."""

    table: str
    column: str | None
    similarity: float


@runtime_checkable
class SchemaIndex(Protocol):
    """Storage of embedded schema documents, rebuilt when the catalog's content hash changes."""

    def content_hash(self) -> str | None:
        """Content hash of the indexed catalog, or None if the index is empty."""
        ...

    def rebuild(
        self,
        documents: Sequence[SchemaDocument],
        vectors: NDArray[np.float32],
        content_hash: str,
    ) -> None:
        """Replace the whole index; ``vectors`` has one unit-length row per document."""
        ...

    def query(
        self, vectors: NDArray[np.float32], kind: DocumentKind, k: int
    ) -> list[list[IndexHit]]:
        """The ``k`` documents of ``kind`` most similar to each row of ``vectors``, best first.

        ``vectors`` has shape (m, dims); the result has one list of hits per row.
        """
        ...


class InMemorySchemaIndex:
    """A :class:`SchemaIndex` in numpy arrays: exact cosine search, nothing persisted."""

    def __init__(self) -> None:
        self._hash: str | None = None
        self._docs: dict[DocumentKind, list[SchemaDocument]] = {"table": [], "column": []}
        self._vectors: dict[DocumentKind, NDArray[np.float32]] = {
            "table": np.zeros((0, 0), np.float32),
            "column": np.zeros((0, 0), np.float32),
        }
        self.rebuild_count = 0

    def content_hash(self) -> str | None:
        """Content hash given to the last :meth:`rebuild`, or None."""
        return self._hash

    def rebuild(
        self,
        documents: Sequence[SchemaDocument],
        vectors: NDArray[np.float32],
        content_hash: str,
    ) -> None:
        """Store ``documents`` and their ``vectors`` (shape (len(documents), dims))."""
        if len(documents) != len(vectors):
            raise ValueError("one vector per document is required")
        for kind in ("table", "column"):
            rows = [i for i, d in enumerate(documents) if d.kind == kind]
            self._docs[kind] = [documents[i] for i in rows]
            self._vectors[kind] = np.asarray(vectors, dtype=np.float32)[rows]
        self._hash = content_hash
        self.rebuild_count += 1

    def query(
        self, vectors: NDArray[np.float32], kind: DocumentKind, k: int
    ) -> list[list[IndexHit]]:
        """Exact top-``k`` by cosine similarity per query row (all rows unit length)."""
        docs = self._docs[kind]
        queries = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
        if not docs:
            return [[] for _ in queries]
        out = []
        for sims in queries @ self._vectors[kind].T:
            order = np.argsort(-sims, kind="stable")[:k]
            out.append([IndexHit(docs[i].table, docs[i].column, float(sims[i])) for i in order])
        return out
