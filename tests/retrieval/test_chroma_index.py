import numpy as np
import pytest

from geoask.errors import ConfigurationError, RetrievalError
from geoask.retrieval import InMemorySchemaIndex, SchemaRetriever
from geoask.retrieval.chroma_index import ChromaSchemaIndex, chroma_client
from geoask.retrieval.documents import catalog_documents


@pytest.fixture
def no_default_embedding_function(monkeypatch):
    """Fail loudly if chroma ever falls back to its own (downloading) embedding function."""
    from chromadb.utils import embedding_functions

    def refuse(*args, **kwargs):
        raise AssertionError("chroma's default embedding function was used")

    monkeypatch.setattr(embedding_functions.DefaultEmbeddingFunction, "__call__", refuse)


def test_chroma_index_agrees_with_in_memory_index(
    tmp_path, catalog, embedder, no_default_embedding_function
):
    documents = catalog_documents(catalog)
    vectors = embedder.embed([d.text for d in documents])
    chroma = ChromaSchemaIndex(chroma_client(tmp_path, None), embedder)
    memory = InMemorySchemaIndex()
    for index in (chroma, memory):
        index.rebuild(documents, vectors, "hash-1")
    queries = embedder.embed(["monthly rainfall per grid cell", "state income"])
    for kind in ("table", "column"):
        ours = chroma.query(queries, kind, 5)
        expected = memory.query(queries, kind, 5)
        assert len(ours) == len(expected) == 2
        for got, want in zip(ours, expected, strict=True):
            assert [(h.table, h.column) for h in got] == [(h.table, h.column) for h in want]
            np.testing.assert_allclose([h.similarity for h in got],
                                       [h.similarity for h in want], atol=1e-4)


def test_content_hash_persists_across_clients(tmp_path, catalog, embedder):
    first = SchemaRetriever(catalog, ChromaSchemaIndex(chroma_client(tmp_path, None), embedder),
                            embedder)
    assert first.ensure_index() is True
    reopened = ChromaSchemaIndex(chroma_client(tmp_path, None), embedder)
    assert reopened.content_hash() == first.content_hash
    second = SchemaRetriever(catalog, reopened, embedder)
    assert second.ensure_index() is False
    assert "state_income_annual" in second.retrieve("per-capita income in 1990").table_names


def test_indexes_of_two_catalogs_share_a_home_without_dropping_each_other(tmp_path, catalog,
                                                                          embedder):
    documents = catalog_documents(catalog)
    vectors = embedder.embed([d.text for d in documents])
    client = chroma_client(tmp_path, None)
    first, second = (ChromaSchemaIndex(client, embedder, key) for key in ("aaaa", "bbbb"))
    first.rebuild(documents, vectors, "hash-a")
    hits = first.query(embedder.embed(["state income"]), "table", 3)
    second.rebuild(documents[:5], vectors[:5], "hash-b")  # another catalog, same home
    assert (first.content_hash(), second.content_hash()) == ("hash-a", "hash-b")
    again = ChromaSchemaIndex(client, embedder, "aaaa").query(
        embedder.embed(["state income"]), "table", 3)
    assert [(h.table, h.column) for h in again[0]] == [(h.table, h.column) for h in hits[0]]


def test_querying_an_empty_index_says_what_to_do(tmp_path, embedder):
    index = ChromaSchemaIndex(chroma_client(tmp_path, None), embedder)
    assert index.content_hash() is None
    with pytest.raises(RetrievalError, match="geoask catalog index"):
        index.query(np.zeros((1, embedder.dims), np.float32), "table", 3)


@pytest.mark.parametrize("url", ["localhost:8000", "ftp://host", "http://"])
def test_bad_chroma_url_is_a_configuration_error(tmp_path, url):
    with pytest.raises(ConfigurationError, match="GEOASK_CHROMA_URL"):
        chroma_client(tmp_path, url)
