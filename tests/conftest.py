"""Session fixtures shared by all tests: one Prefect test server, one loaded PostGIS.

``database`` starts the embedded cluster (or uses GEOASK_DATABASE_URL) and loads the demo data
through the real ``load_demo_data`` flow, once per session.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import geoask  # noqa: F401  (offline environment before Prefect is imported)
from geoask.db.cluster import EmbeddedCluster
from geoask.db.urls import owner_url, reader_url, uses_external_database
from geoask.settings import Settings, get_settings


@dataclass(frozen=True)
class DatabaseHandle:
    """URLs of the loaded test database and the settings it was started with."""

    reader_url: str
    owner_url: str
    settings: Settings


@pytest.fixture(scope="session")
def prefect_harness() -> Iterator[None]:
    """One temporary Prefect server for the whole session (it needs 10–20 s to start)."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=180):
        yield


@pytest.fixture(scope="session")
def run_settings() -> Iterator[Settings]:
    """Settings whose artifact and sandbox folders are the session's own, under /tmp.

    The sandbox's unprivileged uid must traverse them, which pytest's 0700 tmp_path forbids.
    """
    work = Path("/tmp") / f"geoask-tests-{os.getpid()}"
    work.mkdir(mode=0o755, exist_ok=True)
    yield get_settings().model_copy(update={
        "artifact_root": str(work / "artifacts"),
        "sandbox_work_dir": work / "sandbox-runs",
        "sandbox_artifacts_url": str(work / "sandbox-artifacts"),
    })
    shutil.rmtree(work, ignore_errors=True)


@pytest.fixture(scope="session")
def database(prefect_harness: None) -> DatabaseHandle:
    """The PostGIS database with the demo data loaded and verified."""
    from flows.load_demo_data import load_demo_data

    settings = get_settings()
    if not uses_external_database(settings):
        EmbeddedCluster(settings).up()
    load_demo_data()
    return DatabaseHandle(reader_url(settings), owner_url(settings), settings)
