"""The composition root: the parts of a question run, built from settings in one place.

Every entry point - ``geoask ask`` and ``ask()``, the ``answer-question`` flow, the benchmark
and the service - takes a question run's :class:`QuestionServices` from :func:`open_services`
(or :func:`services_from_parts` on parts shared by many runs): its agent models from
:func:`model_provider` and its SQL runner, sandbox, schema retriever and catalog from
:func:`open_parts`; ``bench verify`` takes its program runner from :func:`program_runner`.
Each part is made by its own ``from_settings``, so a setting such as
``GEOASK_SQL_MAX_RESULT_MIB`` reaches all of them. tests build a :class:`QuestionServices` with
a scripted model provider and the real PostGIS and sandbox.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from geoask.base import heap
from geoask.cases.conversations import load_conversations, replay_cases
from geoask.cases.loader import load_cases
from geoask.cases.runner import ProgramRunner
from geoask.catalog.model import Catalog, load_catalog
from geoask.db.urls import reader_url_for_database
from geoask.errors import ConfigurationError
from geoask.models.llm import QUESTION_ROLES, REFERENCE_MODEL, ModelProvider, model_for
from geoask.models.reference import REFERENCE_MODELS, reference_model
from geoask.records.artifact_registry import REGISTRY_FILE, ArtifactRegistry
from geoask.records.execution_log import ExecutionRecorder
from geoask.records.run_artifacts import RunArtifacts
from geoask.retrieval.filters import RetrievalIntent
from geoask.retrieval.retriever import SchemaSubset
from geoask.retrieval.service import open_retriever
from geoask.run.conversation import ConversationContext
from geoask.run.state import Limits
from geoask.run.variants import VARIANTS, Variant, VariantConfig, parse_variant
from geoask.settings import Settings
from geoask.sql.context import GuardContext
from geoask.sql.executor import PostgresSqlRunner, SqlRunner
from sandbox.bubblewrap import BubblewrapSandbox
from sandbox.models import Sandbox

if TYPE_CHECKING:
    from pydantic_ai.models import Model

    from geoask.cases.loader import CaseTarget
    from geoask.cases.model import BenchmarkCase
    from geoask.retrieval.retriever import SchemaRetriever


def model_provider(
    settings: Settings,
    model: str | None = None,
    *,
    cases: Sequence[BenchmarkCase] | None = None,
    roles: Sequence[str] = QUESTION_ROLES,
) -> ModelProvider:
    """The models of one run, every role of ``roles`` built (and so checked) before any work.

    Args:
        settings: the geoask settings (``GEOASK_MODEL`` and the per-role overrides).
        model: replaces ``GEOASK_MODEL`` for this run (per-role overrides still apply).
        cases: for the offline ``reference``/``reference-faulty`` models, the benchmark
            cases whose verified programs are replayed (default: the cases of
            ``GEOASK_BENCH_CASES_PATH``, the shipped demo cases unless set, and the turns of
            the conversations of ``GEOASK_BENCH_CONVERSATIONS_PATH``).
        roles: the agent roles the run uses (default: a question run's; ``("catalog",)`` for
            ``geoask catalog draft --describe``).

    Raises:
        ConfigurationError: a role has no model or one that cannot be built (unknown
            provider, missing key or endpoint); the message says what to set.

    """
    chosen = settings.model_copy(update={"model": model}) if model else settings
    replay = None
    if chosen.model in REFERENCE_MODELS:
        if cases is None:
            cases = [item.case for item in load_cases(chosen.bench_cases_path)]
            if chosen.bench_conversations_path.exists():
                cases += replay_cases(load_conversations(chosen.bench_conversations_path))
        replay = reference_model(cases, chosen.model).any_role_model()
        chosen = chosen.model_copy(update={"model": REFERENCE_MODEL})
    models = {role: model_for(role, chosen, reference_model=replay) for role in roles}

    def provide(role: str) -> Model:
        try:
            return models[role]
        except KeyError:
            raise ConfigurationError(
                f"unknown agent role {role!r}; expected one of {', '.join(models)}"
            ) from None

    return provide


@dataclass(frozen=True)
class RunParts:
    """The long-lived parts a question run uses (shared by the runs of one process).

    Attributes:
        sql_runner: the read-only PostgreSQL runner (reader role; timeouts and size cap from
            settings).
        sandbox: the bubblewrap sandbox for generated Python.
        schema: the schema retriever over the catalog's chroma index.
        catalog: the semantic catalog.

    """

    sql_runner: PostgresSqlRunner
    sandbox: BubblewrapSandbox
    schema: SchemaRetriever
    catalog: Catalog


def settings_for_target(settings: Settings, target: CaseTarget) -> Settings:
    """``settings`` for cases about another catalog and/or database (a case file's target).

    The catalog path replaces GEOASK_CATALOG_PATH; a database name gives the reader role's
    conninfo for that database on the same server (:func:`geoask.db.urls.reader_url_for_database`)
    as GEOASK_DATABASE_URL. A target naming neither returns ``settings`` unchanged.

    Raises:
        DatabaseError: a database is named but the embedded cluster has no credentials yet.

    """
    update: dict[str, object] = {}
    if target.catalog is not None:
        update["catalog_path"] = target.catalog
    if target.database is not None:
        update["database_url"] = reader_url_for_database(settings, target.database)
    return settings.model_copy(update=update) if update else settings


def open_parts(settings: Settings) -> RunParts:
    """Build the database runner, sandbox, schema retriever and catalog from ``settings``.

    Raises:
        ConfigurationError, CatalogError, RetrievalError, SandboxError: a part cannot be set up.

    """
    catalog = load_catalog(settings.catalog_path)
    parts = RunParts(
        sql_runner=PostgresSqlRunner.from_settings(settings),
        sandbox=BubblewrapSandbox.from_settings(settings),
        schema=open_retriever(settings, catalog),
        catalog=catalog,
    )
    heap.settle()
    return parts


def program_runner(settings: Settings) -> ProgramRunner:
    """The runner of benchmark programs (``bench verify``).

    Reader-role SQL, the sandbox, and the guard's row cap and catalog names from settings (no
    schema retriever needed).

    Raises:
        ConfigurationError, CatalogError, SandboxError: a part cannot be set up.

    """
    runner = ProgramRunner(
        PostgresSqlRunner.from_settings(settings),
        BubblewrapSandbox.from_settings(settings),
        # each program sets its own policy on this context: read the PostGIS functions now
        GuardContext.from_settings(settings, catalog=load_catalog(settings.catalog_path),
                                   derive_functions=True),
    )
    heap.settle()
    return runner


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
        reused: refs of earlier turns' artifacts the run's steps read (the flow records each
            step result's).

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
        self.registry = ArtifactRegistry(self.store.url(REGISTRY_FILE))
        self.recorder = ExecutionRecorder(self.run_id, "", variant.value, store=self.store,
                                          secrets=settings.secret_values())
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


def open_services(settings: Settings, variant: Variant | str | None = None,
                  model: str | None = None, *,
                  models: ModelProvider | None = None) -> QuestionServices:
    """A question run's production services: its models, then the parts of :func:`open_parts`.

    Args:
        settings: the geoask settings.
        variant: the pipeline variant, by value or name (default ``GEOASK_VARIANT``).
        model: replaces ``GEOASK_MODEL`` for this run (see :func:`model_provider`).
        models: the run's models when already built (then ``model`` is not read).

    Raises:
        ConfigurationError: no model for some agent, or one that cannot be built (unknown
            provider, missing key or endpoint) - raised before any other part is set up; an
            unknown variant.
        CatalogError, RetrievalError, SandboxError: another part cannot be set up.

    """
    chosen = variant if isinstance(variant, Variant) else parse_variant(variant or
                                                                         settings.variant)
    models = models or model_provider(settings, model)  # fails before any work
    return services_from_parts(settings, chosen, models, open_parts(settings))


def services_from_parts(settings: Settings, variant: Variant, models: ModelProvider,
                        parts: RunParts) -> QuestionServices:
    """A question run's services on already built (shared) parts."""
    return QuestionServices(settings=settings, variant=variant, models=models,
                            sql_runner=parts.sql_runner, sandbox=parts.sandbox,
                            schema=parts.schema, catalog=parts.catalog)
