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


RACE = """
import sys, threading
from pathlib import Path
from geoask.retrieval.chroma_index import chroma_client
barrier, errors, clients = threading.Barrier(8), [], []
def open_store():
    barrier.wait()
    try:
        client = chroma_client(Path(sys.argv[1]), None)
        client.list_collections()
        clients.append(client)
    except Exception as error:
        errors.append(f"{type(error).__name__}: {error}")
threads = [threading.Thread(target=open_store) for _ in range(8)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(len(clients), len({id(client) for client in clients}), errors)
"""


def test_concurrent_openers_in_a_fresh_process_share_one_client(tmp_path):
    import subprocess
    import sys

    completed = subprocess.run([sys.executable, "-c", RACE, str(tmp_path)], capture_output=True,
                               text=True, timeout=300, check=False)
    assert completed.returncode == 0, completed.stderr[-2000:]
    assert completed.stdout.strip().splitlines()[-1] == "8 1 []"


def test_a_store_chroma_cannot_open_is_a_typed_infrastructure_error(tmp_path):
    from geoask.errors import IndexUnavailableError
    from geoask.models.retry import is_infrastructure_failure

    (tmp_path / "chroma").mkdir()
    (tmp_path / "chroma" / "chroma.sqlite3").write_bytes(b"not a database" * 100)
    with pytest.raises(IndexUnavailableError, match="could not be opened") as caught:
        chroma_client(tmp_path, None)
    assert str(tmp_path / "chroma") in str(caught.value)
    assert isinstance(caught.value, RetrievalError) and is_infrastructure_failure(caught.value)
