"""Fixtures for the SQL guard, executor and export tests.

``reader_url`` is the read-only role's URL of the loaded demo database: from the session
fixture ``database`` (tests/conftest.py), or - to iterate on these tests against another
server - from GEOASK_SQL_TEST_READER_URL.
"""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="session")
def reader_url(request: pytest.FixtureRequest) -> str:
    url = os.environ.get("GEOASK_SQL_TEST_READER_URL")
    if url:
        return url
    return request.getfixturevalue("database").reader_url
