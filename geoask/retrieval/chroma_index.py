"""The chromadb implementation of :class:`~geoask.retrieval.index.SchemaIndex`.

Persistent under ``<settings.home>/chroma`` by default, or a shared Chroma server when
``GEOASK_CHROMA_URL`` is set. Telemetry is off, and chroma's default embedding function (which
would download an ONNX model) is never used: every collection gets geoask's embedder and every
write and query passes precomputed vectors. One client per store and process
(:func:`chroma_client`): chromadb's own per-path system cache is not safe to fill from two
threads at once, so clients are created under a lock and shared.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np
from numpy.typing import NDArray

from geoask.embeddings.base import Embedder
from geoask.errors import ConfigurationError, IndexUnavailableError, RetrievalError
from geoask.retrieval.documents import DocumentKind, SchemaDocument
from geoask.retrieval.index import IndexHit

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

_COLLECTIONS: dict[DocumentKind, str] = {"table": "geoask_schema_tables",
                                         "column": "geoask_schema_columns"}
_CLIENTS: dict[str, Any] = {}
"""The process's chroma clients, by store (a resolved folder, or a server URL)."""
_CLIENTS_LOCK = threading.Lock()


def _embedding_function(embedder: Embedder) -> Any:
    """Wrap ``embedder`` as a chromadb ``EmbeddingFunction`` (so chroma never picks its own)."""
    from chromadb.api.types import Documents, EmbeddingFunction, Embeddings

    class GeoaskEmbeddingFunction(EmbeddingFunction[Documents]):
        def __init__(self) -> None:
            self._embedder = embedder

        def __call__(self, input: Documents) -> Embeddings:
            return list(self._embedder.embed(list(input)))

        @staticmethod
        def name() -> str:
            return "geoask"

        def get_config(self) -> dict[str, Any]:
            return {"embedder": self._embedder.name}

        @staticmethod
        def build_from_config(config: dict[str, Any]) -> GeoaskEmbeddingFunction:
            raise RetrievalError("open the geoask schema index through geoask, not chroma")

        def default_space(self) -> Any:
            return "cosine"

        def is_legacy(self) -> bool:
            return True  # not registered with chroma: nothing to rebuild from config

    return GeoaskEmbeddingFunction()


def chroma_client(home: Path, chroma_url: str | None) -> Any:
    """The process's chroma client: HTTP when ``chroma_url`` is set, else under ``home/chroma``.

    Created once per store, under a lock, then shared by every caller of the process.

    Raises:
        ConfigurationError: ``chroma_url`` is not an http(s) URL with a host.
        IndexUnavailableError: chroma could not open the store (names it and chroma's error).

    """
    if chroma_url:
        url = urlparse(chroma_url)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ConfigurationError(
                f"GEOASK_CHROMA_URL={chroma_url!r} is not an http(s) URL such as "
                "http://localhost:8000"
            )
        store = chroma_url
    else:
        path = (home / "chroma").resolve()
        path.mkdir(parents=True, exist_ok=True)
        store = str(path)
    with _CLIENTS_LOCK:
        if store not in _CLIENTS:
            try:
                _CLIENTS[store] = _new_client(store, remote=bool(chroma_url))
            except Exception as error:  # chroma raises bare errors (KeyError, ValueError...)
                raise IndexUnavailableError(
                    f"the schema index store {store} could not be opened: "
                    f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
                ) from error
        return _CLIENTS[store]


def _new_client(store: str, *, remote: bool) -> Any:
    """A new chroma client of ``store`` (a server URL when ``remote``, else a folder)."""
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    chroma_settings = ChromaSettings(anonymized_telemetry=False)
    if not remote:
        return chromadb.PersistentClient(path=store, settings=chroma_settings)
    url = urlparse(store)
    return chromadb.HttpClient(
        host=url.hostname or "",
        port=url.port or (443 if url.scheme == "https" else 8000),
        ssl=url.scheme == "https",
        settings=chroma_settings,
    )


def collection_name(kind: DocumentKind, key: str = "") -> str:
    """The chroma collection of ``kind`` documents, suffixed with ``key`` when one is given.

    >>> collection_name("table"), collection_name("column", "0123abcd")
    ('geoask_schema_tables', 'geoask_schema_columns_0123abcd')
    """
    return f"{_COLLECTIONS[kind]}_{key}" if key else _COLLECTIONS[kind]


class ChromaSchemaIndex:
    """Schema documents in two chroma collections (tables, columns), cosine space.

    The catalog content hash is kept in the table collection's metadata. With a ``key`` (the
    retriever's opener passes a prefix of the catalog's content hash) each catalog has
    collections of its own, so processes sharing one home or Chroma server with different
    catalogs (the demo's, spdata's, the scale database's) never drop each other's index.
    """

    def __init__(self, client: Any, embedder: Embedder, key: str = "") -> None:
        self._client = client
        self._embedding_function = _embedding_function(embedder)
        self._collections: dict[DocumentKind, Any] = {}
        self._key = key

    def _collection(self, kind: DocumentKind) -> Any | None:
        if kind not in self._collections:
            try:
                self._collections[kind] = self._client.get_collection(
                    collection_name(kind, self._key), embedding_function=self._embedding_function
                )
            except Exception:  # chroma raises NotFoundError / ValueError by version
                return None
        return self._collections[kind]

    def content_hash(self) -> str | None:
        """Content hash stored with the index, or None when there is no index yet."""
        collection = self._collection("table")
        if collection is None:
            return None
        value = (collection.metadata or {}).get("content_hash")
        return str(value) if value is not None else None

    def rebuild(
        self,
        documents: Sequence[SchemaDocument],
        vectors: NDArray[np.float32],
        content_hash: str,
    ) -> None:
        """Drop and recreate both collections with ``documents`` and their ``vectors``."""
        self._collections.clear()
        for kind in _COLLECTIONS:
            name = collection_name(kind, self._key)
            with contextlib.suppress(Exception):  # absent collection: nothing to delete
                self._client.delete_collection(name)
            metadata = {"hnsw:space": "cosine"}
            if kind == "table":
                metadata["content_hash"] = content_hash
            collection = self._client.create_collection(
                name, embedding_function=self._embedding_function, metadata=metadata
            )
            rows = [i for i, d in enumerate(documents) if d.kind == kind]
            if rows:
                collection.add(
                    ids=[documents[i].id for i in rows],
                    embeddings=[np.asarray(vectors[i], dtype=np.float32) for i in rows],
                    documents=[documents[i].text for i in rows],
                    metadatas=[
                        {"table": documents[i].table, "column": documents[i].column or ""}
                        for i in rows
                    ],
                )
            self._collections[kind] = collection

    def query(
        self, vectors: NDArray[np.float32], kind: DocumentKind, k: int
    ) -> list[list[IndexHit]]:
        """Top-``k`` documents of ``kind`` per query row, similarity = 1 − cosine distance.

        Raises:
            RetrievalError: there is no index yet (run ``geoask catalog index``).

        """
        collection = self._collection(kind)
        if collection is None:
            raise RetrievalError("the schema index is empty: run `geoask catalog index` first")
        queries = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
        k = min(k, collection.count())
        if k == 0:
            return [[] for _ in queries]
        result = collection.query(
            query_embeddings=list(queries), n_results=k, include=["metadatas", "distances"]
        )
        out = []
        for metas, distances in zip(result["metadatas"], result["distances"], strict=True):
            hits = []
            for meta, distance in zip(metas, distances, strict=True):
                column = str(meta.get("column") or "") or None
                hits.append(IndexHit(str(meta["table"]), column, 1.0 - float(distance)))
            out.append(hits)
        return out
