"""Session fixtures shared by all tests: one Prefect test server, one loaded PostGIS.

``database`` starts the embedded cluster (or uses GEOASK_DATABASE_URL) and loads the demo data
through the real ``load_demo_data`` flow, once per session.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

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
def database(prefect_harness: None) -> DatabaseHandle:
    """The PostGIS database with the demo data loaded and verified."""
    from flows.load_demo_data import load_demo_data

    settings = get_settings()
    if not uses_external_database(settings):
        EmbeddedCluster(settings).up()
    load_demo_data()
    return DatabaseHandle(reader_url(settings), owner_url(settings), settings)
