"""Render a :class:`~geoask.bench.metrics.BenchmarkReport`: Markdown, JSON, CSV and a PNG chart.

:func:`write_report` writes into a local folder or any fsspec URL:

- ``report.json``: the whole report (groups and every case score);
- ``report.csv``: one row per group (:func:`table_rows`, also usable as a Prefect table);
- ``scores.csv``: one row per question run (time, tokens, verdict, root cause);
- ``report.md``: :func:`render_markdown` (the variants side by side first);
- ``ssa_by_difficulty.png``: SSA by difficulty per variant (matplotlib, Agg canvas);
- ``variants.png``: SSA, FEPSR and routing accuracy per variant with their bootstrap 95 %
  intervals (:func:`variants_chart_png`).

Percentages in Markdown and the chart are shares × 100; CSV and JSON keep shares (0..1).
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from geoask.base.storage import filesystem_for
from geoask.bench.evaluate import CaseScore
from geoask.bench.metrics import DIFFICULTY, OVERALL, BenchmarkReport, GroupMetrics, Interval
from geoask.cases.model import Difficulty
from geoask.errors import ArtifactWriteError

CHART_TITLE = "SSA by difficulty per variant"
VARIANTS_CHART_TITLE = "Variants side by side (bootstrap 95 % intervals over cases)"
_MAX_FAILURES_LISTED = 60


@dataclass(frozen=True)
class ReportFiles:
    """Where :func:`write_report` put each file (fsspec URLs or local paths)."""

    json: str
    csv: str
    scores_csv: str
    markdown: str
    chart: str
    variants_chart: str


# --- tables ----------------------------------------------------------------------------------

def table_rows(report: BenchmarkReport) -> list[dict[str, Any]]:
    """One flat row per group: shares 0..1, times in s, tokens per run, routing counts."""
    return [_row(metrics) for metrics in report.groups]


def _row(m: GroupMetrics) -> dict[str, Any]:
    return {
        "variant": m.variant, "dimension": m.dimension, "group": m.group,
        "cases": m.cases, "runs": m.runs, "repeats": m.repeats,
        "ssa": m.ssa, "ssa_low": _low(m.ssa_interval), "ssa_high": _high(m.ssa_interval),
        "fepsr": m.fepsr, "fepsr_low": _low(m.fepsr_interval),
        "fepsr_high": _high(m.fepsr_interval),
        "schema_validity": m.schema_validity,
        "list_runs": m.list_runs, "exact_set": m.exact_set,
        "ranked_runs": m.ranked_runs, "ranking_exact": m.ranking_exact,
        "entity_precision": m.entity_precision, "entity_recall": m.entity_recall,
        "entity_f1": m.entity_f1,
        "routing_tp": m.routing.tp, "routing_fp": m.routing.fp, "routing_fn": m.routing.fn,
        "routing_tn": m.routing.tn, "routing_accuracy": m.routing.accuracy,
        "routing_precision": m.routing.precision, "routing_recall": m.routing.recall,
        "routing_f1": m.routing.f1, "routing_false_positive_rate": m.routing.false_positive_rate,
        "routing_accuracy_low": _low(m.routing_interval),
        "routing_accuracy_high": _high(m.routing_interval),
        "mean_tool_calls": m.mean_tool_calls,
        "mean_time_s": m.mean_time_s, "total_time_s": m.total_time_s,
        "mean_prompt_tokens": m.mean_prompt_tokens,
        "mean_completion_tokens": m.mean_completion_tokens,
        "mean_total_tokens": m.mean_total_tokens,
        "guardrail_retries": m.guardrail_retries,
        "mean_guardrail_retries": m.mean_guardrail_retries,
        "failed_calls": m.failed_calls, "recovered": m.recovered,
        "root_causes": "; ".join(f"{cause}: {n}" for cause, n in m.root_causes.items()),
    }


def _low(interval: Interval | None) -> float | None:
    return interval.low if interval else None


def _high(interval: Interval | None) -> float | None:
    return interval.high if interval else None


# --- Markdown --------------------------------------------------------------------------------

def render_markdown(report: BenchmarkReport) -> str:
    """The report as Markdown.

    A variant summary table, then per variant its group table, routing, time, root causes and
    the failed questions.
    """
    repeats = max((m.repeats for m in report.groups), default=0)
    lines = ["# geoask benchmark report", "",
             f"{report.cases} cases; variants: {', '.join(report.variants) or 'none'}; "
             f"repeats: {repeats}. Shares in %; [low–high] is the percentile bootstrap 95 % "
             "interval over cases (a case's value is its mean over the repeats; seeded). "
             "Tool calls: SQL statements, sandbox runs and schema inspections per question; "
             "retries: recoveries per question (revise, repair, replan; REACT: failed tool "
             "calls).", ""]
    if report.meta:
        lines += ["; ".join(f"{key}: {_meta_value(value)}" for key, value in report.meta.items()),
                  ""]
    if "wall_time_s" in report.meta:
        lines += [_wall_line(report.meta), ""]
    for variant, missing in report.unscored.items():
        lines += [f"**{variant}: {len(missing)} case(s) not scored in every repeat** "
                  f"(interrupted run?): {', '.join(missing[:20])}"
                  + (" ..." if len(missing) > 20 else ""), ""]
    if not report.groups:
        return "\n".join([*lines, "No question was scored.", ""])
    lines += ["| Variant | Cases | SSA % | FEPSR % | Entity F1 | RA % | Tool calls | Retries | "
              "Mean time (s) | Mean tokens |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for variant in report.variants:
        m = report.group(variant)
        lines.append(f"| {variant} | {m.cases} | {_pct(m.ssa, m.ssa_interval)} | "
                     f"{_pct(m.fepsr, m.fepsr_interval)} | {_num(m.entity_f1, 3)} | "
                     f"{_pct(m.routing.accuracy, m.routing_interval)} | "
                     f"{m.mean_tool_calls:.2f} | {m.mean_guardrail_retries:.2f} | "
                     f"{m.mean_time_s:.2f} | {m.mean_total_tokens:,.0f} |")
    for variant in report.variants:
        lines += ["", *_variant_section(report, variant)]
    return "\n".join(lines) + "\n"


def _variant_section(report: BenchmarkReport, variant: str) -> list[str]:
    overall = report.group(variant)
    lines = [f"## {variant}", "",
             "| Group | Cases | SSA % | FEPSR % | Schema valid % | Exact set % | "
             "Ranking exact % | Entity P / R / F1 | RA % | Mean time (s) | "
             "Tokens prompt / completion / total | Retries | Failed calls |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for m in (g for g in report.groups if g.variant == variant):
        name = "**overall**" if m.dimension == OVERALL else m.group
        prf = (f"{_num(m.entity_precision, 3)} / {_num(m.entity_recall, 3)} / "
               f"{_num(m.entity_f1, 3)}" if m.list_runs else "–")
        lines.append(
            f"| {name} | {m.cases} | {_pct(m.ssa, m.ssa_interval)} | "
            f"{_pct(m.fepsr, m.fepsr_interval)} | {_pct(m.schema_validity)} | "
            f"{_pct(m.exact_set)} | {_pct(m.ranking_exact)} | {prf} | "
            f"{_pct(m.routing.accuracy)} | {m.mean_time_s:.2f} | "
            f"{m.mean_prompt_tokens:,.0f} / {m.mean_completion_tokens:,.0f} / "
            f"{m.mean_total_tokens:,.0f} | {m.guardrail_retries} | {m.failed_calls} |")
    r = overall.routing
    lines += ["", f"Sandbox routing (positive = uses the sandbox): TP {r.tp}, FP {r.fp}, "
                  f"FN {r.fn}, TN {r.tn}; accuracy {_pct(r.accuracy)} %, precision "
                  f"{_pct(r.precision)} %, recall {_pct(r.recall)} %, F1 {_num(r.f1, 3)}, "
                  f"false-positive rate {_pct(r.false_positive_rate)} %.", "",
              f"Question time: {overall.total_time_s:.1f} s summed over {overall.runs} "
              f"question runs (each run's own time, recorded when it ran), "
              f"{overall.mean_time_s:.2f} s per question. Recovered after a failed call or a "
              f"guardrail retry: {overall.recovered}; guardrail retries "
              f"{overall.guardrail_retries} ({overall.mean_guardrail_retries:.2f} per "
              "question).", ""]
    if overall.root_causes:
        lines += ["| Root cause | Failures |", "|---|---:|"]
        lines += [f"| {cause} | {n} |" for cause, n in overall.root_causes.items()]
        lines += ["", *_failure_table(
            [s for s in report.scores if s.variant == variant and not s.ssa])]
    else:
        lines.append("No failures.")
    return lines


def _failure_table(failures: Sequence[CaseScore]) -> list[str]:
    lines = ["| Case | Repeat | Difficulty | Root cause | Why |", "|---|---:|---|---|---|"]
    for s in failures[:_MAX_FAILURES_LISTED]:
        why = (s.reason or s.outcome).replace("|", "\\|").replace("\n", " ")[:160]
        lines.append(f"| {s.case_id} | {s.repeat} | {s.difficulty} | "
                     f"{s.root_cause or 'unattributed'} | {why} |")
    if len(failures) > _MAX_FAILURES_LISTED:
        lines.append(f"| … | | | | {len(failures) - _MAX_FAILURES_LISTED} more in scores.csv |")
    return lines


def _wall_line(meta: Mapping[str, Any]) -> str:
    """The invocation's wall time, and how many questions it ran or resumed from saved runs.

    >>> _wall_line({"wall_time_s": 0.41, "ran": 0, "resumed": 5})
    'Wall time of this invocation: 0.4 s; questions run now: 0, resumed from saved runs: 5.'
    """
    ran = f"; questions run now: {meta['ran']}" if "ran" in meta else ""
    resumed = f", resumed from saved runs: {meta['resumed']}" if "resumed" in meta else ""
    return f"Wall time of this invocation: {float(meta['wall_time_s']):.1f} s{ran}{resumed}."


def _meta_value(value: Any) -> str:
    return f"{value:.1f}" if isinstance(value, float) else str(value)


def _pct(share: float | None, interval: Interval | None = None) -> str:
    if share is None:
        return "–"
    text = f"{100 * share:.1f}"
    if interval is not None:
        text += f" [{100 * interval.low:.1f}–{100 * interval.high:.1f}]"
    return text


def _num(value: float | None, digits: int) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


# --- chart -----------------------------------------------------------------------------------

def chart_png(report: BenchmarkReport) -> bytes:
    """PNG bytes of the chart "SSA by difficulty per variant".

    Grouped bars of SSA (%) for easy, medium, hard and overall, one bar per variant, with the
    bootstrap interval over cases as error bars.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    groups = [*(d.value for d in Difficulty), "overall"]
    figure = Figure(figsize=(8, 4.5), dpi=110)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    variants = list(report.variants) or ["(none)"]
    width = 0.8 / len(variants)
    for index, variant in enumerate(variants):
        heights: list[float] = []
        errors: list[list[float]] = [[], []]
        for name in groups:
            m = _find(report, variant, name)
            share = m.ssa if m else 0.0
            heights.append(100 * share)
            interval = m.ssa_interval if m else None
            errors[0].append(100 * (share - interval.low) if interval else 0.0)
            errors[1].append(100 * (interval.high - share) if interval else 0.0)
        positions = [x + (index - (len(variants) - 1) / 2) * width for x in range(len(groups))]
        spread = errors if any(any(side) for side in errors) else None
        bars = axes.bar(positions, heights, width, label=variant, yerr=spread, capsize=3)
        axes.bar_label(bars, fmt="%.1f", fontsize=7, padding=2)
    axes.set_xticks(range(len(groups)), groups)
    axes.set_ylim(0, 110)
    axes.set_ylabel("SSA (%)")
    axes.set_title(CHART_TITLE)
    axes.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), title="variant")
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", bbox_inches="tight")
    return buffer.getvalue()


def variants_chart_png(report: BenchmarkReport) -> bytes:
    """PNG bytes of the chart "Variants side by side".

    For each variant (x axis, in report order) three bars: SSA, FEPSR and routing accuracy
    (%), each with its bootstrap 95 % interval over cases as error bars.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    variants = list(report.variants) or ["(none)"]
    figure = Figure(figsize=(max(6.0, 1.3 * len(variants) + 2), 4.5), dpi=110)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    width = 0.8 / 3
    for index, label in enumerate(("SSA", "FEPSR", "RA")):
        heights: list[float] = []
        errors: list[list[float]] = [[], []]
        for variant in variants:
            m = _find(report, variant, "overall")
            share, interval = _measures(m)[index] if m else (0.0, None)
            heights.append(100 * share)
            errors[0].append(100 * (share - interval.low) if interval else 0.0)
            errors[1].append(100 * (interval.high - share) if interval else 0.0)
        positions = [x + (index - 1) * width for x in range(len(variants))]
        spread = errors if any(any(side) for side in errors) else None
        bars = axes.bar(positions, heights, width, label=label, yerr=spread, capsize=3)
        axes.bar_label(bars, fmt="%.0f", fontsize=6, padding=2)
    axes.set_xticks(range(len(variants)), variants, rotation=20, fontsize=8)
    axes.set_ylim(0, 115)
    axes.set_ylabel("%")
    axes.set_title(VARIANTS_CHART_TITLE, fontsize=10)
    axes.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", bbox_inches="tight")
    return buffer.getvalue()


def _measures(m: GroupMetrics) -> list[tuple[float, Interval | None]]:
    """SSA, FEPSR and routing accuracy of a group, each with its interval."""
    return [(m.ssa, m.ssa_interval), (m.fepsr, m.fepsr_interval),
            (m.routing.accuracy or 0.0, m.routing_interval)]


def _find(report: BenchmarkReport, variant: str, name: str) -> GroupMetrics | None:
    dimension = OVERALL if name == "overall" else DIFFICULTY
    try:
        return report.group(variant, dimension, "all" if name == "overall" else name)
    except KeyError:
        return None


# --- files -----------------------------------------------------------------------------------

def csv_text(rows: Sequence[dict[str, Any]]) -> str:
    """Rows as CSV text with a header (empty text without rows; None as an empty cell)."""
    if not rows:
        return ""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def write_report(report: BenchmarkReport, out_dir: str | Path) -> ReportFiles:
    """Write the JSON, CSV (groups and per-run scores), Markdown and two PNG files into ``out_dir``.

    ``out_dir`` is a local folder or an fsspec URL; it is created when missing. Each file is
    written under a temporary name and then renamed, so a stop never leaves half a file.

    Raises:
        ArtifactWriteError: a file could not be written (the message names it).

    """
    fs, root = filesystem_for(str(out_dir))
    contents: dict[str, str | bytes] = {
        "json": json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n",
        "csv": csv_text(table_rows(report)),
        "scores_csv": csv_text([score.to_dict() for score in report.scores]),
        "markdown": render_markdown(report),
        "chart": chart_png(report),
        "variants_chart": variants_chart_png(report),
    }
    names = {"json": "report.json", "csv": "report.csv", "scores_csv": "scores.csv",
             "markdown": "report.md", "chart": "ssa_by_difficulty.png",
             "variants_chart": "variants.png"}
    written: dict[str, str] = {}
    try:
        fs.makedirs(root, exist_ok=True)
        for key, content in contents.items():
            path = f"{root.rstrip('/')}/{names[key]}"
            data = content.encode("utf-8") if isinstance(content, str) else content
            temporary = f"{path}.tmp-{os.getpid()}"
            with fs.open(temporary, "wb") as handle:
                handle.write(data)
            fs.mv(temporary, path)  # whole or not at all, even when the run is stopped
            written[key] = fs.unstrip_protocol(path) if "://" in str(out_dir) else path
    except OSError as error:
        raise ArtifactWriteError(
            f"cannot write the benchmark report into {out_dir}: {error}; choose a writable "
            "--out folder") from None
    return ReportFiles(**written)
