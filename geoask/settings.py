"""geoask configuration: one settings object, read from ``GEOASK_*`` environment variables.

Every field is documented in README.md ("Configuration"); a test checks that it stays so.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


def _default_home() -> Path:
    return Path.cwd() / ".geoask"


class Settings(BaseSettings):
    """All geoask settings; environment variable = ``GEOASK_`` + upper-case field name."""

    model_config = SettingsConfigDict(env_prefix="GEOASK_", extra="ignore")

    home: Path = Field(
        default_factory=_default_home,
        description="Project-local state folder: embedded cluster, artifacts, indexes.",
    )
    database_url: str | None = Field(
        default=None,
        description=(
            "Connection URL of an existing PostGIS server for the reader role. When set, "
            "geoask starts no embedded cluster and uses this server instead."
        ),
    )
    owner_database_url: str | None = Field(
        default=None,
        description=(
            "Connection URL with rights to create the demo schema and load data on an "
            "external server (needed by `geoask db load` when GEOASK_DATABASE_URL is set)."
        ),
    )
    db_port: int = Field(
        default=55432, ge=1024, le=65535,
        description="TCP port of the embedded cluster (listens on 127.0.0.1 only).",
    )
    db_os_user: str = Field(
        default="geoask",
        description="Unprivileged OS user that runs the embedded cluster when geoask runs as root.",
    )
    pg_bindir: Path = Field(
        default=Path("/usr/lib/postgresql/15/bin"),
        description="Folder holding initdb, pg_ctl and postgres (PostgreSQL 15).",
    )
    data_schema: str = Field(default="demo", description="Schema holding the demo tables.")
    catalog_path: Path = Field(
        default=Path(__file__).parent / "catalog" / "catalog.yaml",
        description="The semantic catalog (YAML) describing every table of the data schema.",
    )
    demo_data_dir: Path = Field(
        default=Path(__file__).parent / "demo_data",
        description="Folder of the prepared demo data files (GeoParquet/Parquet) to load.",
    )
    statement_timeout_s: int = Field(
        default=30, ge=1, description="Statement timeout of the reader role and executor (s)."
    )
    sql_policy: Literal["separated", "postgis"] = Field(
        default="separated",
        description=(
            "SQL guard spatial policy: `separated` rejects spatial computation in SQL (ST_* "
            "functions, geometry operators, geography casts) so it is done in Python; `postgis` "
            "allows it."
        ),
    )
    sql_row_cap: int = Field(
        default=100_000, ge=1,
        description="Most rows a checked query may return; a larger result is cut and reported.",
    )
    sql_preview_rows: int = Field(
        default=5, ge=0, description="Rows shown in a result preview (CLI, execution state)."
    )

    # Schema retrieval (geoask/retrieval, issue #5).
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
        default=0.8, gt=0.0, le=1.0,
        description=(
            "A ranked table is kept when its score is at least this fraction of the best "
            "table's score (before join-path completion)."
        ),
    )
    retrieval_lexical_weight: float = Field(
        default=0.15, ge=0.0,
        description=(
            "Weight λ of exact lexical matches (table/column names, abbreviations, values, "
            "years) added to a table's retrieval score."
        ),
    )
    retrieval_column_margin: float = Field(
        default=0.1, ge=0.0,
        description=(
            "Columns within this cosine similarity of a table's best column are kept in the "
            "rendered schema subset; others (except keys and geometry) are trimmed."
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

    sandbox_base_python: Path = Field(
        default=Path("/usr/bin/python3.11"),
        description="Debian's Python the sandbox runtime venv is built from (readable by any uid).",
    )
    sandbox_runtime_dir: Path | None = Field(
        default=None,
        description="Sandbox runtime venv (analysis libraries only); default <home>/sandbox-runtime.",
    )
    sandbox_work_dir: Path | None = Field(
        default=None,
        description="Folder for per-script input/scratch folders; default <home>/sandbox-runs.",
    )
    sandbox_artifacts_url: str | None = Field(
        default=None,
        description="fsspec URL that files written to scratch are copied to, one sub-folder "
        "per run; default <home>/artifacts/sandbox.",
    )
    sandbox_memory_mib: int = Field(
        default=2048, ge=256,
        description="Address-space limit of a sandboxed script (MiB, RLIMIT_AS).",
    )
    sandbox_cpu_s: int = Field(
        default=60, ge=1, description="CPU-time limit of a sandboxed script (s, RLIMIT_CPU)."
    )
    sandbox_timeout_s: float = Field(
        default=120.0, gt=0,
        description="Wall-clock limit of a sandboxed script (s); the whole tree is killed.",
    )
    sandbox_file_size_mib: int = Field(
        default=256, ge=1,
        description="Largest file a sandboxed script may write, stdout included (MiB, RLIMIT_FSIZE).",
    )
    sandbox_open_files: int = Field(
        default=256, ge=32, description="Open-file limit of a sandboxed script (RLIMIT_NOFILE)."
    )
    sandbox_max_tasks: int = Field(
        default=64, ge=8,
        description="Processes+threads the sandbox's unprivileged uid may hold (RLIMIT_NPROC).",
    )
    sandbox_tmp_mib: int = Field(
        default=64, ge=1, description="Size of the sandbox's private /tmp (MiB, in memory)."
    )
    sandbox_uid_base: int = Field(
        default=200_000, ge=1000,
        description="First host uid of the range a sandbox run picks its unprivileged uid from.",
    )
    sandbox_uid_count: int = Field(
        default=60_000, ge=1, description="Size of the sandbox uid range."
    )
    sandbox_stdout_tail_chars: int = Field(
        default=4000, ge=200, description="How much of the end of stdout an outcome keeps."
    )
    sandbox_stderr_chars: int = Field(
        default=4000, ge=200, description="How much of stderr an outcome keeps."
    )

    @property
    def cluster_dir(self) -> Path:
        """Folder of the embedded cluster (data directory, socket, log)."""
        return self.home / "postgres"

    @property
    def sandbox_runtime_path(self) -> Path:
        """Sandbox runtime venv folder (``sandbox_runtime_dir`` or ``<home>/sandbox-runtime``)."""
        return self.sandbox_runtime_dir or self.home / "sandbox-runtime"

    @property
    def sandbox_work_path(self) -> Path:
        """Folder of per-run sandbox folders (``sandbox_work_dir`` or ``<home>/sandbox-runs``)."""
        return self.sandbox_work_dir or self.home / "sandbox-runs"

    @property
    def sandbox_artifacts(self) -> str:
        """Fsspec URL for sandbox artifacts (``sandbox_artifacts_url`` or a local folder)."""
        return self.sandbox_artifacts_url or str(self.home / "artifacts" / "sandbox")


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """Return the process-wide settings (read once from the environment)."""
    return Settings()
