"""Aggregation: SSA/FEPSR per group, list measures over list questions only, routing, bootstrap."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from test_evaluate import make_case

from geoask.bench.evaluate import CaseScore
from geoask.bench.metrics import (
    CATEGORY,
    DIFFICULTY,
    bootstrap_interval,
    routing_metrics,
    summarize,
)
from geoask.errors import BenchmarkCaseError

CASES = [
    make_case("scalar", {"value_field": "n", "unit": "count"}, 1, case_id="t-001"),
    make_case("entity_list", {"entity_field": "id"}, ["A", "B"], case_id="t-002",
              difficulty="medium", category="grouped_aggregation"),
    make_case("ranked_list", {"entity_field": "id"}, [{"id": "A"}, {"id": "B"}],
              case_id="t-003", difficulty="hard", category="grouped_aggregation",
              requires_sandbox=True),
    make_case("object", {"fields": ["a"]}, {"a": 1}, case_id="t-004", difficulty="hard",
              category="temporal_comparison", requires_sandbox=True),
]


def score(case_id: str, **changes: Any) -> CaseScore:
    case = next(c for c in CASES if c.id == case_id)
    is_list = case.answer.answer_type.value in ("entity_list", "ranked_list", "records")
    base = CaseScore(
        case_id=case_id, variant="FULL", repeat=0, difficulty="easy", category="x",
        answer_type=case.answer.answer_type.value, outcome="answered", answered=True,
        answer_type_ok=True, schema_valid=True, ssa=True, reason="",
        exact_set=True if is_list else None,
        ranking_exact=True if case.answer.answer_type.value == "ranked_list" else None,
        entity_precision=1.0 if is_list else None, entity_recall=1.0 if is_list else None,
        entity_f1=1.0 if is_list else None, requires_sandbox=case.requires_sandbox,
        routed_to_sandbox=case.requires_sandbox, failed_calls=0, guardrail_retries=0,
        first_path_success=True, time_s=2.0, tool_calls=2, prompt_tokens=1000,
        completion_tokens=100,
        total_tokens=1100, root_cause=None)
    return dataclasses.replace(base, **changes)


FAILED = {"ssa": False, "first_path_success": False, "root_cause": "sql_logic",
          "reason": "value: expected 1, got 2"}


@pytest.mark.parametrize(("pairs", "counts", "accuracy", "precision", "recall", "fpr"), [
    ([(True, True), (False, False)], (1, 0, 0, 1), 1.0, 1.0, 1.0, 0.0),
    ([(True, False), (False, True)], (0, 1, 1, 0), 0.0, 0.0, 0.0, 1.0),
    ([(True, True), (True, False), (False, True), (False, False)], (1, 1, 1, 1), 0.5, 0.5, 0.5,
     0.5),
    ([(False, False), (False, False)], (0, 0, 0, 2), 1.0, None, None, 0.0),
    ([(True, True), (True, True), (False, True)], (2, 1, 0, 0), 2 / 3, 2 / 3, 1.0, 1.0),
])
def test_routing_metrics(pairs, counts, accuracy, precision, recall, fpr):
    scores = [score("t-001", requires_sandbox=need, routed_to_sandbox=used) for need, used in pairs]
    routing = routing_metrics(scores)
    assert (routing.tp, routing.fp, routing.fn, routing.tn) == counts
    assert routing.accuracy == pytest.approx(accuracy)
    assert routing.precision == (pytest.approx(precision) if precision is not None else None)
    assert routing.recall == (pytest.approx(recall) if recall is not None else None)
    assert routing.false_positive_rate == pytest.approx(fpr)
    if precision is not None and recall is not None and precision + recall:
        assert routing.f1 == pytest.approx(2 * precision * recall / (precision + recall))


def test_summarize_overall_and_groups():
    scores = [score("t-001"), score("t-002", **FAILED, exact_set=False, entity_precision=0.5,
                                    entity_recall=1.0, entity_f1=2 / 3),
              score("t-003", guardrail_retries=2, first_path_success=False, time_s=4.0,
                    total_tokens=3100, prompt_tokens=3000),
              score("t-004", routed_to_sandbox=False, **FAILED)]
    report = summarize(scores, CASES)
    overall = report.group("FULL")
    assert (overall.cases, overall.runs, overall.repeats) == (4, 4, 1)
    assert overall.ssa == pytest.approx(0.5)
    assert overall.fepsr == pytest.approx(0.25)
    # one repeat still has an interval: the cases are resampled (two of four correct)
    assert overall.ssa_interval is not None
    assert 0.0 <= overall.ssa_interval.low < 0.5 < overall.ssa_interval.high <= 1.0
    assert overall.routing.accuracy == pytest.approx(0.75)
    assert overall.routing_interval is not None and overall.routing_interval.high == 1.0
    assert overall.mean_tool_calls == pytest.approx(2.0)
    single = summarize([score("t-001")], CASES).group("FULL")
    assert single.ssa_interval is None and single.routing_interval is None  # one case
    assert (overall.list_runs, overall.ranked_runs) == (2, 1)
    assert overall.exact_set == pytest.approx(0.5)
    assert overall.ranking_exact == pytest.approx(1.0)
    assert overall.entity_precision == pytest.approx(0.75)
    assert overall.entity_f1 == pytest.approx((1 + 2 / 3) / 2)
    assert overall.mean_time_s == pytest.approx(2.5)
    assert overall.total_time_s == pytest.approx(10.0)
    assert overall.mean_total_tokens == pytest.approx((1100 * 3 + 3100) / 4)
    assert (overall.guardrail_retries, overall.recovered) == (2, 1)
    assert overall.root_causes == {"sql_logic": 2}
    assert (overall.routing.tp, overall.routing.fn) == (1, 1)
    # difficulty and category come from the cases, not from the scores
    hard = report.group("FULL", DIFFICULTY, "hard")
    assert (hard.cases, hard.ssa) == (2, pytest.approx(0.5))
    assert report.group("FULL", DIFFICULTY, "easy").cases == 1
    aggregation = report.group("FULL", CATEGORY, "grouped_aggregation")
    assert (aggregation.cases, aggregation.ssa) == (2, pytest.approx(0.5))
    with pytest.raises(KeyError):
        report.group("FULL", CATEGORY, "spatial")  # no run in that category
    assert report.unscored == {}


def test_list_measures_are_none_without_list_questions():
    overall = summarize([score("t-001"), score("t-004")], CASES).group("FULL")
    assert overall.list_runs == 0
    assert (overall.exact_set, overall.ranking_exact, overall.entity_f1) == (None, None, None)


def test_repeats_get_a_bootstrap_interval():
    scores = [score(case.id, repeat=r, **(FAILED if (r, case.id) in {(1, "t-001"),
                                                                    (2, "t-001"),
                                                                    (2, "t-002")} else {}))
              for r in range(3) for case in CASES]
    overall = summarize(scores, CASES).group("FULL")
    assert overall.repeats == 3 and overall.runs == 12
    assert overall.ssa == pytest.approx(9 / 12)
    interval = overall.ssa_interval
    assert interval is not None
    # per-case SSA over the repeats: 1/3, 2/3, 1, 1 -> resampled means lie in [1/3, 1]
    assert 1 / 3 <= interval.low < overall.ssa < interval.high <= 1.0
    # a case that failed in every repeat widens the interval more than spread-out failures
    concentrated = [score(case.id, repeat=r, **(FAILED if case.id == "t-001" else {}))
                    for r in range(3) for case in CASES]
    wide = summarize(concentrated, CASES).group("FULL").ssa_interval
    assert wide is not None and wide.low == pytest.approx(0.25) and wide.high == 1.0
    assert summarize(scores, CASES).group("FULL").ssa_interval == interval  # seeded


@pytest.mark.parametrize(("values", "expected"), [
    ([0.5], None), ([], None), ([0.8, 0.8, 0.8], (0.8, 0.8)),
])
def test_bootstrap_degenerate_cases(values, expected):
    interval = bootstrap_interval(values, resamples=200, seed=1)
    if expected is None:
        assert interval is None
    else:
        assert interval is not None
        assert (interval.low, interval.high) == pytest.approx(expected)


def test_bootstrap_interval_narrows_with_agreeing_repeats():
    wide = bootstrap_interval([0.0, 1.0, 0.0, 1.0], resamples=500, seed=3)
    narrow = bootstrap_interval([0.49, 0.51, 0.49, 0.51], resamples=500, seed=3)
    assert wide is not None and narrow is not None
    assert narrow.high - narrow.low < wide.high - wide.low


def test_variants_are_kept_apart():
    scores = [score("t-001"), score("t-001", variant="NO_STCA", **FAILED)]
    report = summarize(scores, CASES)
    assert report.variants == ("FULL", "NO_STCA")
    assert report.group("FULL").ssa == 1.0 and report.group("NO_STCA").ssa == 0.0


def test_unscored_cases_are_reported():
    report = summarize([score("t-001"), score("t-002"), score("t-001", repeat=1)], CASES)
    assert report.unscored == {"FULL": ["t-002", "t-003", "t-004"]}


def test_unknown_and_doubled_scores_are_refused():
    with pytest.raises(BenchmarkCaseError, match="t-999"):
        summarize([dataclasses.replace(score("t-001"), case_id="t-999")], CASES)
    with pytest.raises(BenchmarkCaseError, match="twice"):
        summarize([score("t-001"), score("t-001")], CASES)
