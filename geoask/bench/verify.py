"""Recompute benchmark cases: reference program, projection, expected value and cross-check.

:func:`verify_case` runs a case's reference program under policy ``separated`` (the FULL
variant), projects the answer and compares it with ``expected.value``; then it runs the
independent cross-check (usually under policy ``postgis``) and compares that too. Any
difference is a :class:`CaseVerification` with ``ok`` False and the reasons listed.
:func:`fill_case` runs only the reference program and returns the projected answer, to be
written into the case file by ``geoask bench fill``.
"""

from __future__ import annotations

import shutil
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from geoask.bench.compare import compare_answers
from geoask.cases.model import BenchmarkCase
from geoask.cases.projection import ProjectionError, project_answer
from geoask.cases.runner import ProgramFailedError, ProgramRunner
from geoask.sql.context import SpatialPolicy


@dataclass
class CaseVerification:
    """Verdict on one case.

    Attributes:
        case_id: the case.
        reference_ok: the reference program ran and reproduced ``expected.value``.
        cross_check_ok: the cross-check ran and agreed (None when the case has none).
        problems: one line per disagreement or failure.
        reference_answer: the answer the reference program produced (None on failure).
        cross_check_answer: the answer the cross-check produced (None without one / on failure).
        seconds: wall time of the verification (s).

    """

    case_id: str
    reference_ok: bool = False
    cross_check_ok: bool | None = None
    problems: list[str] = field(default_factory=list)
    reference_answer: Any = None
    cross_check_answer: Any = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """True when the reference reproduced the expected value and any cross-check agreed."""
        return self.reference_ok and self.cross_check_ok is not False


def reference_answer(case: BenchmarkCase, runner: ProgramRunner, work_dir: Path,
                     policy: SpatialPolicy = SpatialPolicy.SEPARATED) -> Any:
    """Run the reference program (policy ``separated`` unless told) and return its answer.

    ``policy`` ``postgis`` runs a program written for a guard rule that has not landed yet
    (``bench verify --reference-policy postgis``).

    Raises:
        ProgramFailedError: a step failed.
        ProjectionError: the output does not fit the answer contract.

    """
    run = runner.run(case.reference, policy, work_dir / "reference")
    return project_answer(run.output, case.answer.answer_type, case.answer.projection)


def cross_check_answer(case: BenchmarkCase, runner: ProgramRunner, work_dir: Path) -> Any:
    """Run the cross-check program under its own policy and return its projected answer.

    Raises:
        ValueError: the case has no cross-check.
        ProgramFailedError: a step failed.
        ProjectionError: the output does not fit the answer contract.

    """
    check = case.cross_check
    if check is None:
        raise ValueError(f"case {case.id} has no cross-check")
    run = runner.run(check.program, check.policy, work_dir / "cross_check")
    projection = check.projection or case.answer.projection
    return project_answer(run.output, case.answer.answer_type, projection)


def verify_case(case: BenchmarkCase, runner: ProgramRunner, work_dir: Path,
                policy: SpatialPolicy = SpatialPolicy.SEPARATED) -> CaseVerification:
    """Recompute ``case`` (reference under ``policy``) and its cross-check; compare both."""
    started = time.perf_counter()
    verdict = CaseVerification(case.id)
    expected = case.expected.value
    answer_type, tolerance = case.answer.answer_type, case.expected.tolerance
    if expected is None:
        verdict.problems.append("expected.value is empty: run `geoask bench fill`")
    try:
        verdict.reference_answer = reference_answer(case, runner, work_dir, policy)
    except (ProgramFailedError, ProjectionError) as error:
        verdict.problems.append(f"reference: {error}")
    else:
        if expected is not None:
            comparison = compare_answers(expected, verdict.reference_answer, answer_type, tolerance)
            verdict.reference_ok = comparison.matches
            if not comparison.matches:
                verdict.problems.append(f"reference disagrees with expected: {comparison.reason}")
    if case.cross_check is not None:
        verdict.cross_check_ok = False
        try:
            verdict.cross_check_answer = cross_check_answer(case, runner, work_dir)
        except (ProgramFailedError, ProjectionError) as error:
            verdict.problems.append(f"cross-check: {error}")
        else:
            if expected is not None:
                comparison = compare_answers(
                    expected, verdict.cross_check_answer, answer_type, tolerance
                )
                verdict.cross_check_ok = comparison.matches
                if not comparison.matches:
                    verdict.problems.append(
                        f"cross-check ({case.cross_check.method}) disagrees: {comparison.reason}"
                    )
    shutil.rmtree(work_dir, ignore_errors=True)
    verdict.seconds = time.perf_counter() - started
    return verdict


@dataclass(frozen=True)
class VerifySummary:
    """Counts over a verify run.

    Attributes:
        total: cases verified.
        passed: cases whose reference and cross-check both agreed.
        cross_checked: cases that carry a cross-check.
        by_difficulty: passed cases per difficulty.
        by_scenario: passed cases per scenario.
        by_category: passed cases per category.
        sandbox_cases: passed cases whose reference program runs Python.
        seconds: wall time of the whole run (s).

    """

    total: int
    passed: int
    cross_checked: int
    by_difficulty: dict[str, int]
    by_scenario: dict[str, int]
    by_category: dict[str, int]
    sandbox_cases: int
    seconds: float


def summarize(
    cases: list[BenchmarkCase], verdicts: list[CaseVerification], seconds: float
) -> VerifySummary:
    """Count passed cases per difficulty, scenario and category."""
    passed_ids = {verdict.case_id for verdict in verdicts if verdict.ok}
    passed = [case for case in cases if case.id in passed_ids]
    return VerifySummary(
        total=len(verdicts),
        passed=len(passed),
        cross_checked=sum(1 for case in cases if case.cross_check is not None),
        by_difficulty=dict(Counter(str(case.difficulty) for case in passed)),
        by_scenario=dict(Counter(str(case.scenario) for case in passed)),
        by_category=dict(Counter(str(case.category) for case in passed)),
        sandbox_cases=sum(1 for case in passed if case.requires_sandbox),
        seconds=seconds,
    )
