"""The stages of the benchmark flow: answer one case (a question subflow run), score, report.

A case run is persisted as ``<out>/runs/<model>/<variant>/repeat-<k>/<case id>.json`` (a
:class:`CaseRun`) as soon as it finishes, so an interrupted benchmark resumes with only the
runs that have no file yet (:func:`pending_runs`).

Scoring goes through :func:`score_run` (``geoask.bench.evaluate.score_case``); aggregation
and the report files through ``geoask.bench.metrics.summarize`` and
``geoask.bench.report.write_report`` (:func:`report_benchmark`).
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prefect import task
from prefect.cache_policies import NO_CACHE
from pydantic import BaseModel, Field

from geoask.answers import FinalAnswer
from geoask.bench.evaluate import CaseScore, score_case
from geoask.bench.loader import DEFAULT_CASES_DIR, load_cases
from geoask.bench.model import BenchmarkCase
from geoask.bench.reference import REFERENCE_MODELS, reference_model
from geoask.errors import BenchmarkCaseError, ConfigurationError
from geoask.execution_log import ExecutionLog
from geoask.settings import Settings, get_settings
from geoask.variants import Variant, parse_variant
from tasks.agent_calls import ModelProvider

_TASK: dict[str, Any] = {"cache_policy": NO_CACHE}


class CaseRun(BaseModel):
    """One answered (or failed) benchmark question, as persisted.

    Attributes:
        case_id, variant, repeat, model: what was run (``repeat`` is 0-based).
        status: ``answered``, ``rejected``, ``failed`` (the flow's outcome) or ``error`` (the
            run raised; ``message`` says why).
        answer: the final answer (``{answer_type, data_payload, summary}``) when answered.
        message: the answer's summary, the rejection or failure report, or the error.
        evidence: the run's evidence trail (one line per step and decision).
        time_s: wall time of the question run (s), Prefect orchestration included.
        log: the run's execution log (``execution_log.json``); None when it never started.
        artifact_folder: the run's artifact folder; flow_run_id: its Prefect flow run.

    """

    case_id: str
    variant: str
    repeat: int
    model: str
    status: str
    answer: dict[str, Any] | None = None
    message: str = ""
    evidence: list[str] = Field(default_factory=list)
    time_s: float
    log: dict[str, Any] | None = None
    artifact_folder: str = ""
    flow_run_id: str | None = None


@dataclass(frozen=True)
class RunKey:
    """Identifies one question run of a benchmark: model, variant, repeat and case."""

    model: str
    variant: str
    repeat: int
    case_id: str

    def path(self, out_dir: Path) -> Path:
        """Where the run's :class:`CaseRun` is persisted under ``out_dir``."""
        return (out_dir / "runs" / _safe(self.model) / self.variant / f"repeat-{self.repeat}"
                / f"{self.case_id}.json")


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


# --- planning the run ----------------------------------------------------------------------


def load_benchmark_cases(tasks_file: str | Path | None, limit: int | None) -> list[BenchmarkCase]:
    """The cases of ``tasks_file`` (a case file or folder; default ``benchmark/cases``).

    Only the first ``limit`` of them when given.

    Raises:
        BenchmarkCaseError: the file is missing or not valid under the case schema.
        ConfigurationError: ``limit`` is not positive.

    """
    if limit is not None and limit < 1:
        raise ConfigurationError(f"--limit must be at least 1, got {limit}")
    cases = [item.case for item in load_cases(Path(tasks_file or DEFAULT_CASES_DIR), ())]
    if not cases:
        raise BenchmarkCaseError(f"{tasks_file} holds no benchmark case")
    return cases[:limit] if limit else cases


def parse_variants(variant: str) -> list[Variant]:
    """``all`` -> the five variants; else a comma-separated list of variant names.

    >>> [v.value for v in parse_variants("full,base")]
    ['FULL', 'BASE']

    Raises:
        ConfigurationError: an unknown variant name.

    """
    if variant.strip().lower() == "all":
        return list(Variant)
    return list(dict.fromkeys(parse_variant(name) for name in variant.split(",") if name.strip()))


def run_keys(model: str, variants: Sequence[Variant], repeat: int,
             cases: Sequence[BenchmarkCase]) -> list[RunKey]:
    """Every question run of a benchmark, variant by variant, repeat by repeat."""
    if repeat < 1:
        raise ConfigurationError(f"--repeat must be at least 1, got {repeat}")
    return [RunKey(model, v.value, r, c.id) for v in variants for r in range(repeat)
            for c in cases]


def pending_runs(keys: Iterable[RunKey], out_dir: Path) -> list[RunKey]:
    """The runs without a persisted result under ``out_dir`` (what a resumed run still does)."""
    return [key for key in keys if not key.path(out_dir).is_file()]


def read_run(key: RunKey, out_dir: Path) -> CaseRun:
    """The persisted run of ``key``.

    Raises:
        BenchmarkCaseError: the file is unreadable (delete it to run the question again).

    """
    path = key.path(out_dir)
    try:
        return CaseRun.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise BenchmarkCaseError(f"cannot read the saved run {path} ({error}); delete it to "
                                 "run that question again") from None


def save_run(run: CaseRun, out_dir: Path) -> Path:
    """Persist ``run`` atomically (write a temporary file, then rename)."""
    path = RunKey(run.model, run.variant, run.repeat, run.case_id).path(out_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(f".tmp-{os.getpid()}-{threading.get_ident()}")
    temporary.write_text(run.model_dump_json(indent=1), encoding="utf-8")
    temporary.replace(path)
    return path


# --- answering one case --------------------------------------------------------------------

_SHARED: dict[str, Any] = {}
_SHARED_LOCK = threading.Lock()


def _shared_parts(settings: Settings) -> dict[str, Any]:
    """Database runner, sandbox, schema retriever and catalog, built once per process."""
    with _SHARED_LOCK:
        if not _SHARED:
            from geoask.catalog.model import load_catalog
            from geoask.db.urls import reader_url
            from geoask.retrieval.service import open_retriever
            from geoask.sql.executor import PostgresSqlRunner
            from sandbox.bubblewrap import BubblewrapSandbox

            catalog = load_catalog(settings.catalog_path)
            _SHARED.update(
                sql_runner=PostgresSqlRunner(reader_url(settings),
                                             statement_timeout_s=settings.statement_timeout_s),
                sandbox=BubblewrapSandbox.from_settings(settings),
                schema=open_retriever(settings, catalog), catalog=catalog,
            )
        return dict(_SHARED)


def model_provider(model: str, cases: Sequence[BenchmarkCase],
                   settings: Settings) -> ModelProvider:
    """The agents' models of one question run (role -> pydantic-ai model).

    A fresh reference model, or ``model`` for every agent (``GEOASK_MODEL_<ROLE>`` overrides
    still apply).

    Raises:
        ConfigurationError: the model cannot be built (no key, unknown provider...).

    """
    from geoask.llm import REFERENCE_MODEL, ROLES, model_for

    if model in REFERENCE_MODELS:
        replay = reference_model(cases, model).any_role_model()
        chosen = settings.model_copy(update={"model": REFERENCE_MODEL})

        def reference(role: str) -> Any:
            return model_for(role, chosen, reference_model=replay)

        return reference
    chosen = settings.model_copy(update={"model": model})
    for role in ROLES:
        model_for(role, chosen)  # fail before any work when a model is not configured

    def configured(role: str) -> Any:
        return model_for(role, chosen)

    return configured


def run_case(case: BenchmarkCase, key: RunKey, settings: Settings,
             services_factory: Callable[..., Any] | None = None) -> CaseRun:
    """Answer ``case`` through the ``answer-question`` flow (a subflow run named after the key).

    Any failure of the run is recorded as status ``error`` with the exception's type and
    message (a benchmark result, not a crash of the benchmark) - except a failure of Prefect's
    API (:func:`is_orchestration_error`), which is raised so the question is run again.
    ``services_factory(settings, variant, models)`` replaces the production services (tests).
    """
    from flows.answer_question import answer_question
    from tasks.services import QuestionServices

    begin = time.perf_counter()
    services: QuestionServices | None = None
    try:
        models = model_provider(key.model, [case], settings)
        variant = parse_variant(key.variant)
        if services_factory is not None:
            services = services_factory(settings, variant, models)
        else:
            services = QuestionServices(settings=settings, variant=variant, models=models,
                                        **_shared_parts(settings))
        name = f"{key.case_id}-{key.variant.lower()}-r{key.repeat}"
        result = answer_question.with_options(flow_run_name=name)(case.question,
                                                                  services=services)
    except Exception as error:  # a failed question is a benchmark result, not a crash
        if is_orchestration_error(error):
            raise  # Prefect's API failed, not the pipeline: the flow runs the question again
        return CaseRun(case_id=case.id, variant=key.variant, repeat=key.repeat, model=key.model,
                       status="error", message=f"{type(error).__name__}: {error}",
                       time_s=time.perf_counter() - begin,
                       log=services.recorder.log.to_json_dict() if services else None,
                       artifact_folder=services.store.folder if services else "")
    return CaseRun(
        case_id=case.id, variant=key.variant, repeat=key.repeat, model=key.model,
        status=result.status,
        answer=result.answer.model_dump(mode="json") if result.answer else None,
        message=result.message, evidence=result.evidence, time_s=time.perf_counter() - begin,
        log=services.recorder.log.to_json_dict(), artifact_folder=result.artifact_folder,
        flow_run_id=result.flow_run_id)


def is_orchestration_error(error: BaseException) -> bool:
    """True for a failure of the Prefect API rather than of the question's pipeline.

    That is an HTTP error status from the API (an overloaded server's 503) or a dropped
    connection.
    """
    import httpx
    from prefect.exceptions import PrefectHTTPStatusError

    return isinstance(error, PrefectHTTPStatusError | httpx.TransportError)


@task(name="benchmark-case", task_run_name="{key.case_id}-{key.variant}-r{key.repeat}", **_TASK)
def answer_case(case: BenchmarkCase, key: RunKey, out_dir: str) -> CaseRun:
    """Answer one benchmark question and persist the run."""
    run = run_case(case, key, get_settings(), _services_factory)
    save_run(run, Path(out_dir))
    return run


# Tests set this to build services on the in-memory schema index (None: production services).
_services_factory: Callable[..., Any] | None = None


def set_services_factory(factory: Callable[..., Any] | None) -> None:
    """Make :func:`answer_case` build question services with ``factory`` (None: production)."""
    global _services_factory
    _services_factory = factory


# --- scoring and the report ----------------------------------------------------------------


def score_run(case: BenchmarkCase, run: CaseRun) -> CaseScore:
    """The evaluator's score of one persisted run."""
    answer = FinalAnswer.model_validate(run.answer) if run.answer else None
    log = ExecutionLog.model_validate(run.log) if run.log else None
    return score_case(case, answer, log, variant=run.variant, repeat=run.repeat,
                      time_s=run.time_s)


@task(name="benchmark-report", **_TASK)
def report_benchmark(cases: list[BenchmarkCase], keys: list[RunKey], out_dir: str,
                     meta: dict[str, Any]) -> dict[str, Any]:
    """Score every run, write the report files and publish the Prefect artifacts.

    Returns the report as JSON data (``geoask.bench.metrics.BenchmarkReport.to_dict``) plus
    ``markdown`` (the rendered report) and ``files`` (where each report file was written).
    """
    from geoask.bench.metrics import summarize
    from geoask.bench.report import render_markdown, table_rows, write_report
    from geoask.run_artifacts import publish_markdown, publish_table

    by_id = {case.id: case for case in cases}
    folder = Path(out_dir)
    scores = [score_run(by_id[key.case_id], read_run(key, folder)) for key in keys]
    report = summarize(scores, cases, resamples=get_settings().bench_bootstrap_samples,
                       meta=meta)
    files = write_report(report, folder)
    markdown = render_markdown(report)
    publish_table("benchmark-report", table_rows(report), f"benchmark of model {meta['model']}")
    publish_markdown("benchmark-summary", markdown, f"benchmark report ({folder})")
    return {**report.to_dict(), "markdown": markdown, "files": dataclasses.asdict(files)}
