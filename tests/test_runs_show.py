"""``geoask runs show RUN_ID [--calls]`` prints a run's calls from its transcripts."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from geoask.app.commands.runs import app
from geoask.models.transcripts import CallTranscript, RequestRecord, dump_messages


def _write_run(folder):
    from pydantic_ai.messages import (
        ModelRequest,
        ModelResponse,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )

    messages = [
        ModelRequest(parts=[UserPromptPart("Question: how many airports?")],
                     instructions="Write read-only PostgreSQL."),
        ModelResponse(parts=[ToolCallPart("final_result_SqlDraft", '{"sql": "SELEC 1"')]),
        ModelRequest(parts=[ToolReturnPart("final_result_SqlDraft", "the SQL does not parse",
                                           outcome="retried")]),
    ]
    call = CallTranscript(n=1, role="sql", stage="sql-1", model="smollm2", system="openai",
                          output_mode="native", status="error", error="AgentOutputError: x",
                          duration_ms=2500.0,
                          requests=[RequestRecord(latency_ms=2400.0, input_tokens=900,
                                                  output_tokens=12),
                                    RequestRecord(latency_ms=80.0, status_code=500,
                                                  error="ModelHTTPError: HTTP 500")],
                          messages=dump_messages(messages))
    (folder / "calls").mkdir(parents=True)
    (folder / "calls" / call.file_name).write_text(call.to_json())
    (folder / "execution_log.json").write_text(json.dumps(
        {"run_id": "abc", "variant": "FULL", "outcome": "failed", "question": "how many?"}))


def test_runs_show_lists_the_calls_and_prints_them_whole(tmp_path):
    _write_run(tmp_path / "abc")
    runner = CliRunner()
    brief = runner.invoke(app, ["show", str(tmp_path / "abc")])
    assert brief.exit_code == 0, brief.output
    assert "run abc (FULL): failed - how many?" in brief.output
    assert "#1 sql (sql-1) openai:smollm2 mode=native error 2.5 s, 2 request(s)" in brief.output
    assert "SELEC 1" not in brief.output
    whole = runner.invoke(app, ["show", str(tmp_path / "abc"), "--calls"])
    assert whole.exit_code == 0, whole.output
    for expected in ("[instructions] Write read-only PostgreSQL.",
                     "[user] Question: how many airports?",
                     '[model tool call] final_result_SqlDraft {"sql": "SELEC 1"',
                     "[retry (validator)] the SQL does not parse",
                     "[request 2 failed after 80 ms] ModelHTTPError: HTTP 500"):
        assert expected in whole.output


def test_runs_show_names_a_missing_run(tmp_path):
    result = CliRunner().invoke(app, ["show", str(tmp_path / "nope")])
    assert result.exit_code != 0
    assert "no run" in str(result.exception) and "give a run id" in str(result.exception)
