"""What one question run uses: settings, variant, models, database, sandbox, schema, artifacts.

:func:`open_services` builds the production set from settings; tests build a
:class:`QuestionServices` with a scripted model provider and the real PostGIS and sandbox.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Protocol

from geoask.catalog.model import Catalog
from geoask.models.llm import ModelProvider
from geoask.records.artifact_registry import ArtifactRegistry
from geoask.records.execution_log import ExecutionRecorder
from geoask.records.run_artifacts import RunArtifacts
from geoask.retrieval.filters import RetrievalIntent
from geoask.retrieval.retriever import SchemaSubset
from geoask.run.composition import RunParts
from geoask.run.conversation import ConversationContext
from geoask.run.state import Limits
from geoask.run.variants import VARIANTS, Variant, VariantConfig
from geoask.settings import Settings
from geoask.sql.executor import SqlRunner
from sandbox.models import Sandbox


class SchemaSource(Protocol):
    """Retrieves the schema subset for a question or subtask (``SchemaRetriever``)."""

    def retrieve(self, query: str, intent: RetrievalIntent | None = None,
                 within: Sequence[str] | None = None, geometry: bool = True) -> SchemaSubset:
        """The schema subset for ``query`` under ``intent``'s filters, or of ``within``."""
        ...


class QuestionServices:
    """Everything the tasks of one question run need (in-process objects, never serialised).

    A plain class with ``__slots__`` on purpose, not a dataclass or pydantic model: Prefect
    walks every dataclass and pydantic parameter of every task call, field by field, looking
    for upstream futures, and walking the settings, catalog and growing log at each stage
    took about a tenth of a benchmark question's CPU; a plain object is one leaf. Without a
    ``__dict__`` it is also one leaf for the JSON encoder of a flow run's parameters (which
    walked ``vars()`` into the catalog before giving up: ~25 ms per question); the run shows
    it as ``<QuestionServices>``.

    Attributes:
        settings: the geoask settings.
        variant: the pipeline variant.
        models: role -> pydantic-ai model.
        sql_runner: executes guard-checked SQL read-only.
        sandbox: runs generated Python.
        schema: retrieves schema subsets.
        catalog: the semantic catalog (table summaries for the intent agent).
        run_id: the run's id (artifact folder name; a fresh 12-hex-digit id when not given).
        store: the run's artifact folder.
        recorder: the execution log being written.
        registry: the typed registry of the run's artifacts (``registry.json`` in the folder).
        conversation: the bounded context of a conversation turn, None for a standalone
            question (set by the flow).
        reused: refs of earlier turns' artifacts the run's steps read.

    """

    __slots__ = ("catalog", "conversation", "models", "recorder", "registry", "reused",
                 "run_id", "sandbox", "schema", "settings", "sql_runner", "store", "variant")

    def __init__(self, *, settings: Settings, variant: Variant, models: ModelProvider,
                 sql_runner: SqlRunner, sandbox: Sandbox, schema: SchemaSource,
                 catalog: Catalog, run_id: str | None = None,
                 conversation: ConversationContext | None = None) -> None:
        """Hold the parts; open the run's artifact folder, registry and execution log."""
        self.settings = settings
        self.variant = variant
        self.models = models
        self.sql_runner = sql_runner
        self.sandbox = sandbox
        self.schema = schema
        self.catalog = catalog
        self.run_id = run_id or uuid.uuid4().hex[:12]
        self.conversation = conversation
        self.reused: list[str] = []
        self.store = RunArtifacts(settings.artifact_root_url, self.run_id)
        self.registry = ArtifactRegistry(self.store.url("registry.json"))
        self.recorder = ExecutionRecorder(self.run_id, "", variant.value)
        self.recorder.log.artifact_folder = self.store.folder

    def __repr__(self) -> str:
        """``QuestionServices(run_id=..., variant=...)``."""
        return f"QuestionServices(run_id={self.run_id!r}, variant={self.variant.value})"

    @property
    def config(self) -> VariantConfig:
        """What the variant switches on or off."""
        return VARIANTS[self.variant]

    @property
    def limits(self) -> Limits:
        """The recovery bounds from settings."""
        return Limits.from_settings(self.settings)


def catalog_summary(catalog: Catalog) -> str:
    """One line per table: name, title, spatial and temporal granularity, coverage.

    The coverage is left out when the title already names its first year.
    """
    lines = []
    for table in catalog.tables:
        span = table.temporal_coverage
        coverage = (f", {span.start} to {span.end}"
                    if span and span.start[:4] not in table.title else "")
        lines.append(f"{table.name}: {table.title} ({table.spatial_granularity!s}; "
                     f"{table.temporal_granularity!s}{coverage})")
    return "\n".join(lines)


def open_services(settings: Settings, variant: Variant, models: ModelProvider) -> QuestionServices:
    """The production services: the parts of :func:`~geoask.run.composition.open_parts`, ``models``.

    Raises:
        ConfigurationError, CatalogError, RetrievalError, SandboxError: a part cannot be set up.

    """
    from geoask.run.composition import open_parts

    return services_from_parts(settings, variant, models, open_parts(settings))


def services_from_parts(settings: Settings, variant: Variant, models: ModelProvider,
                        parts: RunParts) -> QuestionServices:
    """A question run's services on already built (shared) parts."""
    return QuestionServices(settings=settings, variant=variant, models=models,
                            sql_runner=parts.sql_runner, sandbox=parts.sandbox,
                            schema=parts.schema, catalog=parts.catalog)
