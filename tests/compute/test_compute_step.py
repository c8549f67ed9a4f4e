"""The compute-step runner (geoask.compute.step) with the in-memory sandbox fake."""

from __future__ import annotations

from pathlib import Path

import pytest

from geoask.compute.step import NO_RESULT, UnknownInputError, run_compute, select_inputs
from geoask.errors import GeoaskError, SandboxError
from geoask.sql.step import ToolEvent
from sandbox.fake import FakeSandbox, success_outcome
from sandbox.models import Artifact, SandboxLimits, SandboxOutcome, ScriptError

Event = tuple[str, str, str, float]


def _failed(script: str) -> SandboxOutcome:
    error = ScriptError(kind="missing_field", message="KeyError: 'pop'", line=2,
                        missing_field="pop", hint="use population")
    return success_outcome({}).model_copy(
        update={"status": "exception", "protocol": None, "error": error})


def _recorder() -> tuple[list[Event], ToolEvent]:
    events: list[Event] = []

    def record(tool: str, status: str, detail: str, milliseconds: float) -> None:
        events.append((tool, status, detail, milliseconds))

    return events, record


def test_select_inputs_keeps_the_order_given() -> None:
    available = {"a": Path("/x/a.json"), "b": Path("/x/b.geojson")}
    assert select_inputs(["b", "a"], available) == [Path("/x/b.geojson"), Path("/x/a.json")]


def test_select_inputs_names_every_unknown_input() -> None:
    with pytest.raises(UnknownInputError) as caught:
        select_inputs(["a", "c", "d"], {"a": Path("/x/a.json")})
    assert caught.value.unknown == ["c", "d"]
    assert "c, d" in str(caught.value)


def test_a_script_runs_in_the_sandbox_with_its_inputs_and_limits(tmp_path: Path) -> None:
    fake = FakeSandbox(respond=lambda _s: success_outcome([{"n": 1}, {"n": 2, "m": 3}], "two"))
    events, record = _recorder()
    limits = SandboxLimits(timeout_s=5)
    run = run_compute("print(1)", [tmp_path / "a.json"], fake, limits=limits,
                      on_event=record)
    assert fake.calls[0].script == "print(1)"
    assert fake.calls[0].inputs == (tmp_path / "a.json",)
    assert fake.calls[0].limits == limits
    assert run.failure is None
    assert run.result == [{"n": 1}, {"n": 2, "m": 3}]
    assert [e[:3] for e in events] == [("sandbox", "ok", "two")]
    assert events[0][3] == run.milliseconds >= 0


def test_a_failed_script_reports_its_detail_and_no_result() -> None:
    events, record = _recorder()
    run = run_compute("x", [], FakeSandbox(respond=_failed),
                      on_event=record)
    assert run.failure == "missing_field line 2: KeyError: 'pop'; hint: use population"
    assert run.outcome.missing_fields == ["pop"]
    assert run.protocol is None
    assert events[0][:3] == ("sandbox", "error", run.failure)
    with pytest.raises(GeoaskError, match="gave no result"):
        _ = run.result


def test_outputs_reference_the_saved_result_then_the_files() -> None:
    outcome = success_outcome({"b": 2, "a": 1}, "sum").model_copy(update={"artifacts": [
        Artifact(name="map.png", uri="file:///r/map.png", size_bytes=3,
                 media_type="image/png")]})
    run = run_compute("x", [], FakeSandbox(respond=lambda _s: outcome))
    result, image = run.outputs("file:///r/s1/result.json")
    assert (result.name, result.url, result.format) == ("result", "file:///r/s1/result.json",
                                                        "json")
    assert result.fields == ["a", "b"]
    assert result.row_count is None
    assert "sum" in result.preview
    assert (image.name, image.url, image.format) == ("map.png", "file:///r/map.png", "image/png")


def test_outputs_of_records_count_rows_and_union_their_fields() -> None:
    outcome = success_outcome([{"n": 1}, {"m": 2}, 3], "rows")
    run = run_compute("x", [], FakeSandbox(respond=lambda _s: outcome))
    (result,) = run.outputs("r.json")
    assert result.fields == ["m", "n"]
    assert result.row_count == 3


def test_a_cell_runs_in_the_session_and_keeps_its_state(tmp_path: Path) -> None:
    data = tmp_path / "n.json"
    data.write_text('{"n": 41}', encoding="utf-8")
    fake = FakeSandbox()
    events, record = _recorder()
    with fake.open_session() as session:
        first = run_compute("import json\nn = json.load(open('/input/n.json'))['n']", [data],
                            session, on_event=record)
        second = run_compute('print(json.dumps({"status": "success", "summary": "next", '
                             '"result": {"n": n + 1}}))', [], session,
                             on_event=record)
    assert fake.calls == []
    assert [call.inputs for call in fake.cell_calls] == [(data,), ()]
    assert first.failure is None and first.protocol is None
    assert second.result == {"n": 42}
    assert [e[:3] for e in events] == [("sandbox", "ok", NO_RESULT), ("sandbox", "ok", "next")]


def test_an_ended_session_raises_and_records_nothing() -> None:
    events, record = _recorder()
    session = FakeSandbox().open_session()
    session.close()
    with pytest.raises(SandboxError, match="session ended"):
        run_compute("1", [], session, on_event=record)
    assert events == []
