"""The reference model as the REACT agent: a case's verified program as a sequence of tool calls.

The program becomes ``inspect_schema`` (the tables its SQL reads), one ``run_sql`` per
reference statement (named as in the case, so the scripts find ``/input/<name>.<ext>``), one
``run_cell`` per consolidated Python step (inputs: the statements of the SQL steps it reads),
then the final answer PROJECTED FROM THE TOOL RESULTS with the case's answer contract
(:func:`geoask.models.reference.answer.case_answer`; the expected value is never read).

``reference-faulty`` puts the case's planned fault (:mod:`.faults`) into the sequence, and the
calls a ReAct agent would make to recover after the error it is shown:

- ``wrong_column``: the misspelt statement first (the database rejects it), then the right one;
- ``missing_field``: the statement without the column, the cell (fails: missing field), the
  right statement under a new name (``<name>_fixed``: a result name is single-use) and the
  cell again reading that name;
- ``degrees``: the cell that measures in degrees, and nothing after it - REACT has no reviewer,
  so the wrong numbers reach the answer (the honest cost of the design).

Which call comes next is read from the conversation so far: the number of tool calls already
made, so the same messages always give the same next call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import sqlglot
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart, ToolReturnPart
from sqlglot import exp

from geoask.cases.model import BenchmarkCase
from geoask.cases.model import SqlStatement as CaseStatement
from geoask.cases.steps import ReferenceStep, consolidated_steps
from geoask.models.reference.answer import case_answer
from geoask.models.reference.faults import FaultKind, planned_fault, statements_from_text
from geoask.vocabulary.answers import AnswerOutput
from geoask.vocabulary.plan import StepKind

REACT_TOOLS = ("inspect_schema", "run_sql", "run_cell")
"""The ReAct agent's function tools (``agents/react.py``); ``run_sql`` marks the agent."""
FIXED_SUFFIX = "_fixed"


@dataclass(frozen=True)
class ToolAction:
    """One tool call of the replay: the tool's name and its arguments."""

    tool: str
    args: dict[str, Any] = field(default_factory=dict)


def case_tables(case: BenchmarkCase) -> list[str]:
    """The tables the case's reference SQL reads, in order of first use (bare names)."""
    names: list[str] = []
    for step in consolidated_steps(case):
        for statement in step.statements:
            try:
                tree = sqlglot.parse_one(statement.sql, dialect="postgres")
            except sqlglot.errors.ParseError:
                continue
            ctes = {cte.alias_or_name for cte in tree.find_all(exp.CTE)}
            names += [t.name for t in tree.find_all(exp.Table) if t.name and t.name not in ctes]
    return list(dict.fromkeys(names))


def react_actions(case: BenchmarkCase, faulty: bool = False) -> list[ToolAction]:
    """The tool calls that replay ``case`` (with its fault and recovery when ``faulty``)."""
    fault = planned_fault(case) if faulty else None
    steps = consolidated_steps(case)
    actions = [ToolAction("inspect_schema", {"tables": case_tables(case)})]
    names_of: dict[str, list[str]] = {}
    for step in steps:
        if step.kind is StepKind.SQL:
            names_of[step.id] = [s.name for s in step.statements]
            hit = fault if fault is not None and fault.step_id == step.id else None
            if hit is not None and hit.kind is FaultKind.WRONG_COLUMN:
                wrong = statements_from_text(hit.faulty_text)
                for good, bad in zip(step.statements, wrong, strict=True):
                    if bad.sql != good.sql:
                        actions.append(_sql(bad))
                    actions.append(_sql(good))
            elif hit is not None and hit.kind is FaultKind.MISSING_FIELD:
                actions += [_sql(s) for s in statements_from_text(hit.faulty_text)]
            else:
                actions += [_sql(s) for s in step.statements]
            continue
        inputs = [name for ref in step.inputs for name in names_of.get(ref, [])]
        if fault is not None and fault.kind is FaultKind.DEGREES and fault.step_id == step.id:
            actions.append(_cell(fault.faulty_text, inputs))
            continue
        actions.append(_cell(step.script, inputs))
        upstream = next((s for s in steps if fault is not None and s.id == fault.step_id
                         and fault.kind is FaultKind.MISSING_FIELD), None)
        if upstream is not None:
            actions += _missing_field_recovery(upstream, step, inputs)
    return actions


def _missing_field_recovery(upstream: ReferenceStep, step: ReferenceStep,
                            inputs: list[str]) -> list[ToolAction]:
    """Run the right statements under new names, then the cell again reading them."""
    renamed = {s.name: s.name + FIXED_SUFFIX for s in upstream.statements}
    script = step.script
    for old, new in renamed.items():
        script = script.replace(f"/input/{old}.", f"/input/{new}.")
    return [*(_sql(CaseStatement(name=renamed[s.name], sql=s.sql)) for s in upstream.statements),
            _cell(script, [renamed.get(name, name) for name in inputs])]


def _sql(statement: CaseStatement) -> ToolAction:
    return ToolAction("run_sql", {"name": statement.name, "sql": statement.sql})


def _cell(code: str, inputs: Sequence[str]) -> ToolAction:
    return ToolAction("run_cell", {"code": code, "inputs": list(inputs)})


def calls_made(messages: Sequence[ModelMessage]) -> int:
    """How many function-tool calls the agent made so far in ``messages``."""
    return sum(isinstance(part, ToolCallPart) and part.tool_name in REACT_TOOLS
               for message in messages if isinstance(message, ModelResponse)
               for part in message.parts)


def tool_results(messages: Sequence[ModelMessage]) -> str:
    """Every tool result the agent was shown, in order, as one text."""
    return "\n\n".join(str(part.content) for message in messages for part in message.parts
                       if isinstance(part, ToolReturnPart) and part.tool_name in REACT_TOOLS)


def react_reply(case: BenchmarkCase, messages: Sequence[ModelMessage],
                faulty: bool = False) -> ToolAction | AnswerOutput:
    """The next call of the replay: a tool action, or the final answer once all were made."""
    actions = react_actions(case, faulty)
    made = calls_made(messages)
    if made < len(actions):
        return actions[made]
    return case_answer(case, tool_results(messages))
