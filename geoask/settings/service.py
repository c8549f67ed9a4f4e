"""Settings of geoask: Prefect server and deployments (geoask/service/, issue #8).

One group of :class:`geoask.settings.Settings` (a ``GEOASK_*`` variable per field).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from geoask.base.ports import SERVER_PORT


class ServiceSettings(BaseModel):
    """Prefect server and deployments (geoask/service/, issue #8)."""

    server_port: int = Field(
        default=SERVER_PORT.default, ge=1024, le=65535,
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
