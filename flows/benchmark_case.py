"""The benchmark's case task: answer one case through the ``answer-question`` flow, persist it.

A task that runs a subflow is wiring, so it lives with the flows (tasks/ hold the stages); the
runs, their persistence and scoring are in :mod:`geoask.bench.runs`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from prefect import task

from flows.answer_question import answer_question
from geoask.base.interrupt import stop_requested
from geoask.bench.runs import CaseRun, RunKey, save_run, shared_parts
from geoask.cases.loader import CaseTarget
from geoask.cases.model import BenchmarkCase
from geoask.errors import QuestionInterruptedError
from geoask.models.retry import is_infrastructure_failure, is_orchestration_error
from geoask.run.composition import (
    QuestionServices,
    model_provider,
    services_from_parts,
    settings_for_target,
)
from geoask.run.stops import creating_run
from geoask.run.variants import parse_variant
from geoask.settings import Settings, get_settings
from tasks.options import TASK


def run_case(case: BenchmarkCase, key: RunKey, settings: Settings,
             services_factory: Callable[..., Any] | None = None) -> CaseRun:
    """Answer ``case`` through the ``answer-question`` flow (a subflow run named after the key).

    Any failure of the run is recorded as status ``error`` with the exception's type and
    message (a benchmark result, not a crash of the benchmark), flagged ``infrastructure``
    when the database, model endpoint, sandbox or Prefect API failed
    (:func:`geoask.models.retry.is_infrastructure_failure`) - except a failure of Prefect's API
    (:func:`geoask.models.retry.is_orchestration_error`), which is raised so the question is run
    again at once.
    ``services_factory(settings, variant, models)`` replaces the production services (tests).
    """
    begin = time.perf_counter()
    services: QuestionServices | None = None
    try:
        models = model_provider(settings, key.model, cases=[case])
        variant = parse_variant(key.variant)
        if services_factory is not None:
            services = services_factory(settings, variant, models)
        else:
            services = services_from_parts(settings, variant, models, shared_parts(settings))
        question = answer_question.with_options(
            flow_run_name=f"{key.case_id}-{key.variant.lower()}-r{key.repeat}")
        # Only the check and the run's creation inside: a stop's sweep waits (boundedly) for
        # the run this thread may be creating, so nothing slow may come between the two.
        with creating_run():
            if stop_requested():  # geoask is stopping: start no new question run
                raise QuestionInterruptedError(f"{case.id}: geoask was stopped before it "
                                               "started")
            result = question(case.question, services=services)
    except Exception as error:  # a failed question is a benchmark result, not a crash
        if is_orchestration_error(error):
            raise  # Prefect's API failed, not the pipeline: the flow runs the question again
        return CaseRun(case_id=case.id, variant=key.variant, repeat=key.repeat, model=key.model,
                       status="error", message=f"{type(error).__name__}: {error}",
                       infrastructure=is_infrastructure_failure(error),
                       time_s=time.perf_counter() - begin,
                       log=services.recorder.log.to_json_dict() if services else None,
                       artifact_folder=services.store.folder if services else "")
    return CaseRun(
        case_id=case.id, variant=key.variant, repeat=key.repeat, model=key.model,
        status=result.status,
        answer=result.answer.model_dump(mode="json") if result.answer else None,
        message=result.message, evidence=result.evidence, time_s=time.perf_counter() - begin,
        log=services.recorder.log.to_json_dict(), artifact_folder=result.artifact_folder,
        flow_run_id=result.flow_run_id, names=result.names)


@task(name="benchmark-case", task_run_name="{key.case_id}-{key.variant}-r{key.repeat}", **TASK)
def answer_case(case: BenchmarkCase, key: RunKey, out_dir: str,
                target: CaseTarget | None = None) -> CaseRun:
    """Answer one benchmark question (on its case file's catalog/database) and persist the run.

    After SIGINT/SIGTERM the run is not persisted (:func:`geoask.bench.runs.save_run`).
    """
    settings = settings_for_target(get_settings(), target or CaseTarget())
    run = run_case(case, key, settings, _services_factory)
    save_run(run, Path(out_dir))
    return run


# Tests set this to build services on the in-memory schema index (None: production services).
_services_factory: Callable[..., Any] | None = None


def set_services_factory(factory: Callable[..., Any] | None) -> None:
    """Make :func:`answer_case` build question services with ``factory`` (None: production)."""
    global _services_factory
    _services_factory = factory
