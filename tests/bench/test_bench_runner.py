"""ProgramRunner and verify_case with the in-memory SQL runner and sandbox fakes."""

from __future__ import annotations

import json

import pytest

from geoask.bench.verify import verify_case
from geoask.cases.model import BenchmarkCase
from geoask.cases.runner import ProgramFailedError, ProgramRunner
from geoask.errors import QueryExecutionError
from geoask.sql.executor import QueryResult, ResultColumn, StaticSqlRunner
from sandbox.fake import FakeSandbox, success_outcome

COUNT_SQL = "SELECT count(*) AS n FROM demo.airports WHERE state_abbr = 'TX'"
POSTGIS_SQL = "SELECT count(*) AS n FROM demo.airports AS a WHERE ST_X(a.geom) < 0"


def _result(n: int) -> QueryResult:
    return QueryResult((ResultColumn("n", "int8"),), [(n,)], 100, "SELECT ...")


def _case(expected, *, python: bool = False, cross: bool = False) -> BenchmarkCase:
    steps: list[dict] = [{
        "kind": "sql", "objective": "Count the airports in Texas.",
        "statements": [{"name": "n", "sql": COUNT_SQL}],
    }]
    if python:
        steps.append({"kind": "python", "name": "doubled", "inputs": ["n"], "script": "DOUBLE",
                      "objective": "Double the count in Python."})
    case = {
        "id": "airports-901", "question": "How many airports are in Texas?",
        "difficulty": "easy", "category": "statistics" if cross else "attribute_filter_rank",
        "scenario": "airports", "requires_sandbox": python, "reference": {"steps": steps},
        "answer": {"answer_type": "scalar", "projection": {"value_field": "n"}},
        "expected": {"value": expected, "tolerance": {"abs": 0}},
    }
    if cross:
        check_step = {"kind": "sql", "objective": "Count with PostGIS.",
                      "statements": [{"name": "m", "sql": POSTGIS_SQL}]}
        case["cross_check"] = {"method": "PostGIS count with ST_X", "policy": "postgis",
                               "program": {"steps": [check_step]}}
    return BenchmarkCase.model_validate(case)


def test_sql_program_output_is_the_exported_rows(tmp_path):
    runner = ProgramRunner(StaticSqlRunner({COUNT_SQL: _result(209)}), FakeSandbox())
    run = runner.run(_case(209).reference, "separated", tmp_path)
    assert run.output == [{"n": 209}]
    assert json.loads(run.artifacts["n"].read_text()) == [{"n": 209}]


def test_python_step_receives_its_inputs_and_its_result_is_the_output(tmp_path):
    sandbox = FakeSandbox(respond=lambda script: success_outcome({"n": 418}))
    runner = ProgramRunner(StaticSqlRunner({COUNT_SQL: _result(209)}), sandbox)
    run = runner.run(_case(418, python=True).reference, "separated", tmp_path)
    assert run.output == {"n": 418}
    assert [path.name for path in sandbox.calls[0].inputs] == ["n.json"]


def test_guard_rejection_names_the_statement(tmp_path):
    runner = ProgramRunner(StaticSqlRunner({POSTGIS_SQL: _result(1)}), FakeSandbox())
    program = _case(1, cross=True).cross_check.program
    with pytest.raises(ProgramFailedError, match=r"statement 'm'.*spatial"):
        runner.run(program, "separated", tmp_path)
    assert runner.run(program, "postgis", tmp_path).output == [{"n": 1}]


def test_database_error_becomes_program_failure(tmp_path):
    failing = StaticSqlRunner({COUNT_SQL: QueryExecutionError("undefined_column", "no column")})
    with pytest.raises(ProgramFailedError, match="undefined_column"):
        ProgramRunner(failing, FakeSandbox()).run(_case(1).reference, "separated", tmp_path)


def test_verify_passes_when_reference_and_cross_check_agree(tmp_path):
    runner = ProgramRunner(StaticSqlRunner({COUNT_SQL: _result(5), POSTGIS_SQL: _result(5)}),
                           FakeSandbox())
    verdict = verify_case(_case(5, cross=True), runner, tmp_path / "w")
    assert verdict.ok, verdict.problems
    assert verdict.cross_check_ok is True


@pytest.mark.parametrize(("reference", "cross", "expected", "problem"), [
    (5, 5, 6, "reference disagrees"),
    (5, 6, 5, "cross-check (PostGIS count with ST_X) disagrees"),
])
def test_verify_reports_each_disagreement(tmp_path, reference, cross, expected, problem):
    runner = ProgramRunner(
        StaticSqlRunner({COUNT_SQL: _result(reference), POSTGIS_SQL: _result(cross)}), FakeSandbox()
    )
    verdict = verify_case(_case(expected, cross=True), runner, tmp_path / "w")
    assert not verdict.ok
    assert any(problem in line for line in verdict.problems), verdict.problems


def test_verify_reports_unfilled_expected_value(tmp_path):
    runner = ProgramRunner(StaticSqlRunner({COUNT_SQL: _result(5)}), FakeSandbox())
    verdict = verify_case(_case(None), runner, tmp_path / "w")
    assert not verdict.ok
    assert "geoask bench fill" in verdict.problems[0]


def test_failed_script_is_reported(tmp_path):
    from sandbox.models import ScriptError

    def fail(script):
        outcome = success_outcome({})
        error = ScriptError(kind="missing_field", message="KeyError: 'n'", line=3,
                            hint="check the field")
        return outcome.model_copy(update={"status": "exception", "protocol": None, "error": error})

    runner = ProgramRunner(StaticSqlRunner({COUNT_SQL: _result(5)}), FakeSandbox(respond=fail))
    verdict = verify_case(_case(10, python=True), runner, tmp_path / "w")
    assert not verdict.ok
    assert "python 'doubled'" in verdict.problems[0]
    assert "missing_field line 3" in verdict.problems[0]


def test_unreachable_database_stops_the_run(tmp_path):
    from geoask.errors import DatabaseError

    down = StaticSqlRunner({COUNT_SQL: DatabaseError("no server; start it with geoask db up")})
    with pytest.raises(DatabaseError, match="geoask db up"):
        ProgramRunner(down, FakeSandbox()).run(_case(1).reference, "separated", tmp_path)


def test_a_python_steps_sandbox_starts_before_the_sql_it_reads_runs(tmp_path):
    events: list[str] = []

    class Recording(StaticSqlRunner):
        def run(self, checked):
            events.append("sql")
            return super().run(checked)

    class Starting(FakeSandbox):
        def start(self, limits=None):
            events.append("start")
            return super().start(limits)

    sandbox = Starting(respond=lambda script: success_outcome({"n": 418}))
    runner = ProgramRunner(Recording({COUNT_SQL: _result(209)}), sandbox)
    runner.run(_case(418, python=True).reference, "separated", tmp_path)
    assert events == ["start", "sql"]
    assert len(sandbox.calls) == 1 and sandbox.calls[0].inputs[0].name == "n.json"
    assert runner.run(_case(209).reference, "separated", tmp_path / "sql-only").output == [
        {"n": 209}]
    assert events == ["start", "sql", "sql"]  # no Python step: no sandbox started
