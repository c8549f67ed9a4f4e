"""The schema index on a Chroma server (GEOASK_CHROMA_URL), started on 127.0.0.1."""

import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from geoask.retrieval import SchemaRetriever
from geoask.retrieval.chroma_index import ChromaSchemaIndex, chroma_client

CHROMA = Path(sys.executable).with_name("chroma")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def chroma_url(tmp_path):
    if not CHROMA.exists() and shutil.which("chroma") is None:
        pytest.skip("the chroma server CLI is not installed")
    port = _free_port()
    server = subprocess.Popen(
        [str(CHROMA), "run", "--path", str(tmp_path / "server"), "--host", "127.0.0.1",
         "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.2)
        else:
            pytest.fail("chroma server did not start within 30 s")
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_retrieval_through_a_chroma_server(tmp_path, chroma_url, catalog, embedder):
    client = chroma_client(tmp_path / "unused-home", chroma_url)
    retriever = SchemaRetriever(catalog, ChromaSchemaIndex(client, embedder), embedder)
    assert retriever.ensure_index() is True
    again = SchemaRetriever(catalog, ChromaSchemaIndex(client, embedder), embedder)
    assert again.ensure_index() is False
    subset = again.retrieve("monthly precipitation per grid cell in 1999")
    assert subset.table_names[:2] == ["climate_grid_monthly", "climate_grid_cells"]
    assert not (tmp_path / "unused-home" / "chroma").exists()
