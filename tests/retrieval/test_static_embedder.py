import shutil
import subprocess
import sys

import numpy as np
import pytest

from geoask.embeddings.static import SHIPPED_MODEL_DIR, StaticEmbedder
from geoask.errors import ConfigurationError


def test_vectors_are_unit_rows_of_the_model_dimension(embedder):
    vectors = embedder.embed(["monthly precipitation", "state boundaries", "x"])
    assert vectors.shape == (3, embedder.dims)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_text_without_known_tokens_embeds_as_zero(embedder):
    assert not embedder.embed([""]).any()


@pytest.mark.parametrize(
    ("query", "near", "far"),
    [
        ("how much rain fell", "monthly precipitation total", "per-capita personal income"),
        ("average salary of residents", "per-capita personal income", "grid cell outline"),
        ("crimes reported by police", "police incident reports", "air temperature"),
        ("life expectancy of nations", "life expectancy at birth by country", "road segments"),
    ],
)
def test_related_texts_are_closer_than_unrelated(embedder, query, near, far):
    q, n, f = embedder.embed([query, near, far])
    assert float(q @ n) > float(q @ f)


def test_token_count_uses_wordpiece_tokens(embedder):
    assert embedder.count_tokens("") == 0
    assert embedder.count_tokens("state income") == 2
    assert embedder.count_tokens("precipitation precipitation") == 2 * embedder.count_tokens(
        "precipitation"
    )


def test_corrupt_model_file_is_refused(tmp_path):
    model_dir = tmp_path / "model"
    shutil.copytree(SHIPPED_MODEL_DIR, model_dir)
    with (model_dir / "tokenizer.json").open("a", encoding="utf-8") as handle:
        handle.write(" ")
    with pytest.raises(ConfigurationError, match="SHA-256"):
        StaticEmbedder.load(model_dir)


def test_missing_model_folder_is_a_configuration_error(tmp_path):
    with pytest.raises(ConfigurationError, match="incomplete"):
        StaticEmbedder.load(tmp_path)


def test_embedding_imports_neither_torch_nor_a_hub_download():
    code = (
        "import sys\n"
        "from geoask.embeddings.static import shipped_embedder\n"
        "shipped_embedder().embed(['rainfall in Georgia'])\n"
        "print('torch' in sys.modules, 'sentence_transformers' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
