"""Wiring: the retriever over the chroma index with the embedder chosen by settings."""

from __future__ import annotations

from functools import lru_cache

from geoask.catalog.model import Catalog, load_catalog
from geoask.embeddings.base import get_embedder
from geoask.retrieval.chroma_index import ChromaSchemaIndex, chroma_client
from geoask.retrieval.lexical import build_lexicon
from geoask.retrieval.retriever import RetrievalConfig, SchemaRetriever
from geoask.retrieval.values import ParquetValueSource
from geoask.settings import Settings, get_settings


def open_retriever(
    settings: Settings | None = None, catalog: Catalog | None = None, ensure_index: bool = True
) -> SchemaRetriever:
    """A :class:`SchemaRetriever` on the chroma index (local under ``<home>/chroma`` or server).

    With ``ensure_index`` the index is (re)built when the catalog content hash changed. Place
    names and categories for lexical matching are read from the demo data files
    (``GEOASK_DEMO_DATA_DIR``) and cached under ``<home>/retrieval``.

    Raises:
        CatalogError: the catalog YAML is missing or invalid.
        ConfigurationError: an embedding or chroma setting is invalid.

    """
    settings = settings or get_settings()
    catalog = catalog or load_catalog(settings.catalog_path)
    embedder = get_embedder(settings)
    index = ChromaSchemaIndex(chroma_client(settings.home, settings.chroma_url), embedder)
    values = ParquetValueSource(
        settings.demo_data_dir, settings.retrieval_value_max_distinct, settings.home / "retrieval"
    ).distinct_values(catalog)
    retriever = SchemaRetriever(
        catalog, index, embedder, RetrievalConfig.from_settings(settings),
        lexicon=build_lexicon(catalog, values),
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
