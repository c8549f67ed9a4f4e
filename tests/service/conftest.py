"""Fixtures of the service tests: a `geoask server` subprocess serving the scripted flow."""

from __future__ import annotations

from collections.abc import Iterator

import harness
import pytest
from pydantic_ai import models

models.ALLOW_MODEL_REQUESTS = False


@pytest.fixture(scope="session")
def served(database) -> Iterator[harness.Served]:
    """`geoask server` on a free port with answer-question = the scripted flow (shared)."""
    harness.require_sandbox()
    try:
        yield harness.acquire()
    finally:
        harness.release()
