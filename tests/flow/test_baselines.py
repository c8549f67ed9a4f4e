"""The REACT and PLAN_EXECUTE baselines end to end: real PostGIS, the reference model.

REACT runs its cells in the FakeSandbox's in-process session here (the verified scripts of
the chosen cases read only ``/input``); PLAN_EXECUTE runs its scripts in the real sandbox.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from flows.answer_question import answer_question
from geoask.bench.evaluate import score_case
from geoask.cases.loader import load_cases
from geoask.cases.model import BenchmarkCase
from geoask.models.reference import reference_model
from geoask.models.reference.faults import FaultKind, planned_fault
from geoask.models.reference.react import react_actions
from geoask.run.composition import QuestionServices
from geoask.run.variants import Variant
from geoask.settings import get_settings
from geoask.sql.executor import PostgresSqlRunner
from sandbox.fake import FakeSandbox

CASES = {item.case.id: item.case for item in load_cases(get_settings().bench_cases_path)}


def _case(predicate: Callable[[BenchmarkCase], bool]) -> BenchmarkCase:
    return next(case for case in CASES.values() if predicate(case))


SQL_ONLY = _case(lambda c: not c.requires_sandbox and planned_fault(c) is None)
WITH_PYTHON = _case(lambda c: c.requires_sandbox and planned_fault(c) is None
                    and len(c.reference.steps) == 2)
WRONG_COLUMN = _case(lambda c: (f := planned_fault(c)) is not None
                     and f.kind is FaultKind.WRONG_COLUMN)


@pytest.fixture
def react_services(database, schema_retriever, catalog, flow_settings):
    def build(case: BenchmarkCase, model: str = "reference",
              **overrides: object) -> tuple[QuestionServices, FakeSandbox]:
        sandbox = FakeSandbox()
        replay = reference_model([case], model)
        services = QuestionServices(
            settings=flow_settings.model_copy(update=overrides), variant=Variant.REACT,
            models=replay.model, sql_runner=PostgresSqlRunner(database.reader_url),
            sandbox=sandbox, schema=schema_retriever, catalog=catalog)
        return services, sandbox

    return build


@pytest.mark.parametrize("case", [SQL_ONLY, WITH_PYTHON], ids=lambda c: c.id)
def test_react_replays_the_verified_program_as_tool_calls(react_services, case) -> None:
    services, sandbox = react_services(case)
    result = answer_question(case.question, services=services)
    log = services.recorder.log
    score = score_case(case, result.answer, log, variant="REACT")
    assert result.status == "answered" and score.ssa, (result.message, score.reason)
    assert score.first_path_success and log.guardrail_retries == 0
    assert [call.role for call in log.model_calls] == ["react"]
    assert log.model_calls[0].requests == len(react_actions(case)) + 1
    assert log.route == ("sql_then_python" if case.requires_sandbox else "sql_only")
    assert len(sandbox.sessions) == 1 and sandbox.sessions[0].ended == "closed"
    assert len(sandbox.cell_calls) == (1 if case.requires_sandbox else 0)
    transcript = services.store.read_text(services.store.url("react/transcript.md"))
    assert transcript.count("\n## ") == len(react_actions(case))
    assert "## 1. inspect_schema" in transcript and "\n## 2. run_sql" in transcript


def test_react_tokens_count_the_whole_history_of_every_request(react_services) -> None:
    services, _ = react_services(WITH_PYTHON)
    answer_question(WITH_PYTHON.question, services=services)
    call = services.recorder.log.model_calls[0]
    # each request resends the instructions, tools and all earlier results: the prompt
    # tokens grow faster than the number of requests times the first request's size
    assert call.prompt_tokens > call.requests * 500 and call.completion_tokens > 0


def test_react_faulty_recovers_from_the_database_error_it_is_shown(react_services) -> None:
    services, _ = react_services(WRONG_COLUMN, "reference-faulty")
    result = answer_question(WRONG_COLUMN.question, services=services)
    log = services.recorder.log
    assert result.status == "answered"
    assert score_case(WRONG_COLUMN, result.answer, log).ssa
    assert log.guardrail_retries == 1 and log.failed_calls >= 1
    assert any(e.tool == "executor" and e.status != "ok" for e in log.tool_trace)


def test_react_step_budget_ends_the_run_honestly(react_services) -> None:
    services, _ = react_services(WITH_PYTHON, react_max_steps=2)
    result = answer_question(WITH_PYTHON.question, services=services)
    assert result.status == "failed" and result.answer is None
    assert "step budget" in result.message or "step_budget" in " ".join(
        e.detail for e in services.recorder.log.tool_trace)


@pytest.mark.parametrize("case", [SQL_ONLY, WITH_PYTHON], ids=lambda c: c.id)
def test_plan_execute_answers_without_a_reviewer(make_services, case) -> None:
    services = make_services(reference_model([case]), variant=Variant.PLAN_EXECUTE)
    result = answer_question(case.question, services=services)
    log = services.recorder.log
    assert result.status == "answered"
    assert score_case(case, result.answer, log).ssa
    roles = [call.role for call in log.model_calls]
    assert "reviewer" not in roles and roles.count("planner") == 1
    assert roles[-1] == "answer"


def test_plan_execute_replans_after_a_failed_step(make_services) -> None:
    services = make_services(reference_model([WRONG_COLUMN], "reference-faulty"),
                             variant=Variant.PLAN_EXECUTE)
    result = answer_question(WRONG_COLUMN.question, services=services)
    log = services.recorder.log
    assert result.status == "answered" and score_case(WRONG_COLUMN, result.answer, log).ssa
    assert "replan" in log.transitions and "revise" not in log.transitions
    assert [call.role for call in log.model_calls].count("planner") == 2


def test_react_runs_its_cells_in_the_real_sandbox_session(make_services) -> None:
    services = make_services(reference_model([WITH_PYTHON]), variant=Variant.REACT)
    result = answer_question(WITH_PYTHON.question, services=services)
    log = services.recorder.log
    assert result.status == "answered", result.message
    assert score_case(WITH_PYTHON, result.answer, log).ssa
    cells = [e for e in log.tool_trace if e.tool == "sandbox"]
    assert len(cells) == 1 and cells[0].status == "ok"


def test_react_sql_tool_goes_through_the_guard_executor_and_export(
        database, schema_retriever, catalog, flow_settings, tmp_path) -> None:
    from geoask.records.execution_log import ExecutionRecorder
    from geoask.records.run_artifacts import RunArtifacts
    from geoask.run.react import ReactToolbox
    from geoask.sql.context import GuardContext, SpatialPolicy

    table = "airports"
    tools = ReactToolbox(
        question="q", catalog=catalog, schema=schema_retriever,
        sql_runner=PostgresSqlRunner(database.reader_url),
        guard=GuardContext.from_settings(flow_settings, policy=SpatialPolicy.SEPARATED,
                                         catalog=catalog),
        session=FakeSandbox().open_session(), store=RunArtifacts(str(tmp_path), "run"),
        recorder=ExecutionRecorder("run", "q", "REACT"))
    tools.inspect([table])
    ok = tools.run_sql("n_airports", f"SELECT count(*) AS n FROM {table}")
    assert ok.startswith("artifact n_airports: 1 rows\nrecords (JSON): [{\"n\": ")
    assert "/input/n_airports.json" in ok
    assert "name_taken" in tools.run_sql("n_airports", f"SELECT 1 AS n FROM {table}")
    spatial = tools.run_sql("far", f"SELECT ST_Area(geom) FROM {table}")
    assert spatial.startswith("ERROR (guard:")
    wrong = tools.run_sql("bad", f"SELECT no_such_column FROM {table}")
    assert wrong.startswith("ERROR (database:undefined_column)")
    classes = [e.error_class for e in tools.memory.entries]
    assert classes[0] == "name_taken" and classes[2] == "database:undefined_column"
    trace = [(e.tool, e.status) for e in tools.recorder.log.tool_trace]
    assert ("executor", "ok") in trace and ("export", "ok") in trace
    assert ("guard", "rejected") in trace


def test_react_sql_tool_refuses_a_result_past_the_row_cap(
        database, schema_retriever, catalog, flow_settings, tmp_path) -> None:
    """REACT never sees a cut result (PLAN_EXECUTE runs the SQL task, as FULL does)."""
    from geoask.records.execution_log import ExecutionRecorder
    from geoask.records.run_artifacts import RunArtifacts
    from geoask.run.react import ReactToolbox
    from geoask.sql.context import GuardContext

    tools = ReactToolbox(
        question="q", catalog=catalog, schema=schema_retriever,
        sql_runner=PostgresSqlRunner(database.reader_url),
        guard=GuardContext.from_settings(flow_settings.model_copy(update={"sql_row_cap": 10}),
                                         catalog=catalog),
        session=FakeSandbox().open_session(), store=RunArtifacts(str(tmp_path), "run"),
        recorder=ExecutionRecorder("run", "q", "REACT"))
    tools.inspect(["airports"])
    refused = tools.run_sql("all_airports", "SELECT iata FROM demo.airports")
    assert refused.startswith("ERROR (database:result_too_large)")
    assert "more than 10 rows" in refused and "bounding-box" in refused
    assert "all_airports" not in tools.results
    assert not list(tmp_path.rglob("all_airports.*"))  # nothing exported
