"""Aggregate case scores into the benchmark report: overall, per difficulty, per category.

Each variant gets one :class:`GroupMetrics` per group (``overall``, each difficulty, each
category): SSA, FEPSR and routing accuracy, each with a percentile bootstrap 95 % interval
over the group's cases (a case's value is its mean over the repeats, ``--repeat K``; seeded),
schema validity, Exact Set / Ranking Exact Match and entity P/R/F1 over list questions only,
sandbox routing (confusion matrix, accuracy, precision, recall, F1, false-positive rate), mean
time, tokens and tool calls, guardrail retries, failed calls and the failures' root causes.

>>> bootstrap_interval([1.0, 1.0, 1.0], resamples=100, seed=0)
Interval(low=1.0, high=1.0)
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from geoask.bench.evaluate import CaseScore, RootCause
from geoask.cases.model import BenchmarkCase, Category, Difficulty
from geoask.errors import BenchmarkCaseError

OVERALL = "overall"
DIFFICULTY = "difficulty"
CATEGORY = "category"


@dataclass(frozen=True)
class Interval:
    """A two-sided confidence interval (same unit as the metric: a share 0..1, seconds...)."""

    low: float
    high: float


@dataclass(frozen=True)
class RoutingMetrics:
    """Sandbox routing against the ground truth ``requires_sandbox`` (positive = sandbox).

    Attributes:
        tp: needed the sandbox and used it.
        fp: did not need it but used it.
        fn: needed it and did not use it.
        tn: did not need it and did not use it.
        accuracy: ``(tp + tn) / n``.
        precision: ``tp / (tp + fp)``; None when nothing was routed to the sandbox.
        recall: ``tp / (tp + fn)``; None when no run needed the sandbox.
        f1: harmonic mean of precision and recall; None when either is undefined.
        false_positive_rate: ``fp / (fp + tn)``; None when every run needed the sandbox.

    """

    tp: int
    fp: int
    fn: int
    tn: int
    accuracy: float | None
    precision: float | None
    recall: float | None
    f1: float | None
    false_positive_rate: float | None


def routing_metrics(scores: Sequence[CaseScore]) -> RoutingMetrics:
    """The routing confusion matrix and its rates over ``scores``.

    A run stopped by a CRS the data does not state (root cause ``crs``) never reached the
    choice of channel, so it is left out rather than counted as a routing miss.

    >>> routing_metrics([]).accuracy is None
    True
    """
    scores = [s for s in scores if s.root_cause != RootCause.CRS.value]
    tp = sum(s.requires_sandbox and s.routed_to_sandbox for s in scores)
    fp = sum(not s.requires_sandbox and s.routed_to_sandbox for s in scores)
    fn = sum(s.requires_sandbox and not s.routed_to_sandbox for s in scores)
    tn = sum(not s.requires_sandbox and not s.routed_to_sandbox for s in scores)
    precision = _ratio(tp, tp + fp)
    recall = _ratio(tp, tp + fn)
    f1 = (2 * precision * recall / (precision + recall)
          if precision is not None and recall is not None and precision + recall else
          (0.0 if precision is not None and recall is not None else None))
    return RoutingMetrics(tp=tp, fp=fp, fn=fn, tn=tn, accuracy=_ratio(tp + tn, len(scores)),
                          precision=precision, recall=recall, f1=f1,
                          false_positive_rate=_ratio(fp, fp + tn))


@dataclass(frozen=True)
class GroupMetrics:
    """The metrics of one group of runs (a variant's overall, difficulty or category group).

    Shares (SSA, FEPSR, ...) are 0..1. Means are per run (a question in one repeat).

    Attributes:
        variant: the architecture variant.
        dimension: ``overall``, ``difficulty`` or ``category``.
        group: ``all``, a difficulty or a category value.
        cases: distinct cases scored in the group.
        runs: scored runs (cases × repeats).
        repeats: distinct repeats in the group.
        ssa: Strict Structured Accuracy, mean over runs.
        ssa_interval: bootstrap 95 % interval of SSA over cases (None for one case).
        fepsr: First Execution Path Success Rate.
        fepsr_interval: bootstrap 95 % interval of FEPSR over cases (None for one case).
        schema_validity: share of runs whose payload validates against its JSON Schema.
        list_runs: runs of list questions (entity list, ranked list, records).
        exact_set: Exact Set Match over list runs (None without list runs).
        ranked_runs: runs of ranked-list questions.
        ranking_exact: Ranking Exact Match over ranked runs (None without ranked runs).
        entity_precision: mean entity precision over list runs.
        entity_recall: mean entity recall over list runs.
        entity_f1: mean entity F1 over list runs.
        routing: sandbox routing metrics.
        routing_interval: bootstrap 95 % interval of the routing accuracy over cases (None
            for one case).
        mean_tool_calls: tool calls per run (SQL statements, sandbox runs, inspections).
        mean_time_s: mean end-to-end time per run (s).
        total_time_s: summed end-to-end time of the runs (s).
        mean_prompt_tokens: mean prompt tokens per run.
        mean_completion_tokens: mean completion tokens per run.
        mean_total_tokens: mean prompt + completion tokens per run.
        guardrail_retries: summed guardrail retries (revise, repair, replan).
        mean_guardrail_retries: guardrail retries per run.
        failed_calls: summed failed model calls and tool uses.
        recovered: correct runs that needed a failed call or a guardrail retry.
        root_causes: root cause -> number of failed runs (``unattributed`` when unknown).

    """

    variant: str
    dimension: str
    group: str
    cases: int
    runs: int
    repeats: int
    ssa: float
    ssa_interval: Interval | None
    fepsr: float
    fepsr_interval: Interval | None
    schema_validity: float
    list_runs: int
    exact_set: float | None
    ranked_runs: int
    ranking_exact: float | None
    entity_precision: float | None
    entity_recall: float | None
    entity_f1: float | None
    routing: RoutingMetrics
    routing_interval: Interval | None
    mean_tool_calls: float
    mean_time_s: float
    total_time_s: float
    mean_prompt_tokens: float
    mean_completion_tokens: float
    mean_total_tokens: float
    guardrail_retries: int
    mean_guardrail_retries: float
    failed_calls: int
    recovered: int
    root_causes: dict[str, int]


@dataclass(frozen=True)
class BenchmarkReport:
    """The aggregated benchmark: groups per variant, the scores they came from, coverage.

    Attributes:
        groups: every variant's overall, per-difficulty and per-category metrics, in that
            order (difficulties easy → hard, categories in benchmark order).
        scores: the case scores, sorted by variant, repeat and case id.
        variants: the variants, in order of first appearance.
        cases: number of benchmark cases given.
        unscored: variant -> ids of cases with no score in some repeat (interrupted runs).
        meta: facts about the run the caller adds (model, wall time, resumed runs...), shown
            as ``key: value`` in the report header; JSON-ready values.

    """

    groups: tuple[GroupMetrics, ...]
    scores: tuple[CaseScore, ...]
    variants: tuple[str, ...]
    cases: int
    unscored: dict[str, list[str]]
    meta: dict[str, Any] = dataclasses.field(default_factory=dict)

    def group(self, variant: str, dimension: str = OVERALL, group: str = "all") -> GroupMetrics:
        """The metrics of one group.

        Raises:
            KeyError: no such group (unknown variant, or no run in that group).

        """
        for metrics in self.groups:
            if (metrics.variant, metrics.dimension, metrics.group) == (variant, dimension, group):
                return metrics
        raise KeyError(f"no group {variant}/{dimension}/{group} in the report")

    def to_dict(self) -> dict[str, Any]:
        """The report as plain JSON data."""
        return {
            "meta": self.meta,
            "variants": list(self.variants),
            "cases": self.cases,
            "unscored": self.unscored,
            "groups": [dataclasses.asdict(metrics) for metrics in self.groups],
            "scores": [score.to_dict() for score in self.scores],
        }


def bootstrap_interval(
    values: Sequence[float], *, resamples: int = 2000, seed: int = 0, confidence: float = 0.95
) -> Interval | None:
    """Percentile bootstrap interval of the mean of ``values`` (one value per case).

    None with fewer than two values (a single run has no spread to resample). Deterministic
    for a given ``seed``.

    >>> bootstrap_interval([0.5])
    """
    if len(values) < 2:
        return None
    data = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, len(data), size=(resamples, len(data)))].mean(axis=1)
    tail = (1.0 - confidence) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return Interval(low=float(low), high=float(high))


def summarize(
    scores: Sequence[CaseScore],
    cases: Sequence[BenchmarkCase],
    *,
    resamples: int = 2000,
    seed: int = 0,
    meta: dict[str, Any] | None = None,
) -> BenchmarkReport:
    """Aggregate ``scores`` of ``cases`` into a :class:`BenchmarkReport`.

    Difficulty and category come from the cases (the source of truth). Repeats are told
    apart by ``CaseScore.repeat``. SSA, FEPSR and routing accuracy get a percentile bootstrap
    95 % interval over the cases of each group: a case's value is its mean over its repeats,
    cases are resampled with replacement (``resamples`` draws, random ``seed``). ``meta``
    (model, wall time, ...) is carried into the report header as given.

    Raises:
        BenchmarkCaseError: a score names a case that is not among ``cases``, or the same
            (variant, repeat, case) is scored twice.

    """
    by_id = {case.id: case for case in cases}
    unknown = sorted({s.case_id for s in scores} - by_id.keys())
    if unknown:
        raise BenchmarkCaseError(f"scores name cases that are not in the case set: {unknown[:5]}")
    runs = Counter((s.variant, s.repeat, s.case_id) for s in scores)
    doubled = [key for key, count in runs.items() if count > 1]
    if doubled:
        raise BenchmarkCaseError(f"a case was scored twice in one run: {doubled[:3]}")
    scores = [dataclasses.replace(s, difficulty=by_id[s.case_id].difficulty.value,
                                  category=by_id[s.case_id].category.value) for s in scores]
    ordered = sorted(scores, key=lambda s: (s.variant, s.repeat, s.case_id))
    variants = tuple(dict.fromkeys(s.variant for s in scores))
    groups: list[GroupMetrics] = []
    for variant in variants:
        mine = [s for s in ordered if s.variant == variant]
        selections = [(OVERALL, "all"), *((DIFFICULTY, d.value) for d in Difficulty),
                      *((CATEGORY, c.value) for c in Category)]
        for dimension, name in selections:
            chosen = [s for s in mine if dimension == OVERALL or getattr(s, dimension) == name]
            if chosen:
                groups.append(group_metrics(variant, dimension, name, chosen,
                                            resamples=resamples, seed=seed))
    return BenchmarkReport(groups=tuple(groups), scores=tuple(ordered), variants=variants,
                           cases=len(cases), unscored=_unscored(ordered, variants, by_id),
                           meta=dict(meta or {}))


def group_metrics(
    variant: str, dimension: str, group: str, scores: Sequence[CaseScore], *,
    resamples: int = 2000, seed: int = 0,
) -> GroupMetrics:
    """The metrics of one non-empty group of runs (see :class:`GroupMetrics`)."""
    runs = len(scores)
    repeats = sorted({s.repeat for s in scores})
    lists = [s for s in scores if s.exact_set is not None]
    ranked = [s for s in scores if s.ranking_exact is not None]

    by_case: dict[str, list[CaseScore]] = {}
    for s in scores:
        by_case.setdefault(s.case_id, []).append(s)

    def interval(flag: Callable[[CaseScore], bool]) -> Interval | None:
        per_case = [_mean([float(flag(s)) for s in runs_of]) or 0.0
                    for runs_of in by_case.values()]
        return bootstrap_interval(per_case, resamples=resamples, seed=seed)

    causes = Counter(s.root_cause or "unattributed" for s in scores if not s.ssa)
    order = [cause.value for cause in RootCause] + ["unattributed"]
    return GroupMetrics(
        variant=variant, dimension=dimension, group=group,
        cases=len({s.case_id for s in scores}), runs=runs, repeats=len(repeats),
        ssa=_share(s.ssa for s in scores),
        ssa_interval=interval(lambda s: s.ssa),
        fepsr=_share(s.first_path_success for s in scores),
        fepsr_interval=interval(lambda s: s.first_path_success),
        schema_validity=_share(s.schema_valid for s in scores),
        list_runs=len(lists),
        exact_set=_mean([float(bool(s.exact_set)) for s in lists]),
        ranked_runs=len(ranked),
        ranking_exact=_mean([float(bool(s.ranking_exact)) for s in ranked]),
        entity_precision=_mean([s.entity_precision or 0.0 for s in lists]),
        entity_recall=_mean([s.entity_recall or 0.0 for s in lists]),
        entity_f1=_mean([s.entity_f1 or 0.0 for s in lists]),
        routing=routing_metrics(scores),
        routing_interval=interval(lambda s: s.requires_sandbox == s.routed_to_sandbox),
        mean_tool_calls=sum(s.tool_calls for s in scores) / runs,
        mean_time_s=sum(s.time_s for s in scores) / runs,
        total_time_s=sum(s.time_s for s in scores),
        mean_prompt_tokens=sum(s.prompt_tokens for s in scores) / runs,
        mean_completion_tokens=sum(s.completion_tokens for s in scores) / runs,
        mean_total_tokens=sum(s.total_tokens for s in scores) / runs,
        guardrail_retries=sum(s.guardrail_retries for s in scores),
        mean_guardrail_retries=sum(s.guardrail_retries for s in scores) / runs,
        failed_calls=sum(s.failed_calls for s in scores),
        recovered=sum(s.ssa and not s.first_path_success for s in scores),
        root_causes={cause: causes[cause] for cause in order if causes[cause]},
    )


def _unscored(scores: Sequence[CaseScore], variants: Sequence[str],
              by_id: dict[str, BenchmarkCase]) -> dict[str, list[str]]:
    missing: dict[str, list[str]] = {}
    for variant in variants:
        mine = [s for s in scores if s.variant == variant]
        repeats = {s.repeat for s in mine}
        done = Counter(s.case_id for s in mine)
        absent = sorted(case_id for case_id in by_id if done[case_id] < len(repeats))
        if absent:
            missing[variant] = absent
    return missing


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _share(flags: Any) -> float:
    items = [bool(flag) for flag in flags]
    return sum(items) / len(items) if items else 0.0
