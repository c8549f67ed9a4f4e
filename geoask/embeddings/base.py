"""The :class:`Embedder` protocol and the backend chosen by settings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from geoask.errors import ConfigurationError

if TYPE_CHECKING:
    from geoask.settings import Settings


BACKENDS = ("static", "sentence-transformers", "openai")
"""Values of ``GEOASK_EMBEDDING_BACKEND``."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length vectors for cosine similarity.

    ``embed`` returns float32 of shape (len(texts), dims); ``name`` identifies the model so an
    index built with one model is never queried with another.
    """

    name: str
    dims: int

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed ``texts`` as L2-normalised rows."""
        ...


def _normalise(matrix: NDArray[np.float32]) -> NDArray[np.float32]:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (matrix / norms).astype(np.float32)


class SentenceTransformerEmbedder:
    """Backend ``sentence-transformers`` (optional; pulls in torch - not in the default install).

    The model must already be on disk (``GEOASK_EMBEDDING_MODEL`` = a local folder or a name in
    the local Hugging Face cache): the hub is kept offline.
    """

    def __init__(self, model: str) -> None:
        import os

        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            raise ConfigurationError(
                "GEOASK_EMBEDDING_BACKEND=sentence-transformers needs the package "
                "sentence-transformers (pip install sentence-transformers), or use the default "
                "backend 'static'"
            ) from None
        self._model = SentenceTransformer(model, device="cpu")
        self.name = f"sentence-transformers:{model}"
        dims = self._model.get_sentence_embedding_dimension()
        self.dims = int(dims or 0)

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed ``texts`` with the transformer; rows L2-normalised."""
        vectors = self._model.encode(list(texts), normalize_embeddings=True)
        return np.asarray(vectors, dtype=np.float32)


class OpenAICompatibleEmbedder:
    """Backend ``openai``: any OpenAI-compatible ``/embeddings`` endpoint (vLLM, Ollama, ...)."""

    def __init__(self, model: str, base_url: str | None, api_key: str | None) -> None:
        from openai import OpenAI

        self._client = OpenAI(base_url=base_url, api_key=api_key or "unused")
        self._model = model
        self.name = f"openai:{base_url or 'default'}:{model}"
        self.dims = 0  # known after the first call

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed ``texts`` through the endpoint; rows L2-normalised."""
        response = self._client.embeddings.create(model=self._model, input=list(texts))
        matrix = np.asarray([item.embedding for item in response.data], dtype=np.float32)
        self.dims = int(matrix.shape[1])
        return _normalise(matrix)


def get_embedder(settings: Settings) -> Embedder:
    """Return the embedder selected by ``settings.embedding_backend``.

    Raises:
        ConfigurationError: unknown backend, or a backend whose model setting is missing.

    """
    from geoask.embeddings.static import StaticEmbedder, shipped_embedder

    backend = settings.embedding_backend
    if backend not in BACKENDS:
        raise ConfigurationError(
            f"unknown GEOASK_EMBEDDING_BACKEND={backend!r}; use one of {', '.join(BACKENDS)}"
        )
    if backend == "static":
        if settings.embedding_model:
            from pathlib import Path

            return StaticEmbedder.load(Path(settings.embedding_model))
        return shipped_embedder()
    if not settings.embedding_model:
        raise ConfigurationError(
            f"GEOASK_EMBEDDING_BACKEND={backend} needs GEOASK_EMBEDDING_MODEL (model name or path)"
        )
    if backend == "sentence-transformers":
        return SentenceTransformerEmbedder(settings.embedding_model)
    return OpenAICompatibleEmbedder(
        settings.embedding_model, settings.embedding_api_base, settings.embedding_api_key
    )
