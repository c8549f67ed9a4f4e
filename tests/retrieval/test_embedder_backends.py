import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import ClassVar

import numpy as np
import pytest

from geoask.embeddings import Embedder, StaticEmbedder, get_embedder
from geoask.embeddings.base import OpenAICompatibleEmbedder
from geoask.embeddings.static import SHIPPED_MODEL_DIR, shipped_embedder
from geoask.errors import ConfigurationError
from geoask.settings import Settings


def test_default_backend_is_the_shipped_static_model():
    embedder = get_embedder(Settings())
    assert embedder is shipped_embedder()
    assert isinstance(embedder, Embedder)
    assert embedder.name == "minilm-static"


def test_static_backend_loads_a_model_folder():
    embedder = get_embedder(Settings(embedding_model=str(SHIPPED_MODEL_DIR)))
    assert isinstance(embedder, StaticEmbedder)
    assert embedder.dims == shipped_embedder().dims


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"embedding_backend": "word2vec"}, "unknown GEOASK_EMBEDDING_BACKEND"),
        ({"embedding_backend": "openai"}, "needs GEOASK_EMBEDDING_MODEL"),
        ({"embedding_backend": "sentence-transformers"}, "needs GEOASK_EMBEDDING_MODEL"),
    ],
)
def test_backend_configuration_errors(settings, message):
    with pytest.raises(ConfigurationError, match=message):
        get_embedder(Settings(**settings))


def test_sentence_transformers_backend_without_the_package_says_how_to_install():
    try:
        import sentence_transformers  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("sentence-transformers is installed here")
    settings = Settings(embedding_backend="sentence-transformers", embedding_model="/nowhere")
    with pytest.raises(ConfigurationError, match="pip install sentence-transformers"):
        get_embedder(settings)


class _FakeEmbeddings(BaseHTTPRequestHandler):
    """An OpenAI-compatible /embeddings endpoint: vector = [len(text), 1, 0]."""

    requests: ClassVar[list[dict]] = []

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append({"path": self.path, "body": body,
                                    "auth": self.headers.get("Authorization")})
        data = [{"object": "embedding", "index": i, "embedding": [float(len(t)), 1.0, 0.0]}
                for i, t in enumerate(body["input"])]
        payload = json.dumps({"object": "list", "data": data, "model": body["model"],
                              "usage": {"prompt_tokens": 1, "total_tokens": 1}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture
def fake_endpoint():
    server = HTTPServer(("127.0.0.1", 0), _FakeEmbeddings)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _FakeEmbeddings.requests = []
    yield f"http://127.0.0.1:{server.server_port}/v1"
    server.shutdown()
    server.server_close()


def test_openai_compatible_backend(fake_endpoint):
    settings = Settings(embedding_backend="openai", embedding_model="tiny-embed",
                        embedding_api_base=fake_endpoint, embedding_api_key="secret")
    embedder = get_embedder(settings)
    assert isinstance(embedder, OpenAICompatibleEmbedder)
    vectors = embedder.embed(["abc", ""])
    np.testing.assert_allclose(vectors[0], np.array([3.0, 1.0, 0.0]) / np.sqrt(10), rtol=1e-6)
    np.testing.assert_allclose(vectors[1], [0.0, 1.0, 0.0])
    assert embedder.dims == 3
    request = _FakeEmbeddings.requests[0]
    assert request["path"] == "/v1/embeddings"
    assert request["body"]["model"] == "tiny-embed"
    assert request["auth"] == "Bearer secret"
