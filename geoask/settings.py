"""geoask configuration: one settings object, read from ``GEOASK_*`` environment variables.

Every field is documented in README.md ("Configuration"); a test checks that it stays so.
"""

from __future__ import annotations

import hashlib
import os
import stat
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from geoask.errors import ConfigurationError
from geoask.storage import check_storage_url


def _default_home() -> Path:
    """``.geoask`` of the source checkout geoask runs from, else ``~/.geoask``.

    Tied to the checkout rather than the working directory, so every command finds the same
    cluster, runtime and artifacts wherever it is started.
    """
    checkout = Path(__file__).resolve().parents[1]
    if (checkout / "pyproject.toml").is_file():
        return checkout / ".geoask"
    return Path.home() / ".geoask"


class Settings(BaseSettings):
    """All geoask settings; environment variable = ``GEOASK_`` + upper-case field name."""

    model_config = SettingsConfigDict(env_prefix="GEOASK_", extra="ignore")

    home: Path = Field(
        default_factory=_default_home,
        description=(
            "Project-local state folder (default: .geoask in the source checkout, else ~/.geoask): "
            "embedded cluster, sandbox runtime, artifacts, indexes."
        ),
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
    data_schema: str | None = Field(
        default=None,
        description="Schema the demo loader writes the demo tables into (default: the catalog's "
        "`schema`); everything else takes each table's schema from the catalog.",
    )
    catalog_path: Path = Field(
        default=Path(__file__).parent / "catalog" / "catalog.yaml",
        description="The semantic catalog (YAML) describing the database's tables, in one or "
        "more schemas (draft one with `geoask catalog draft`).",
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
    sql_max_result_mib: int = Field(
        default=256, ge=1, le=65536,
        description="Largest query result fetched (approximate size in memory, MiB); a larger "
        "one is refused with a `result_too_large` error asking for fewer rows or aggregation.",
    )
    sql_max_chars: int = Field(
        default=20_000, ge=100, le=1_000_000,
        description="Longest SQL text the guard checks (characters); longer text is refused "
        "in one line before any parsing (parse time and memory grow with length).",
    )
    sql_functions_from_catalog: bool = Field(
        default=True,
        description="Under the `postgis` policy, also allow the PostGIS functions the "
        "connected database's catalog marks IMMUTABLE/STABLE (minus a deny-list of management "
        "functions); off, or without a database, the hand-kept list alone applies.",
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

    sandbox_base_python: Path = Field(
        default=Path("/usr/bin/python3.11"),
        description="Debian's Python the sandbox runtime venv is built from (readable by any uid).",
    )
    sandbox_runtime_dir: Path | None = Field(
        default=None,
        description="Sandbox runtime venv (analysis libraries only); "
        "default <home>/sandbox-runtime.",
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
        description="Largest file a sandboxed script may write, stdout included "
        "(MiB, RLIMIT_FSIZE).",
    )
    sandbox_open_files: int = Field(
        default=256, ge=32, description="Open-file limit of a sandboxed script (RLIMIT_NOFILE)."
    )
    sandbox_max_tasks: int = Field(
        default=64, ge=8,
        description="Processes+threads the sandbox's unprivileged uid may hold (RLIMIT_NPROC).",
    )
    sandbox_scratch_mib: int = Field(
        default=512, ge=0,
        description="Size cap of a run's writable /scratch (MiB; a tmpfs the host mounts per "
        "run, needs root); 0 = a plain folder on disk with only the per-file limit.",
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
    sandbox_session_timeout_s: float = Field(
        default=900.0, gt=0,
        description="Wall-clock limit of a persistent sandbox session, start to close (s).",
    )
    sandbox_session_cpu_s: int = Field(
        default=300, ge=1,
        description="CPU-time limit of a persistent sandbox session, all cells (s, RLIMIT_CPU).",
    )
    sandbox_cell_timeout_s: float = Field(
        default=120.0, gt=0,
        description="Wall-clock limit of one cell of a sandbox session (s); a cell past it "
        "ends the session.",
    )
    sandbox_cell_cpu_s: int = Field(
        default=60, ge=1,
        description="CPU-time limit of one cell of a sandbox session (s); a cell past it ends "
        "the session.",
    )
    sandbox_stdout_tail_chars: int = Field(
        default=4000, ge=200, description="How much of the end of stdout an outcome keeps."
    )
    sandbox_stderr_chars: int = Field(
        default=4000, ge=200, description="How much of stderr an outcome keeps."
    )

    # Language models of the agents (geoask/llm.py, issue #6).
    model: str | None = Field(
        default=None,
        description=(
            "Model of every agent, as a pydantic-ai model string (`openai:gpt-4o`, "
            "`anthropic:claude-sonnet-4-5`, `deepseek:deepseek-chat`), as "
            "`openai-compatible:<model name>` for the endpoint GEOASK_OPENAI_BASE_URL "
            "(DashScope/Qwen, vLLM, Ollama, llama.cpp server), or `reference` for the offline "
            "replay model. Unset: no agent can run and `geoask ask` says how to set it."
        ),
    )
    model_intent: str | None = Field(
        default=None, description="Model of the intent agent (overrides GEOASK_MODEL)."
    )
    model_planner: str | None = Field(
        default=None, description="Model of the planner agent (overrides GEOASK_MODEL)."
    )
    model_sql: str | None = Field(
        default=None, description="Model of the SQL agent (overrides GEOASK_MODEL)."
    )
    model_compute: str | None = Field(
        default=None, description="Model of the compute (Python) agent (overrides GEOASK_MODEL)."
    )
    model_reviewer: str | None = Field(
        default=None, description="Model of the reviewer agent (overrides GEOASK_MODEL)."
    )
    model_answer: str | None = Field(
        default=None, description="Model of the answer agent (overrides GEOASK_MODEL)."
    )
    model_react: str | None = Field(
        default=None,
        description="Model of the ReAct agent of the REACT variant (overrides GEOASK_MODEL).",
    )
    model_catalog: str | None = Field(
        default=None,
        description="Model of the catalog agent of `geoask catalog draft --describe` "
        "(overrides GEOASK_MODEL).",
    )
    catalog_describe_values: int = Field(
        default=8, ge=0, le=50,
        description="Most sampled values per column shown to the catalog agent "
        "(`catalog draft --describe`), each cut to 60 characters.",
    )
    openai_base_url: str | None = Field(
        default=None,
        description=(
            "Base URL of the OpenAI-compatible chat-completions endpoint used by "
            "`openai-compatible:<model>` models, e.g. "
            "https://dashscope.aliyuncs.com/compatible-mode/v1, http://127.0.0.1:8000/v1 (vLLM), "
            "http://127.0.0.1:11434/v1 (Ollama), http://127.0.0.1:8080/v1 (llama.cpp)."
        ),
    )
    openai_api_key: SecretStr | None = Field(
        default=None,
        description=(
            "API key of GEOASK_OPENAI_BASE_URL (optional for local servers); also used by "
            "`openai:` models instead of OPENAI_API_KEY when set."
        ),
    )
    model_temperature: float = Field(
        default=0.0, ge=0.0, le=2.0, description="Sampling temperature of every agent call."
    )
    model_timeout_s: float = Field(
        default=60.0, gt=0,
        description="Timeout of one HTTP attempt of a model call (s); a retry re-arms it.",
    )
    model_request_timeout_s: float = Field(
        default=300.0, gt=0,
        description=(
            "Deadline of one model call including all its HTTP retries (s); when it passes "
            "the call fails as a transient model error."
        ),
    )
    model_max_retries: int = Field(
        default=2, ge=0, le=10,
        description=(
            "HTTP retries of one model call, for transient failures only (408, 409, 429, 5xx, "
            "dropped connections), with exponential backoff from 0.5 s to 8 s (a server's "
            "Retry-After is honoured up to 120 s); 0 makes a single attempt."
        ),
    )

    # The question flow (flows/answer_question.py, issue #6).
    question_max_chars: int = Field(
        default=4096, ge=16, le=1_000_000,
        description="Longest question accepted (characters); a longer one is refused in one "
        "line before any agent call (every agent would be sent it).",
    )
    variant: Literal["FULL", "POSTGIS", "NO_STCA", "NO_PLANNER", "BASE", "REACT",
                     "PLAN_EXECUTE"] = Field(
        default="FULL",
        description=(
            "Pipeline variant: FULL (spatial computation in Python, not SQL), POSTGIS (spatial "
            "SQL allowed), NO_STCA (no Python steps; spatial SQL allowed), NO_PLANNER (one SQL "
            "step, then Python only if the SQL agent asks), BASE (plain relational SQL only); the "
            "baselines REACT (one tool-using agent over a persistent sandbox session) and "
            "PLAN_EXECUTE (plan once, execute, replan on failure; no reviewer)."
        ),
    )
    flow_max_step_attempts: int = Field(
        default=3, ge=1,
        description="Attempts per plan step (the first try plus revisions) before a replan.",
    )
    flow_max_repairs: int = Field(
        default=2, ge=0,
        description="Repairs of an upstream step (dependency backtracking) per question.",
    )
    flow_max_replans: int = Field(
        default=2, ge=0, description="New plans per question after a failed or rejected plan."
    )
    flow_max_step_runs: int = Field(
        default=12, ge=1,
        description="Total step executions (SQL and Python, all attempts) per question.",
    )
    react_max_steps: int = Field(
        default=24, ge=2, le=200,
        description="Step budget of the REACT variant's agent: tool calls plus the final answer "
        "per question; a tool call past it is not run (the agent is told to answer now), and "
        "an agent still without an answer after its output retries fails the run.",
    )
    flow_evidence_rows: int = Field(
        default=50, ge=1,
        description=(
            "Most result rows handed to the reviewer and answer agents as evidence; larger "
            "results are shown as a preview and a row count."
        ),
    )
    artifact_root: str | None = Field(
        default=None,
        description=(
            "fsspec URL of the folder holding one sub-folder per question run (SQL, previews, "
            "scripts, exported files, execution log); default <home>/artifacts."
        ),
    )
    conversation_max_turns: int = Field(
        default=5, ge=1, le=10,
        description=(
            "Earlier turns of a conversation (`geoask ask --conversation ID`) whose summary and "
            "registered artifacts the intent and planner agents see (at most 10)."
        ),
    )

    # The benchmark run (flows/run_benchmark.py, `geoask bench`, issue #7).
    bench_cases_path: Path = Field(
        default=Path(__file__).resolve().parents[1] / "benchmark" / "cases",
        description=(
            "Case file or folder used when none is named: `geoask bench`, `bench verify` and "
            "`bench fill` without --tasks-file, and the questions the offline reference model "
            "replays (`geoask ask --model reference`); e.g. benchmark/databases/spdata/cases."
        ),
    )
    bench_conversations_path: Path = Field(
        default=Path(__file__).resolve().parents[1] / "benchmark" / "conversations",
        description=(
            "Conversation case file or folder: `geoask bench conversations` and the follow-up "
            "questions the offline reference model replays (`geoask ask --conversation ID "
            "--model reference`)."
        ),
    )
    bench_out_dir: Path | None = Field(
        default=None,
        description=(
            "Folder of benchmark runs (`geoask bench --out`): one result file per "
            "(variant, repeat, case), so an interrupted run resumes; default <home>/bench-runs."
        ),
    )
    bench_task_runner: Literal["threads", "dask"] = Field(
        default="threads",
        description=(
            "Prefect task runner of the benchmark: threads (ThreadPoolTaskRunner) or dask "
            "(DaskTaskRunner from prefect-dask, on GEOASK_BENCH_DASK_ADDRESS or a local cluster)."
        ),
    )
    bench_concurrency: int = Field(
        default=4, ge=1,
        description="Questions answered at once by the threads runner (threads per Dask worker).",
    )
    bench_dask_address: str | None = Field(
        default=None,
        description=(
            "Scheduler address of an existing Dask cluster (tcp://host:8786); its workers need "
            "geoask installed and PREFECT_API_URL set. Unset: a local cluster is started."
        ),
    )
    bench_dask_workers: int = Field(
        default=1, ge=1, description="Workers of the local Dask cluster started for a run."
    )
    bench_bootstrap_samples: int = Field(
        default=2000, ge=100,
        description="Bootstrap resamples of the 95% intervals of SSA, FEPSR and routing "
        "accuracy over cases (percentile bootstrap, seed 0).",
    )

    # Prefect server and deployments (geoask/service/, issue #8).
    server_port: int = Field(
        default=4200, ge=1024, le=65535,
        description="TCP port of the Prefect server `geoask server` starts (on 127.0.0.1 only).",
    )
    server_database_url: str | None = Field(
        default=None,
        description=(
            "SQLAlchemy URL of the Prefect server's database, e.g. "
            "postgresql+asyncpg://prefect:...@db-host:5432/prefect; unset: the database "
            "GEOASK_SERVER_DATABASE of the embedded cluster (created on first start), or "
            "SQLite at <home>/prefect/prefect.db when GEOASK_DATABASE_URL names an external "
            "server."
        ),
    )
    server_database: str = Field(
        default="prefect", pattern=r"^[a-z_][a-z0-9_]{0,62}$",
        description=(
            "Name of the Prefect server's own database in the embedded PostgreSQL cluster "
            "(beside the data's; owned by geoask_owner)."
        ),
    )
    server_api_url: str | None = Field(
        default=None,
        description=(
            "API URL of the Prefect server that `--via-api` and workers talk to, e.g. "
            "http://prefect-host:4200/api; when set, geoask starts no server of its own. "
            "Unset: the running geoask server (<home>/prefect/server.json), started in the "
            "background by `geoask ask`/`geoask bench` when none runs."
        ),
    )
    server_home: Path | None = Field(
        default=None,
        description=(
            "PREFECT_HOME of the server and its runs (SQLite database, persisted flow results, "
            "server.log); unset: <home>/prefect."
        ),
    )
    server_worker: bool = Field(
        default=True,
        description=(
            "`geoask server` keeps a warm question worker, and `geoask ask` hands a question "
            "to it when the server runs with the same settings, model credentials and code "
            "(no cold start: imports, catalog, model set-up); otherwise, or with false, the "
            "command answers in its own process."
        ),
    )
    server_poll_interval_s: int = Field(
        default=1, ge=1,
        description=(
            "How often `geoask server` asks the API for flow runs to start (s); Prefect's own "
            "default of 10 s adds up to 10 s to every run triggered through the API."
        ),
    )
    server_start_timeout_s: float = Field(
        default=90.0, gt=0,
        description="How long `geoask server` waits for the server's health endpoint (s).",
    )
    api_run_timeout_s: float = Field(
        default=1800.0, gt=0,
        description="How long `--via-api` waits for a triggered flow run to finish (s).",
    )
    benchmark_schedule_cron: str = Field(
        default="0 2 * * *",
        description="Cron schedule (UTC) of the nightly benchmark deployment.",
    )
    benchmark_schedule_model: str = Field(
        default="reference",
        description="Model the nightly benchmark deployment runs with.",
    )
    server_models: str | None = Field(
        default=None,
        description=(
            "Comma-separated model strings a run triggered through the API (`--via-api`, the "
            "dashboard's run form) may choose besides reference, reference-faulty and the "
            "configured GEOASK_MODEL, GEOASK_MODEL_<ROLE> and GEOASK_BENCHMARK_SCHEDULE_MODEL; "
            "any other model parameter is refused."
        ),
    )

    @field_validator("artifact_root", "sandbox_artifacts_url")
    @classmethod
    def _usable_storage(cls, value: str | None) -> str | None:
        return check_storage_url(value)

    @property
    def bench_out_path(self) -> Path:
        """Folder of benchmark runs (``bench_out_dir`` or ``<home>/bench-runs``)."""
        return self.bench_out_dir or self.home / "bench-runs"

    @property
    def service_home(self) -> Path:
        """Where state used by other OS users lives (PostgreSQL's user, the sandbox's uids).

        ``home`` itself when every ancestor is searchable by other users; otherwise, as root
        (say, a checkout under /root, mode 0700), ``/var/lib/geoask/<hash of home>``, so no
        permission of the user's folders has to be widened.
        """
        return service_home_for(self.home)

    @property
    def cluster_dir(self) -> Path:
        """Folder of the embedded cluster (data directory, socket, log)."""
        return self.service_home / "postgres"

    @property
    def sandbox_runtime_path(self) -> Path:
        """Sandbox runtime venv (``sandbox_runtime_dir`` or ``<service home>/sandbox-runtime``)."""
        return self.sandbox_runtime_dir or self.service_home / "sandbox-runtime"

    @property
    def sandbox_work_path(self) -> Path:
        """Per-run sandbox folders (``sandbox_work_dir`` or ``<service home>/sandbox-runs``)."""
        return self.sandbox_work_dir or self.service_home / "sandbox-runs"

    @property
    def artifact_root_url(self) -> str:
        """Fsspec URL of the question artifact root (``artifact_root`` or ``<home>/artifacts``)."""
        return self.artifact_root or str(self.home / "artifacts")

    @property
    def prefect_home(self) -> Path:
        """PREFECT_HOME of the server (``server_home`` or ``<home>/prefect``: SQLite, results)."""
        return self.server_home or self.home / "prefect"

    @property
    def prefect_api_url(self) -> str:
        """API URL of the Prefect server (``server_api_url`` or ``http://127.0.0.1:<port>/api``)."""
        return self.server_api_url or f"http://127.0.0.1:{self.server_port}/api"

    @property
    def sandbox_artifacts(self) -> str:
        """Fsspec URL for sandbox artifacts (``sandbox_artifacts_url`` or a local folder)."""
        return self.sandbox_artifacts_url or str(self.home / "artifacts" / "sandbox")


SHARED_STATE_ROOT = Path("/var/lib/geoask")


def searchable_by_others(folder: Path) -> bool:
    """True when ``folder`` and every existing ancestor have the o+x bit."""
    path = folder.absolute()
    return all(not p.exists() or p.stat().st_mode & stat.S_IXOTH for p in (path, *path.parents))


def service_home_for(home: Path) -> Path:
    """``home``, or its stand-in under /var/lib/geoask when other users cannot reach it as root."""
    if os.geteuid() != 0 or searchable_by_others(home):
        return home
    key = hashlib.sha256(str(home.absolute()).encode()).hexdigest()[:16]
    return SHARED_STATE_ROOT / key


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """Return the process-wide settings (read once from the environment).

    Raises:
        ConfigurationError: a ``GEOASK_*`` variable holds an invalid value; the message names
            each variable, its value and what is expected.

    """
    try:
        return Settings()
    except ValidationError as error:
        raise ConfigurationError(invalid_settings_message(error)) from None


def invalid_settings_message(error: ValidationError) -> str:
    """One readable sentence per invalid ``GEOASK_*`` variable of a settings ValidationError."""
    problems = []
    for item in error.errors():
        name = "GEOASK_" + "_".join(str(part) for part in item["loc"]).upper()
        problems.append(f"{name}={os.environ.get(name, item.get('input'))!r}: {item['msg']}")
    return "invalid setting: " + "; ".join(problems)


def settings_table() -> str:
    """The Markdown table of every setting (variable, default, meaning) that README.md embeds.

    Regenerate with ``python -m geoask.settings``; a test keeps README.md in step with it.
    """
    rows = ["| variable | default | meaning |", "|---|---|---|"]
    for name, field in Settings.model_fields.items():
        if field.default_factory is not None:
            default = "see meaning"
        elif isinstance(field.default, Path):
            default = f"`{field.default.relative_to(Path(__file__).parents[1])}`" if (
                field.default.is_relative_to(Path(__file__).parents[1])) else f"`{field.default}`"
        else:
            default = "unset" if field.default is None else f"`{field.default}`"
        meaning = (field.description or "").replace("|", "\\|").replace("\n", " ")
        rows.append(f"| `GEOASK_{name.upper()}` | {default} | {meaning} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(settings_table())
