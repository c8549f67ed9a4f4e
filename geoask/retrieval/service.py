"""Wiring: the retriever over the chroma index with the embedder chosen by settings."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import lru_cache

import psycopg

from geoask.catalog.model import Catalog, load_catalog
from geoask.db.urls import reader_url
from geoask.embeddings.base import get_embedder
from geoask.errors import GeoaskError
from geoask.retrieval.chroma_index import ChromaSchemaIndex, chroma_client
from geoask.retrieval.documents import catalog_content_hash
from geoask.retrieval.lexical import build_lexicon
from geoask.retrieval.retriever import RetrievalConfig, SchemaRetriever
from geoask.retrieval.values import (
    ColumnValues,
    DatabaseValueSource,
    ValueStore,
    database_fingerprint,
)
from geoask.settings import Settings, get_settings

logger = logging.getLogger(__name__)

INDEX_KEY_CHARS = 16
"""Hex digits of the catalog's content hash naming its chroma collections (64 bits)."""


@dataclass(frozen=True)
class IndexedValues:
    """The value lexicon of one catalog and database, and how it was obtained.

    ``state`` is ``stored`` (read from the store), ``read`` (read from the database and stored
    now) or ``unavailable`` (no values; ``warning`` says why and what to do).
    """

    values: ColumnValues
    state: str
    warning: str | None = None


def _database(settings: Settings) -> tuple[str, str] | str:
    """(reader URL, fingerprint), or the reason there is none."""
    try:
        url = reader_url(settings)
        return url, database_fingerprint(url)
    except (GeoaskError, psycopg.Error) as error:
        return str(error)


def index_values(settings: Settings, catalog: Catalog, *, force: bool = False,
                 stored_only: bool = False, store: ValueStore | None = None) -> IndexedValues:
    """The distinct values of ``catalog``'s short text columns (the lexicon's place names).

    Read from ``store`` (default: :class:`ValueStore` under ``<home>/retrieval``, keyed by
    catalog and database); when missing (or ``force``) and not ``stored_only``, read from the
    database over the reader role (:class:`DatabaseValueSource`, bounded by
    ``GEOASK_RETRIEVAL_VALUE_MAX_DISTINCT`` and ``GEOASK_STATEMENT_TIMEOUT_S``) and stored.
    Never raises for an unreachable database: the result is then ``unavailable`` with a warning.
    """
    bound = settings.retrieval_value_max_distinct
    database = _database(settings)
    if isinstance(database, str):
        return IndexedValues({}, "unavailable", _no_values(database))
    url, fingerprint = database
    store = store or ValueStore(settings.home / "retrieval")
    stored = None if force else store.read(catalog, fingerprint, bound)
    if stored is not None or stored_only:
        return (IndexedValues(stored, "stored") if stored is not None else
                IndexedValues({}, "unavailable", _no_values("none stored for this database")))
    try:
        values = DatabaseValueSource(url, bound, settings.statement_timeout_s).distinct_values(
            catalog)
    except psycopg.Error as error:
        first_line = (str(error).strip().splitlines() or [type(error).__name__])[0]
        return IndexedValues({}, "unavailable", _no_values(f"{fingerprint}: {first_line}"))
    store.write(catalog, fingerprint, bound, values)
    return IndexedValues(values, "read")


def _no_values(reason: str) -> str:
    return (f"no place-name and category values for retrieval (database: {reason}); lexical "
            "matching uses the catalog only. Start the database (`geoask db up`) and run "
            "`geoask catalog index`")


def open_retriever(
    settings: Settings | None = None, catalog: Catalog | None = None, ensure_index: bool = True
) -> SchemaRetriever:
    """A :class:`SchemaRetriever` on the chroma index (local under ``<home>/chroma`` or server).

    The index's collections are named by the catalog's content hash, so opening another
    catalog (or an edited one) builds collections of its own and leaves the others in place.

    With ``ensure_index`` the index is (re)built when the catalog content hash changed, and
    the value lexicon (place names, categories) read from the database when none is stored for
    this catalog and database (:func:`index_values`; a warning is logged when the database
    cannot be reached). Without it, only stored values are used.

    Raises:
        CatalogError: the catalog YAML is missing or invalid.
        ConfigurationError: an embedding or chroma setting is invalid.

    """
    settings = settings or get_settings()
    catalog = catalog or load_catalog(settings.catalog_path)
    embedder = get_embedder(settings)
    key = catalog_content_hash(catalog, embedder.name)[:INDEX_KEY_CHARS]
    index = ChromaSchemaIndex(chroma_client(settings.home, settings.chroma_url), embedder, key)
    values = index_values(settings, catalog, stored_only=not ensure_index)
    if values.warning and ensure_index:
        logger.warning(values.warning)
    retriever = SchemaRetriever(
        catalog, index, embedder, RetrievalConfig.from_settings(settings),
        lexicon=build_lexicon(catalog, values.values),
    )
    if ensure_index:
        retriever.ensure_index()
    return retriever


@lru_cache(maxsize=1)
def shared_retriever() -> SchemaRetriever:
    """The process-wide retriever on the settings' index, opened once (for agents and flows).

    Raises:
        CatalogError, ConfigurationError: as :func:`open_retriever`.

    """
    return open_retriever()
