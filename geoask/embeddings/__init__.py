"""Text embeddings for the schema index: a pluggable :class:`Embedder` and its backends.

The default backend is a small static model shipped in ``geoask/embeddings/minilm_static/``
(built by ``scripts/build_embedding_model.py``); it needs only numpy and ``tokenizers``, works
with the network off and never imports torch. Other backends are chosen by settings
(``GEOASK_EMBEDDING_BACKEND``): ``sentence-transformers`` and ``openai`` (any
OpenAI-compatible ``/embeddings`` endpoint).
"""

from geoask.embeddings.base import Embedder, get_embedder
from geoask.embeddings.static import StaticEmbedder

__all__ = ["Embedder", "StaticEmbedder", "get_embedder"]
