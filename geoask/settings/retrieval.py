"""Settings of geoask: schema retrieval and its embeddings (geoask/retrieval, issue #5).

One group of :class:`geoask.settings.Settings` (a ``GEOASK_*`` variable per field).
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class RetrievalSettings(BaseModel):
    """Schema retrieval and its embeddings (geoask/retrieval, issue #5)."""

    retrieval_alpha: float = Field(
        default=0.6, gt=0.5, le=1.0,
        description=(
            "Weight α of the best column similarity in a table's retrieval score: "
            "(1 − α)·table similarity + α·best column similarity (0.5 < α ≤ 1)."
        ),
    )
    retrieval_max_tables: int = Field(
        default=8, ge=1, le=8,
        description="Most tables in a retrieved schema subset, joined-in tables included.",
    )
    retrieval_min_relative_score: float = Field(
        default=0.3, ge=0.0, le=1.0,
        description=(
            "A ranked table is kept when its semantic score exceeds the median table's by at "
            "least this fraction of the best table's margin over the median (0: every table "
            "above the median; 1: only the best)."
        ),
    )
    retrieval_min_ranked_tables: int = Field(
        default=2, ge=1, le=8,
        description="The best-ranked tables always kept, whatever their relative score.",
    )
    retrieval_lexical_weight: float = Field(
        default=0.3, ge=0.0,
        description=(
            "Weight λ of exact lexical matches (table/column names, abbreviations, values, "
            "years) added to a table's retrieval score."
        ),
    )
    retrieval_lexical_keep: float = Field(
        default=0.5, ge=0.0,
        description=(
            "A table whose lexical weight (capped at 1; a term naming n tables weighs 1/n, a "
            "year in n tables' coverage 0.5/n) reaches this is kept whatever its similarity."
        ),
    )
    retrieval_column_margin: float = Field(
        default=0.15, ge=0.0,
        description=(
            "Columns within this cosine similarity of a table's best column are kept in the "
            "rendered schema subset; others (except keys and geometry) are trimmed."
        ),
    )
    retrieval_value_max_distinct: int = Field(
        default=200, ge=0,
        description=(
            "Text columns with at most this many distinct values (place names, categories) "
            "feed exact lexical matching; larger ones are left out. Read from the database by "
            "`geoask catalog index` and stored with the index."
        ),
    )
    retrieval_cache_size: int = Field(
        default=256, ge=0, description="Retrieval results kept in the in-process LRU cache."
    )
    embedding_backend: str = Field(
        default="static",
        description=(
            "Embedding backend for the schema index: 'static' (shipped model, offline, no "
            "torch), 'sentence-transformers' or 'openai' (OpenAI-compatible endpoint)."
        ),
    )
    embedding_model: str | None = Field(
        default=None,
        description=(
            "Model of the embedding backend: a folder for 'static' (default: the shipped "
            "model), a local model name/folder for 'sentence-transformers', a model name "
            "for 'openai'."
        ),
    )
    embedding_api_base: str | None = Field(
        default=None, description="Base URL of the OpenAI-compatible embeddings endpoint."
    )
    embedding_api_key: str | None = Field(
        default=None, description="API key of the OpenAI-compatible embeddings endpoint."
    )
    chroma_url: str | None = Field(
        default=None,
        description=(
            "URL of a shared Chroma server (e.g. http://chroma:8000) for the schema index; "
            "unset: a persistent local index under <home>/chroma."
        ),
    )
