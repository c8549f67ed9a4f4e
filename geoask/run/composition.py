"""The composition root: the parts of a question run, built from settings in one place.

Every entry point - ``geoask ask``, the ``answer-question`` flow, the benchmark and the
service - takes its agent models from :func:`model_provider` and its SQL runner, sandbox,
schema retriever and catalog from :func:`open_parts`; ``bench verify`` takes its program
runner from :func:`program_runner`. Each part is made by its own ``from_settings``, so a
setting such as ``GEOASK_SQL_MAX_RESULT_MIB`` reaches all of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from geoask.errors import ConfigurationError
from geoask.models.llm import QUESTION_ROLES, REFERENCE_MODEL, ModelProvider, model_for
from geoask.settings import Settings

if TYPE_CHECKING:
    from pydantic_ai.models import Model

    from geoask.cases.loader import CaseTarget
    from geoask.cases.model import BenchmarkCase
    from geoask.cases.runner import ProgramRunner
    from geoask.catalog.model import Catalog
    from geoask.retrieval.retriever import SchemaRetriever
    from geoask.sql.executor import PostgresSqlRunner
    from sandbox.bubblewrap import BubblewrapSandbox



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
    from geoask.models.reference import REFERENCE_MODELS, reference_model

    chosen = settings.model_copy(update={"model": model}) if model else settings
    replay = None
    if chosen.model in REFERENCE_MODELS:
        if cases is None:
            from geoask.cases.conversations import load_conversations, replay_cases
            from geoask.cases.loader import load_cases

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
    from geoask.db.urls import reader_url_for_database

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
    from geoask.catalog.model import load_catalog
    from geoask.retrieval.service import open_retriever
    from geoask.sql.executor import PostgresSqlRunner
    from sandbox.bubblewrap import BubblewrapSandbox

    catalog = load_catalog(settings.catalog_path)
    return RunParts(
        sql_runner=PostgresSqlRunner.from_settings(settings),
        sandbox=BubblewrapSandbox.from_settings(settings),
        schema=open_retriever(settings, catalog),
        catalog=catalog,
    )


def program_runner(settings: Settings) -> ProgramRunner:
    """The runner of benchmark programs (``bench verify``).

    Reader-role SQL, the sandbox, and the guard's row cap and catalog names from settings (no
    schema retriever needed).

    Raises:
        ConfigurationError, CatalogError, SandboxError: a part cannot be set up.

    """
    from geoask.cases.runner import ProgramRunner
    from geoask.catalog.model import load_catalog
    from geoask.sql.context import GuardContext
    from geoask.sql.executor import PostgresSqlRunner
    from sandbox.bubblewrap import BubblewrapSandbox

    return ProgramRunner(
        PostgresSqlRunner.from_settings(settings),
        BubblewrapSandbox.from_settings(settings),
        # each program sets its own policy on this context: read the PostGIS functions now
        GuardContext.from_settings(settings, catalog=load_catalog(settings.catalog_path),
                                   derive_functions=True),
    )
