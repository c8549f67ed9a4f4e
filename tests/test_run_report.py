"""The run summary is rendered from the result JSON that answer.json holds."""

from __future__ import annotations

from geoask.run_report import run_summary_markdown

RESULT = {
    "status": "answered", "message": "3 airports", "route": "sql_then_python",
    "transitions": ["continue", "revise"], "evidence": ["sql-1: 3 rows"],
    "artifact_folder": "/runs/abc", "answer": {"answer_type": "scalar", "data_payload": {"n": 3}},
}


def test_summary_names_question_status_steps_and_answer():
    markdown = run_summary_markdown(RESULT, "How many airports?", "FULL")
    lines = markdown.splitlines()
    assert lines[0] == "# How many airports?"
    assert "**answered** (FULL, route sql_then_python): 3 airports" in lines
    assert "transitions: continue → revise" in lines
    assert "- sql-1: 3 rows" in lines
    assert '"n": 3' in markdown and "## Answer" in lines


def test_summary_without_answer_or_transitions():
    failed = {**RESULT, "status": "failed", "answer": None, "transitions": []}
    markdown = run_summary_markdown(failed, "q", "BASE")
    assert "## Answer" not in markdown
    assert "transitions: none" in markdown.splitlines()
