"""The run-trace table: per-stage runs, timings and tokens from the execution log."""

from __future__ import annotations

from geoask.records.execution_log import ExecutionLog, ModelCall, StageTiming, ToolTraceEntry
from geoask.records.run_trace import trace_rows


def timing(stage: str, wall: float, model: float) -> StageTiming:
    return StageTiming(stage=stage, started_at="2026-01-01T00:00:00", duration_ms=wall,
                       model_ms=model)


def call(role: str, stage: str, prompt: int, completion: int) -> ModelCall:
    return ModelCall(role=role, stage=stage, prompt_tokens=prompt,
                     completion_tokens=completion, duration_ms=1.0, status="ok")


def test_a_revised_stage_is_summed_into_one_row_and_totals_add_up():
    log = ExecutionLog(run_id="r", question="q", variant="FULL", stages=[
        timing("intent", 10.0, 4.0), timing("sql-1", 30.0, 5.0), timing("sql-1", 20.25, 5.0),
        timing("answer", 8.0, 3.0)],
        model_calls=[call("intent", "intent", 500, 40), call("sql", "sql-1", 900, 120),
                     call("sql", "sql-1", 950, 110), call("answer", "answer", 700, 60)],
        tool_trace=[ToolTraceEntry(stage="sql-1", tool="guard", status="rejected"),
                    ToolTraceEntry(stage="sql-1", tool="guard", status="ok")])
    rows = {row["stage"]: row for row in trace_rows(log)}
    assert list(rows) == ["intent", "sql-1", "answer", "total"]
    assert rows["sql-1"] == {"stage": "sql-1", "runs": 2, "wall_ms": 50.2, "model_ms": 10.0,
                             "prompt_tokens": 1850, "completion_tokens": 230,
                             "failed_tool_uses": 1}
    assert rows["total"]["runs"] == 4
    assert rows["total"]["prompt_tokens"] == 500 + 1850 + 700
    assert rows["total"]["completion_tokens"] == 40 + 230 + 60
    assert rows["total"]["wall_ms"] == 68.2


def test_model_calls_without_a_stage_timing_still_get_a_row():
    log = ExecutionLog(run_id="r", question="q", variant="FULL",
                       model_calls=[call("reviewer", "review", 300, 20)])
    rows = trace_rows(log)
    assert rows[0] == {"stage": "review", "runs": 0, "wall_ms": 0.0, "model_ms": 0.0,
                       "prompt_tokens": 300, "completion_tokens": 20, "failed_tool_uses": 0}
    assert rows[-1]["stage"] == "total"


def test_the_trace_section_is_a_markdown_table_of_the_rows():
    from geoask.records.run_trace import trace_markdown

    log = ExecutionLog(run_id="r", question="q", variant="FULL", outcome="answered",
                       route="sql_only", stages=[timing("intent", 10.0, 4.0)],
                       model_calls=[call("intent", "intent", 500, 40)])
    lines = trace_markdown(log).splitlines()
    assert lines[0] == "## Trace" and "answered, route sql\\_only" in lines[2]
    assert lines[4:] == [
        "| stage | runs | wall\\_ms | model\\_ms | prompt\\_tokens | completion\\_tokens "
        "| failed\\_tool\\_uses |",
        "|---|---|---|---|---|---|---|",
        "| intent | 1 | 10.0 | 4.0 | 500 | 40 | 0 |",
        "| total | 1 | 10.0 | 4.0 | 500 | 40 | 0 |"]


def test_markdown_table_cells_cannot_break_the_table():
    from geoask.records.run_artifacts import markdown_table

    table = markdown_table([{"name": "a|b\nc", "n": None, "x": 1.5,
                             "link": "[x](javascript:alert(1)) ![i](http://h/i.png) <b>"}])
    assert table.splitlines() == [
        "| name | n | x | link |", "|---|---|---|---|",
        "| a\\|b c | None | 1.5 | \\[x\\]\\(javascript:alert\\(1\\)\\) "
        "\\!\\[i\\]\\(http://h/i.png\\) \\<b\\> |"]
    assert markdown_table([]) == "(no rows)"
