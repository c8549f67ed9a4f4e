"""Fixtures of the retrieval tests: the fixture catalog and the shipped static embedder."""

from __future__ import annotations

from pathlib import Path

import pytest

from geoask.catalog.model import Catalog, load_catalog
from geoask.embeddings.static import StaticEmbedder, shipped_embedder

FIXTURE_CATALOG = Path(__file__).with_name("catalog_fixture.yaml")


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return load_catalog(FIXTURE_CATALOG)


@pytest.fixture(scope="session")
def embedder() -> StaticEmbedder:
    return shipped_embedder()
