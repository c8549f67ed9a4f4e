"""Fixtures of the whole-flow tests: real PostGIS, real sandbox, in-memory schema index.

``make_services(scripted, variant=...)`` builds the services of one question run with a
:class:`ScriptedModel` as every agent's model.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator

import psycopg
import pytest
from pydantic_ai import models

from geoask.catalog.model import Catalog, load_catalog
from geoask.embeddings.static import shipped_embedder
from geoask.models.scripted import ScriptedModel
from geoask.retrieval.index import InMemorySchemaIndex
from geoask.retrieval.retriever import RetrievalConfig, SchemaRetriever
from geoask.run.composition import QuestionServices
from geoask.run.variants import Variant
from geoask.settings import Settings, get_settings
from geoask.sql.executor import PostgresSqlRunner
from sandbox.bubblewrap import BubblewrapSandbox
from sandbox.runtime import ensure_runtime

models.ALLOW_MODEL_REQUESTS = False


@pytest.fixture(scope="session")
def flow_settings(run_settings: Settings) -> Settings:
    """Settings with artifact and sandbox folders of their own (tests/conftest.py)."""
    return run_settings


@pytest.fixture(scope="session")
def real_sandbox(flow_settings: Settings) -> BubblewrapSandbox:
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed (apt-get install bubblewrap)")
    if os.geteuid() != 0:
        pytest.skip("the sandbox must be started as root")
    ensure_runtime(flow_settings.sandbox_runtime_path, flow_settings.sandbox_base_python)
    return BubblewrapSandbox.from_settings(flow_settings)


@pytest.fixture(scope="session")
def catalog(flow_settings: Settings) -> Catalog:
    return load_catalog(flow_settings.catalog_path)


@pytest.fixture(scope="session")
def schema_retriever(catalog: Catalog, flow_settings: Settings) -> SchemaRetriever:
    retriever = SchemaRetriever(catalog, InMemorySchemaIndex(), shipped_embedder(),
                                RetrievalConfig.from_settings(flow_settings))
    retriever.ensure_index()
    return retriever


@pytest.fixture(scope="session")
def reader(database) -> Iterator[psycopg.Connection]:
    """A read-only connection for computing expected values independently of the flow."""
    with psycopg.connect(database.reader_url) as connection:
        connection.read_only = True
        yield connection


@pytest.fixture
def make_services(
    database, real_sandbox: BubblewrapSandbox, schema_retriever: SchemaRetriever,
    catalog: Catalog, flow_settings: Settings,
) -> Callable[..., QuestionServices]:
    def build(scripted: ScriptedModel, variant: Variant = Variant.FULL,
              **setting_overrides: object) -> QuestionServices:
        settings = flow_settings.model_copy(update=setting_overrides)
        return QuestionServices(
            settings=settings, variant=variant, models=scripted.model,
            sql_runner=PostgresSqlRunner(database.reader_url),
            sandbox=real_sandbox, schema=schema_retriever, catalog=catalog,
        )

    return build


@pytest.fixture
def api_settings(monkeypatch, database, real_sandbox, flow_settings):
    """The process settings pointed at the session's artifact and sandbox folders."""
    monkeypatch.setenv("GEOASK_ARTIFACT_ROOT", flow_settings.artifact_root)
    monkeypatch.setenv("GEOASK_SANDBOX_WORK_DIR", str(flow_settings.sandbox_work_dir))
    monkeypatch.setenv("GEOASK_SANDBOX_ARTIFACTS_URL", flow_settings.sandbox_artifacts_url)
    get_settings.cache_clear()
    yield get_settings()
    get_settings.cache_clear()
