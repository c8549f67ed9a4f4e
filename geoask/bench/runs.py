"""A benchmark's runs: which question runs it has, where each is persisted, and its score.

A case run is persisted as ``<out>/runs/<model>/<variant>/repeat-<k>/<case id>.json`` (a
:class:`CaseRun`) as soon as it finishes, so an interrupted benchmark resumes with only the
runs that have no file yet, or whose run ended on an infrastructure failure (database,
model endpoint, sandbox or Prefect API down: ``CaseRun.infrastructure``), which are kept in
the report as ``infrastructure`` until redone (:func:`pending_runs`). Scoring goes through
:func:`score_run` (``geoask.bench.evaluate.score_case``). The Prefect tasks that answer a
case and write the report are thin shells in ``flows/benchmark_case.py`` and ``tasks/benchmark.py``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from geoask.base.interrupt import stop_requested
from geoask.bench.evaluate import CaseScore, score_case
from geoask.bench.parameters import MAX_REPEAT, safe_name
from geoask.cases.model import BenchmarkCase
from geoask.errors import BenchmarkCaseError, ConfigurationError, QuestionInterruptedError
from geoask.records.execution_log import ExecutionLog
from geoask.run.composition import RunParts, open_parts
from geoask.run.variants import Variant
from geoask.settings import Settings
from geoask.vocabulary.answers import FinalAnswer


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
        names: the names of the answer's codes (the run's lookup by key), shown beside them.
        infrastructure: the run ended on an infrastructure failure
            (``geoask.models.retry.is_infrastructure_failure``): scored with root cause
            ``infrastructure`` and run again when the benchmark resumes.

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
    names: dict[str, str] = Field(default_factory=dict)
    infrastructure: bool = False


@dataclass(frozen=True)
class RunKey:
    """Identifies one question run of a benchmark: model, variant, repeat and case."""

    model: str
    variant: str
    repeat: int
    case_id: str

    def path(self, out_dir: Path) -> Path:
        """Where the run's :class:`CaseRun` is persisted under ``out_dir``."""
        return (out_dir / "runs" / safe_name(self.model) / self.variant / f"repeat-{self.repeat}"
                / f"{self.case_id}.json")


def run_keys(model: str, variants: Sequence[Variant], repeat: int,
             cases: Sequence[BenchmarkCase]) -> list[RunKey]:
    """Every question run of a benchmark, variant by variant, repeat by repeat.

    Raises:
        ConfigurationError: ``repeat`` is not 1 to :data:`MAX_REPEAT`.

    """
    if not 1 <= repeat <= MAX_REPEAT:
        raise ConfigurationError(f"--repeat must be 1 to {MAX_REPEAT}, got {repeat}")
    return [RunKey(model, v.value, r, c.id) for v in variants for r in range(repeat)
            for c in cases]


def clear_runs(out_dir: Path) -> int:
    """Delete the persisted runs under ``out_dir`` (``--fresh``); return how many.

    Only files laid out as runs (``runs/<model>/<variant>/repeat-<k>/<case id>.json``) and
    the folders they leave empty go; anything else a person keeps there stays.
    """
    removed = 0
    for path in (out_dir / "runs").glob("*/*/repeat-*/*.json"):
        path.unlink()
        removed += 1
    for folder in sorted((out_dir / "runs").glob("**/"), key=lambda p: -len(p.parts)):
        with contextlib.suppress(OSError):
            folder.rmdir()  # only when empty
    return removed


def pending_runs(keys: Iterable[RunKey], out_dir: Path) -> list[RunKey]:
    """The runs a resumed benchmark still does: not persisted, or ended on infrastructure.

    A persisted file that cannot be read counts as not persisted (it is written again).
    """
    return [key for key in keys if not _finished(key, out_dir)]


def _finished(key: RunKey, out_dir: Path) -> bool:
    if not key.path(out_dir).is_file():
        return False
    try:
        return not read_run(key, out_dir).infrastructure
    except BenchmarkCaseError:
        return False


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
    """Persist ``run`` atomically (write a temporary file, then rename).

    Raises:
        QuestionInterruptedError: SIGINT/SIGTERM asked the process to stop
            (:func:`geoask.base.interrupt.stop_requested`): a run ending after that was cut
            short, so it is not finished and is not persisted (a rerun does it).

    """
    if stop_requested():
        raise QuestionInterruptedError(f"{run.case_id} was interrupted; it is not recorded")
    path = RunKey(run.model, run.variant, run.repeat, run.case_id).path(out_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(f".tmp-{os.getpid()}-{threading.get_ident()}")
    temporary.write_text(run.model_dump_json(indent=1), encoding="utf-8")
    temporary.replace(path)
    return path


def infrastructure_run(key: RunKey, error: BaseException) -> CaseRun:
    """The record of a question whose task never ran (Prefect's API failed every time).

    Status ``error``, flagged ``infrastructure`` (so it is scored as such and redone on
    resume), with the error as the message.
    """
    return CaseRun(case_id=key.case_id, variant=key.variant, repeat=key.repeat, model=key.model,
                   status="error", message=f"{type(error).__name__}: {error}", time_s=0.0,
                   infrastructure=True)


_SHARED: dict[tuple[str, str | None], RunParts] = {}


_SHARED_LOCK = threading.Lock()


def shared_parts(settings: Settings) -> RunParts:
    """The run parts of :func:`geoask.run.composition.open_parts`, built once per process.

    Once per catalog and database: a benchmark of cases about another catalog or database
    (a case file's ``catalog:``/``database:``) gets its own parts.
    """
    key = (str(settings.catalog_path), settings.database_url)
    with _SHARED_LOCK:
        if key not in _SHARED:
            _SHARED[key] = open_parts(settings)
        return _SHARED[key]


def score_run(case: BenchmarkCase, run: CaseRun) -> CaseScore:
    """The evaluator's score of one persisted run.

    An infrastructure failure's ``reason`` is the run's error message (what was down).
    """
    answer = FinalAnswer.model_validate(run.answer) if run.answer else None
    log = ExecutionLog.model_validate(run.log) if run.log else None
    score = score_case(case, answer, log, variant=run.variant, repeat=run.repeat,
                       time_s=run.time_s, infrastructure=run.infrastructure)
    return dataclasses.replace(score, reason=run.message) if run.infrastructure else score
