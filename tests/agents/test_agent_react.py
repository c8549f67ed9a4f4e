"""The ReAct agent and its toolbox without a database: rules, error memory, replay sequences."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from agents.react import ReactDeps, cell_errors, prompt, react_agent, react_errors
from geoask.cases.loader import load_cases
from geoask.cases.steps import consolidated_steps
from geoask.catalog.model import load_catalog
from geoask.models.reference.faults import FaultKind, planned_fault
from geoask.models.reference.react import FIXED_SUFFIX, case_tables, react_actions
from geoask.models.reference.replay import role_of
from geoask.records.execution_log import ExecutionRecorder
from geoask.records.run_artifacts import RunArtifacts
from geoask.run.react import INSPECT_FIRST, ErrorMemory, ReactToolbox
from geoask.settings import get_settings
from geoask.sql.context import GuardContext
from geoask.vocabulary.answers import AnswerRefusal, AnswerType, FinalAnswer
from geoask.vocabulary.plan import StepKind
from sandbox.fake import FakeSandbox

SETTINGS = get_settings()
CATALOG = load_catalog(SETTINGS.catalog_path)
CASES = [item.case for item in load_cases(SETTINGS.bench_cases_path)]


class _Schema:
    """Records what was asked; returns an object with the retriever's ``prompt_text``."""

    def __init__(self) -> None:
        self.asked: list[list[str]] = []

    def retrieve(self, query: str, intent: None = None, within: Any = None,
                 geometry: bool = True) -> Any:
        self.asked.append(list(within or []))
        return type("Subset", (), {"prompt_text": f"columns of {', '.join(within)}"})()


class _NoDatabase:
    def __getattr__(self, name: str) -> Any:
        raise AssertionError("the toolbox must not reach the database here")


def toolbox(tmp_path: Path, sandbox: FakeSandbox | None = None,
            max_calls: int = 10) -> ReactToolbox:
    return ReactToolbox(
        question="q", catalog=CATALOG, schema=_Schema(), sql_runner=_NoDatabase(),
        guard=GuardContext.from_settings(SETTINGS, catalog=CATALOG),
        session=(sandbox or FakeSandbox()).open_session(),
        store=RunArtifacts(str(tmp_path), "run"), recorder=ExecutionRecorder("run", "q", "REACT"),
        max_calls=max_calls)


def test_a_query_before_inspection_is_refused_and_remembered(tmp_path) -> None:
    tools = toolbox(tmp_path)
    reply = tools.run_sql("rows", "SELECT 1")
    assert reply == f"ERROR (inspect_first): {INSPECT_FIRST}"
    assert tools.memory.entries[0].error_class == "inspect_first"
    trace = tools.recorder.log.tool_trace
    assert [(e.tool, e.status) for e in trace] == [("guard", "rejected")]
    assert tools.failures == 1 and tools.evidence == ""


def test_inspection_names_catalog_tables_only(tmp_path) -> None:
    tools = toolbox(tmp_path)
    table = CATALOG.tables[0].name
    assert tools.inspect([]).startswith("Tables:\n") and not tools.inspected
    assert "ERROR (unknown_table)" in tools.inspect(["no_such_table"])
    assert tools.inspect([f"public.{table}"]) == f"columns of {table}"
    assert tools.inspected == [table] and tools.schema.asked == [[table]]  # type: ignore[attr-defined]


def test_cells_run_in_one_session_and_unknown_inputs_are_refused(tmp_path) -> None:
    sandbox = FakeSandbox()
    tools = toolbox(tmp_path, sandbox)
    assert tools.run_cell("n = 41").startswith("cell ran (no result object)")
    reply = tools.run_cell('import json\nprint(json.dumps({"status": "success", '
                           '"summary": "n", "result": {"n": n + 1}}))')
    assert reply == 'script summary: n\nresult (JSON): {"n": 42}'
    assert "ERROR (unknown_input)" in tools.run_cell("pass", ["rows"])
    failed = tools.run_cell("{}['population']")
    assert failed.startswith("ERROR (missing_field)") and "Fix:" in failed
    assert len(sandbox.cell_calls) == 3 and tools.used_sandbox
    assert [e.error_class for e in tools.memory.entries] == ["unknown_input", "missing_field"]
    assert tools.evidence.startswith("cell ran (no result object)")  # prints are evidence too
    assert tools.evidence.endswith('result (JSON): {"n": 42}')


def test_the_step_budget_refuses_calls_past_it(tmp_path) -> None:
    tools = toolbox(tmp_path, max_calls=1)
    tools.inspect([])
    assert tools.inspect([]).startswith("ERROR (step_budget)")
    assert tools.run_cell("x = 1").startswith("ERROR (step_budget)")


@pytest.mark.parametrize(("code", "problem"), [
    ("import requests", "imports not available in the sandbox: requests"),
    ("eval('1')", "eval"),
    ("open('/etc/passwd')", "/etc"),
    ("def f(:", "does not parse"),
])
def test_cell_rules(code, problem) -> None:
    errors = cell_errors(code)
    assert errors and problem in errors[0]


def test_error_memory_reaches_every_later_request(tmp_path) -> None:
    sandbox = FakeSandbox()
    tools = toolbox(tmp_path, sandbox)
    seen: list[str] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(info.instructions or "")
        if len(seen) == 1:
            return ModelResponse(parts=[ToolCallPart("run_sql", {"name": "x", "sql": "SELECT 1"})])
        if len(seen) == 2:
            return ModelResponse(parts=[ToolCallPart("run_cell", {"code": "import requests"})])
        refusal = AnswerRefusal(reason="no data")
        return ModelResponse(parts=[ToolCallPart(info.output_tools[-1].name,
                                                 refusal.model_dump())])

    deps = ReactDeps(question="q", tables_text="t", toolbox=tools)
    output = react_agent.run_sync(prompt(deps), deps=deps, model=FunctionModel(model)).output
    assert isinstance(output, AnswerRefusal)
    assert "Errors so far" not in seen[0]
    assert "1. run_sql: inspect_first" in seen[1] and "2. run_cell" not in seen[1]
    assert "1. run_sql: inspect_first" in seen[2] and "2. run_cell: package_rule" in seen[2]
    assert sandbox.cell_calls == []  # the package rule stopped the cell before the session


def test_final_answer_numbers_must_come_from_tool_results(tmp_path) -> None:
    tools = toolbox(tmp_path)
    tools.outputs.append('script summary: s\nresult (JSON): {"n": 42}')
    deps = ReactDeps(question="q", tables_text="t", toolbox=tools)
    good = FinalAnswer(answer_type=AnswerType.SCALAR, data_payload={"value": 42}, summary="42.")
    made_up = good.model_copy(update={"data_payload": {"value": 43}})
    assert react_errors(good, deps) == []
    assert "43" in react_errors(made_up, deps)[0]


def test_error_memory_text_is_empty_until_something_fails() -> None:
    memory = ErrorMemory()
    assert memory.text() == ""
    memory.add("run_cell", "syntax_error", "line 1:\n  bad")
    assert memory.text().endswith("1. run_cell: syntax_error: line 1: bad")


def test_the_reference_replays_inspect_sql_cells_in_case_order() -> None:
    case = next(c for c in CASES if c.requires_sandbox and planned_fault(c) is None)
    actions = react_actions(case)
    steps = consolidated_steps(case)
    statements = [s for step in steps for s in step.statements]
    assert actions[0].tool == "inspect_schema" and actions[0].args["tables"] == case_tables(case)
    assert [a.args["name"] for a in actions if a.tool == "run_sql"] == [s.name for s in statements]
    cells = [a for a in actions if a.tool == "run_cell"]
    assert [c.args["code"] for c in cells] == [s.script for s in steps
                                               if s.kind is StepKind.PYTHON]
    assert set(cells[0].args["inputs"]) <= {s.name for s in statements}


@pytest.mark.parametrize("kind", list(FaultKind))
def test_reference_faulty_puts_the_fault_and_the_recovery_in_the_sequence(kind) -> None:
    case = next(c for c in CASES if (f := planned_fault(c)) is not None and f.kind is kind)
    fault = planned_fault(case)
    assert fault is not None
    faulty, clean = react_actions(case, faulty=True), react_actions(case)
    if kind is FaultKind.WRONG_COLUMN:
        assert len(faulty) == len(clean) + 1 and "_nm" in str(faulty)
    elif kind is FaultKind.MISSING_FIELD:
        renamed = [a for a in faulty if a.tool == "run_sql" and FIXED_SUFFIX in a.args["name"]]
        cells = [a for a in faulty if a.tool == "run_cell"]
        assert renamed and len(cells) == 2
        assert all(FIXED_SUFFIX in name for name in cells[1].args["inputs"])
        assert f"/input/{renamed[0].args['name']}." in cells[1].args["code"]
    else:  # degrees: no reviewer, no recovery
        assert len(faulty) == len(clean)
        assert [a.args["code"] for a in faulty if a.tool == "run_cell"] == [fault.faulty_text]


def test_the_react_agent_is_told_apart_by_its_tools() -> None:
    seen: list[str] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(role_of(info))
        return ModelResponse(parts=[TextPart("")])

    tools = toolbox(Path("/tmp"))
    deps = ReactDeps(question="q", tables_text="t", toolbox=tools)
    with pytest.raises(Exception):  # noqa: B017 - the empty text is not an answer
        react_agent.run_sync("q", deps=deps, model=FunctionModel(model))
    assert seen and set(seen) == {"react"}
