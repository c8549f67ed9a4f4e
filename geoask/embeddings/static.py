"""The shipped static embedding model: a model2vec distillation of all-MiniLM-L6-v2.

A sentence vector is the mean of the int8 token vectors of its WordPiece tokens (no special
tokens, unknown tokens dropped, at most ``max_tokens`` tokens), L2-normalised - exactly what
model2vec's ``StaticModel.encode`` computes, with numpy and ``tokenizers`` only. Nothing is
downloaded: the files live in the repository and their SHA-256 is checked on load.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from geoask.errors import ConfigurationError

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SHIPPED_MODEL_DIR = Path(__file__).with_name("minilm_static")


class StaticEmbedder:
    """Static token-vector embedder; vectors are float32, shape (n, dims), unit length.

    Load it with :meth:`load` (or :func:`shipped_embedder` for the cached shipped model).
    """

    def __init__(
        self,
        vectors: NDArray[np.int8] | NDArray[np.float32],
        tokenizer: object,
        *,
        name: str,
        unk_token_id: int | None,
        max_tokens: int = 512,
    ) -> None:
        from tokenizers import Tokenizer

        if not isinstance(tokenizer, Tokenizer):
            raise TypeError("tokenizer must be a tokenizers.Tokenizer")
        self._vectors = np.asarray(vectors, dtype=np.float32)
        self._tokenizer = tokenizer
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()
        self._unk = unk_token_id
        self._max_tokens = max_tokens
        self.name = name
        self.dims = int(self._vectors.shape[1])

    @classmethod
    def load(cls, model_dir: Path = SHIPPED_MODEL_DIR) -> StaticEmbedder:
        """Load a model folder written by ``scripts/build_embedding_model.py``.

        Raises:
            ConfigurationError: a file is missing or its SHA-256 differs from ``model.json``.

        """
        from tokenizers import Tokenizer

        try:
            meta = json.loads((model_dir / "model.json").read_text(encoding="utf-8"))
            for file_name, expected in meta["sha256"].items():
                digest = hashlib.sha256((model_dir / file_name).read_bytes()).hexdigest()
                if digest != expected:
                    raise ConfigurationError(
                        f"embedding model file {model_dir / file_name} is corrupt (SHA-256 "
                        "mismatch); rebuild it with scripts/build_embedding_model.py"
                    )
            vectors = np.load(model_dir / "vectors.npy", allow_pickle=False)
            tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        except (FileNotFoundError, KeyError, json.JSONDecodeError) as error:
            raise ConfigurationError(
                f"embedding model folder {model_dir} is incomplete ({error}); rebuild it with "
                "scripts/build_embedding_model.py"
            ) from None
        return cls(
            vectors,
            tokenizer,
            name=str(meta["name"]),
            unk_token_id=meta.get("unk_token_id"),
            max_tokens=int(meta.get("max_tokens", 512)),
        )

    def token_ids(self, text: str) -> list[int]:
        """WordPiece token ids of ``text`` (no special tokens, unknown tokens dropped)."""
        ids = self._tokenizer.encode(text, add_special_tokens=False).ids
        return [i for i in ids if i != self._unk][: self._max_tokens]

    def count_tokens(self, text: str) -> int:
        """Number of WordPiece tokens of ``text`` under the shipped tokenizer (incl. unknowns)."""
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Embed ``texts``: float32 array of shape (len(texts), dims), rows L2-normalised.

        A text without known tokens embeds as the zero vector.
        """
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        encodings = self._tokenizer.encode_batch_fast(list(texts), add_special_tokens=False)
        for row, encoding in enumerate(encodings):
            ids = [i for i in encoding.ids if i != self._unk][: self._max_tokens]
            if ids:
                mean = self._vectors[ids].mean(axis=0)
                norm = float(np.linalg.norm(mean))
                out[row] = mean / norm if norm > 0 else mean
        return out


@lru_cache(maxsize=1)
def shipped_embedder() -> StaticEmbedder:
    """The shipped static model, loaded once per process (about 4 MB in memory)."""
    return StaticEmbedder.load(SHIPPED_MODEL_DIR)
