"""Report rendering: Markdown table, JSON/CSV files, the PNG chart, fsspec targets, errors."""

from __future__ import annotations

import csv
import io
import json

import fsspec
import pytest
from test_metrics import CASES, FAILED, score

from geoask.bench.metrics import summarize
from geoask.bench.report import (
    CHART_TITLE,
    chart_png,
    render_markdown,
    table_rows,
    variants_chart_png,
    write_report,
)
from geoask.errors import ArtifactWriteError

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def report():
    scores = [score(case.id, repeat=r, variant=variant,
                    **(FAILED if (variant, r, case.id) in {("FULL", 1, "t-002"),
                                                           ("BASE", 0, "t-003"),
                                                           ("BASE", 1, "t-003")} else {}))
              for variant in ("FULL", "BASE") for r in range(2) for case in CASES]
    return summarize(scores, CASES, resamples=200)


def test_markdown_summary_and_groups(report):
    text = render_markdown(report)
    assert text.startswith("# geoask benchmark report")
    assert "| Variant | Cases | SSA % | FEPSR % | Entity F1 | RA % |" in text
    full = report.group("FULL")
    interval = full.ssa_interval
    assert interval is not None
    assert (f"| FULL | 4 | 87.5 [{100 * interval.low:.1f}–{100 * interval.high:.1f}] |"
            in text)
    assert "## FULL" in text and "## BASE" in text
    for group in ("easy", "medium", "hard", "grouped_aggregation", "temporal_comparison"):
        assert f"| {group} |" in text
    assert "TP 4, FP 0, FN 0, TN 4" in text
    assert "| t-003 | 1 | hard | sql_logic | value: expected 1, got 2 |" in text
    assert "| t-002 | 1 | medium | sql_logic |" in text


def test_markdown_says_when_nothing_failed():
    text = render_markdown(summarize([score(case.id) for case in CASES], CASES))
    assert "No failures." in text
    assert "| **overall** | 4 | 100.0 [100.0–100.0] | 100.0 [100.0–100.0] |" in text


def test_markdown_flags_unscored_cases():
    text = render_markdown(summarize([score("t-001")], CASES))
    assert "FULL: 3 case(s) not scored" in text and "t-004" in text


def test_markdown_escapes_pipes_in_reasons():
    scores = [score("t-001", **{**FAILED, "reason": "expected a|b"})]
    assert "expected a\\|b" in render_markdown(summarize(scores, CASES))


def test_table_rows_hold_shares_and_intervals(report):
    rows = table_rows(report)
    assert len(rows) == len(report.groups)
    first = rows[0]
    assert (first["variant"], first["dimension"], first["group"]) == ("FULL", "overall", "all")
    assert first["ssa"] == pytest.approx(7 / 8)
    assert first["ssa_low"] <= first["ssa"] <= first["ssa_high"]
    assert first["root_causes"] == "sql_logic: 1"


def test_chart_is_a_png(report):
    data = chart_png(report)
    assert data.startswith(PNG_SIGNATURE) and len(data) > 5000
    assert CHART_TITLE == "SSA by difficulty per variant"


def test_write_report_files(report, tmp_path):
    files = write_report(report, tmp_path / "out")
    saved = json.loads((tmp_path / "out" / "report.json").read_text())
    assert saved == json.loads(json.dumps(report.to_dict()))
    assert len(saved["scores"]) == 16
    groups = list(csv.DictReader(io.StringIO((tmp_path / "out" / "report.csv").read_text())))
    assert len(groups) == len(report.groups)
    assert float(groups[0]["ssa"]) == pytest.approx(report.group("FULL").ssa)
    runs = list(csv.DictReader(io.StringIO((tmp_path / "out" / "scores.csv").read_text())))
    assert len(runs) == 16 and {"case_id", "time_s", "total_tokens", "root_cause"} <= set(runs[0])
    assert (tmp_path / "out" / "report.md").read_text() == render_markdown(report)
    assert (tmp_path / "out" / "ssa_by_difficulty.png").read_bytes().startswith(PNG_SIGNATURE)
    assert files.chart.endswith("ssa_by_difficulty.png")
    assert (tmp_path / "out" / "variants.png").read_bytes() == variants_chart_png(report)
    assert files.variants_chart.endswith("variants.png")


def test_side_by_side_table_has_tool_calls_retries_and_intervals():
    variants = ("FULL", "REACT", "PLAN_EXECUTE")
    scores = [score(case.id, variant=variant, repeat=r,
                    **({"tool_calls": 5, "guardrail_retries": 1, "first_path_success": False}
                       if variant == "REACT" else {}),
                    **(FAILED if (variant, case.id) == ("PLAN_EXECUTE", "t-002") else {}))
              for variant in variants for r in range(2) for case in CASES]
    report = summarize(scores, CASES, resamples=200)
    text = render_markdown(report)
    assert ("| Variant | Cases | SSA % | FEPSR % | Entity F1 | RA % | Tool calls | Retries | "
            "Mean time (s) | Mean tokens |") in text
    assert "| REACT | 4 | 100.0 [100.0–100.0] | 0.0 [0.0–0.0] | 1.000 | " \
           "100.0 [100.0–100.0] | 5.00 | 1.00 | 2.00 | 1,100 |" in text
    plan_execute = report.group("PLAN_EXECUTE")
    interval = plan_execute.ssa_interval
    assert interval is not None and interval.low < plan_execute.ssa == 0.75
    assert f"| PLAN_EXECUTE | 4 | 75.0 [{100 * interval.low:.1f}–100.0] |" in text
    row = next(r for r in table_rows(report) if r["variant"] == "REACT")
    assert row["mean_tool_calls"] == 5.0 and row["routing_accuracy_low"] == 1.0
    png = variants_chart_png(report)
    assert png.startswith(PNG_SIGNATURE) and png != variants_chart_png(
        summarize([s for s in scores if s.variant != "PLAN_EXECUTE"], CASES, resamples=200))


def test_write_report_to_an_fsspec_url(report):
    files = write_report(report, "memory://bench-report/run1")
    assert files.markdown.startswith("memory://")
    with fsspec.open(files.markdown, "r") as handle:
        assert handle.read() == render_markdown(report)


def test_unwritable_folder_is_a_clear_error(report, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(ArtifactWriteError, match="--out"):
        write_report(report, blocker / "out")


def test_meta_is_shown_in_the_header():
    report = summarize([score("t-001")], CASES, meta={"model": "reference", "wall_time_s": 12.345})
    assert "model: reference; wall_time_s: 12.3" in render_markdown(report)
    assert report.to_dict()["meta"] == {"model": "reference", "wall_time_s": 12.345}


def test_empty_report_renders_and_writes(tmp_path):
    report = summarize([], CASES)
    assert "No question was scored." in render_markdown(report)
    files = write_report(report, tmp_path)
    assert (tmp_path / "report.csv").read_text() == ""
    assert files.chart.endswith(".png")


def test_a_resumed_run_names_its_wall_time_apart_from_the_summed_question_time():
    # after `make demo`, `bench --limit 5` resumed all 5: the time is the saved runs' own
    report = summarize([score("t-001")], CASES,
                       meta={"ran": 0, "resumed": 5, "wall_time_s": 0.41})
    text = render_markdown(report)
    assert ("Wall time of this invocation: 0.4 s; questions run now: 0, resumed from saved "
            "runs: 5.") in text
    assert "Question time: " in text and " s summed over 1 question runs" in text
    assert "\nTime: " not in text
