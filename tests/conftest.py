"""Session fixtures shared by all tests: one Prefect test server, one loaded PostGIS.

``database`` starts the embedded cluster (or uses GEOASK_DATABASE_URL) and loads the demo data
through the real ``load_demo_data`` flow, once per session; ``spdata_loaded`` loads the spdata
benchmark database once per session into a database of its own.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


SPDATA = Path(__file__).resolve().parents[1] / "benchmark" / "databases" / "spdata"


@dataclass(frozen=True)
class LoadedDataset:
    """A dataset loaded by this session into a database of its own (``name``)."""

    manifest: Path
    summary: Any
    name: str


@pytest.fixture(scope="session")
def spdata_loaded(database: DatabaseHandle, tmp_path_factory: pytest.TempPathFactory
                  ) -> Iterator[LoadedDataset]:
    """spdata loaded once per session through the load_dataset flow into a throw-away database
    of the embedded cluster (``spdata_t<hex>``, dropped afterwards); the loader's tests and the
    spdata case test read it."""
    import psycopg
    import yaml

    from flows.load_dataset import load_dataset

    if uses_external_database(database.settings):
        pytest.skip("loads into a new database of the embedded cluster")
    raw = yaml.safe_load((SPDATA / "dataset.yaml").read_text())
    raw["database"] = name = f"spdata_t{uuid.uuid4().hex[:8]}"
    manifest = tmp_path_factory.mktemp("spdata") / "dataset.yaml"
    shutil.copytree(SPDATA / "data", manifest.parent / "data")
    manifest.write_text(yaml.safe_dump(raw))
    try:
        yield LoadedDataset(manifest, load_dataset(manifest), name)
    finally:
        with psycopg.connect(database.owner_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
