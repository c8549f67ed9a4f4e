"""The run summary is rendered from the result JSON that answer.json holds."""

from __future__ import annotations

import re

from geoask.records.run_report import run_summary_markdown

RESULT = {
    "status": "answered", "message": "3 airports", "route": "sql_then_python",
    "transitions": ["continue", "revise"], "evidence": ["sql-1: 3 rows"],
    "artifact_folder": "/runs/abc", "answer": {"answer_type": "scalar", "data_payload": {"n": 3}},
}


def test_summary_names_question_status_steps_and_answer():
    markdown = run_summary_markdown(RESULT, "How many airports?", "FULL")
    lines = markdown.splitlines()
    assert lines[0] == "# How many airports?"
    assert "**answered** (FULL, route sql\\_then\\_python): 3 airports" in lines
    assert "transitions: continue → revise" in lines
    assert "- sql-1: 3 rows" in lines
    assert '"n": 3' in markdown and "## Answer" in lines


def test_summary_without_answer_or_transitions():
    failed = {**RESULT, "status": "failed", "answer": None, "transitions": []}
    markdown = run_summary_markdown(failed, "q", "BASE")
    assert "## Answer" not in markdown
    assert "transitions: none" in markdown.splitlines()


def test_data_and_user_input_show_as_typed_never_as_markup():
    # Attack pass: a database value and a question forged a heading, a javascript: link and
    # raw HTML in the run-summary artifact (the SQL step's table was already escaped).
    evil = "Evil\n\n# FORGED\n\n**status: refused** [click](javascript:alert(1)) <img src=x>"
    result = {**RESULT, "message": f"RDU is {evil.splitlines()[-1]}", "evidence": [evil]}
    markdown = run_summary_markdown(result, "Evil <img src=x>\n## Answer", "FULL")
    lines = markdown.splitlines()
    assert [line for line in lines if line.startswith("#")] == [
        "# Evil \\<img src=x\\> \\#\\# Answer", "## Steps", "## Answer"]
    evidence = next(line for line in lines if line.startswith("- Evil"))
    status = next(line for line in lines if line.startswith("**answered**"))
    for shown in (evidence, status.split("): ", 1)[1]):
        assert not re.search(r"(?<!\\)[<>\[\]()*]", shown), shown
    assert "\\[click\\]\\(javascript:alert\\(1\\)\\)" in markdown


def test_a_message_of_several_lines_is_a_code_block_and_fences_cannot_be_closed_early():
    message = "step sql-1 failed:\n```\n# not a heading"
    markdown = run_summary_markdown({**RESULT, "message": message}, "q", "FULL")
    assert "````\nstep sql-1 failed:\n```\n# not a heading\n````" in markdown
