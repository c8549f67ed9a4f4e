"""The in-memory session of :class:`sandbox.fake.FakeSandbox` and the cell protocol rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from geoask.errors import SandboxError
from sandbox.fake import FakeSandbox, success_outcome
from sandbox.models import SandboxLimits, SandboxOutcome, ScriptError, TextExcerpt
from sandbox.protocol import ProtocolViolation, parse_cell_protocol

RESULT_CELL = ('import json\nprint(json.dumps({"status": "success", "summary": "n", '
               '"result": {"n": n}}))\n')


def test_cells_share_one_namespace_and_report_with_the_protocol() -> None:
    fake = FakeSandbox()
    with fake.open_session(SandboxLimits(timeout_s=30)) as session:
        first = session.run_cell("n = 6 * 7\nprint('computed')")
        second = session.run_cell(RESULT_CELL)
    assert first.status == "success" and first.protocol is None
    assert first.stdout.text == "computed\n" and first.failure_detail() is None
    assert second.ok and second.protocol is not None and second.protocol.result == {"n": 42}
    assert [call.code for call in fake.cell_calls] == ["n = 6 * 7\nprint('computed')",
                                                       RESULT_CELL]
    assert fake.sessions[0].limits == SandboxLimits(timeout_s=30)


def test_a_failing_cell_is_a_classified_outcome_and_the_session_survives() -> None:
    with FakeSandbox().open_session() as session:
        failed = session.run_cell("rows = {'a': 1}\n\nrows['population']")
        assert failed.status == "exception" and failed.error is not None
        assert failed.error.kind == "missing_field" and failed.error.missing_field == "population"
        assert failed.error.line == 3
        syntax = session.run_cell("def broken(:\n")
        assert syntax.error is not None and syntax.error.kind == "syntax_error"
        assert session.run_cell("rows['a'] += 1").status == "success"
        assert session.run_cell("n = rows['a']\n" + RESULT_CELL).protocol.result == {"n": 2}


def test_a_broken_protocol_attempt_is_a_protocol_error() -> None:
    with FakeSandbox().open_session() as session:
        outcome = session.run_cell('print(\'{"status": "done", "summary": "x", "result": {}}\')')
    assert outcome.status == "protocol_error" and outcome.error is not None
    assert "status" in outcome.error.message


def test_inputs_are_readable_under_input_and_clashing_names_are_refused(tmp_path: Path) -> None:
    data = tmp_path / "a" / "parks.csv"
    data.parent.mkdir()
    data.write_text("name\nriverside\n")
    other = tmp_path / "parks.csv"
    other.write_text("name\nother\n")
    with FakeSandbox().open_session() as session:
        outcome = session.run_cell("print(open('/input/parks.csv').read().split()[1])", [data])
        assert outcome.stdout.text == "riverside\n"
        session.run_cell("pass", [data])  # the same file again is fine
        with pytest.raises(SandboxError, match=r"already has an input named 'parks\.csv'"):
            session.run_cell("pass", [other])
        with pytest.raises(SandboxError, match="does not exist"):
            session.run_cell("pass", [tmp_path / "missing.csv"])


def test_a_closed_or_ended_session_refuses_cells() -> None:
    fake = FakeSandbox()
    session = fake.open_session()
    session.close()
    session.close()  # idempotent
    assert session.ended == "closed"
    with pytest.raises(SandboxError, match="session ended: closed"):
        session.run_cell("pass")

    def timeout(_code: str) -> SandboxOutcome:
        empty = TextExcerpt(text="", total_chars=0, truncated=False)
        return SandboxOutcome(status="timeout", error=ScriptError(
            kind="timeout", message="ran too long", hint="faster"), wall_time_s=5,
            cpu_time_s=5, peak_memory_mib=1, stdout=empty, stderr=empty)

    scripted = FakeSandbox(respond_cell=timeout)
    with scripted.open_session() as session:
        assert session.run_cell("while True: pass").status == "timeout"
        assert session.ended is not None and "ran too long" in session.ended
        with pytest.raises(SandboxError, match="session ended: cell 1"):
            session.run_cell("pass")
    cpu = FakeSandbox(respond_cell=lambda code: timeout(code).model_copy(update={
        "status": "limit_exceeded", "signal": "SIGXCPU"}))
    with cpu.open_session() as session:
        assert session.run_cell("while True: pass").status == "limit_exceeded"
        assert session.ended is not None
    ok = FakeSandbox(respond_cell=lambda _code: success_outcome({"n": 1}))
    with ok.open_session() as session:
        assert session.run_cell("anything").protocol.result == {"n": 1}


@pytest.mark.parametrize(("stdout", "expected"), [
    ("", None),
    ("loaded 12 rows\n", None),
    ('{"rows": 12}\n', None),
    ("[1, 2, 3]\n", None),
    ('{"status": "success", "summary": "ok", "result": {"n": 1}}\n', {"n": 1}),
    ('noise\n{\n  "status": "error",\n  "summary": "no data",\n  "result": []\n}\n', []),
])
def test_cell_protocol_is_optional(stdout: str, expected: object) -> None:
    protocol = parse_cell_protocol(stdout)
    assert (None if protocol is None else protocol.result) == expected


@pytest.mark.parametrize("stdout", [
    '{"status": "success", "summary": "ok"}',
    '{"status": "success", "summary": "ok", "result": 3}',
    '{"status": "success", "summary": "ok", "result": {"x": NaN}}',
])
def test_cell_protocol_attempts_are_checked(stdout: str) -> None:
    with pytest.raises(ProtocolViolation):
        parse_cell_protocol(stdout)
