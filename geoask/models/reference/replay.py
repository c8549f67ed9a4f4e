"""The replay model: :class:`ReferenceModel` answers each agent role for a known case.

A case is found by the exact question text of the prompt, else by a case id named in it. A
question it does not know gets an ``IntentRejection`` (``not_answerable``) saying that the
reference model only knows the benchmark questions. Each role's reply is built by
:mod:`.intent`, :mod:`.plan`, :mod:`.answer` or here (SQL, compute, review), with the faults
of :mod:`.faults` for ``reference-faulty``; it is returned through the agent's output tool.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final

from pydantic import BaseModel
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    ToolCallPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

from geoask.cases.model import BenchmarkCase
from geoask.cases.steps import ReferenceStep, consolidated_steps
from geoask.models.reference.answer import case_answer
from geoask.models.reference.faults import (
    FaultKind,
    InjectedFault,
    planned_fault,
    statements_from_text,
)
from geoask.models.reference.intent import case_intent
from geoask.models.reference.plan import case_plan
from geoask.models.reference.react import ToolAction, calls_made, react_reply
from geoask.models.scripted import count_tokens, latest_user_prompt, output_tool_call, request_text
from geoask.vocabulary.drafts import ComputeScript, SqlDraft, SqlStatement
from geoask.vocabulary.plan import IntentRejection, RejectionType, Review, ReviewDecision

REFERENCE: Final = "reference"
REFERENCE_FAULTY: Final = "reference-faulty"
REFERENCE_MODELS: Final = (REFERENCE, REFERENCE_FAULTY)

UNKNOWN_QUESTION_MESSAGE: Final = (
    "The offline reference model only knows the benchmark questions (the cases of "
    "GEOASK_BENCH_CASES_PATH, default benchmark/cases); "
    "ask one of them word for word, or name its case id, or configure a real model with "
    "GEOASK_MODEL."
)
# A table header of a rendered schema outline, any schema (retrieval.render.outline_block):
# "us_census.ny8_tracts: NY census tracts [census_tract, static]" -> table, spatial unit.
_OUTLINE_TABLE = re.compile(r"^[^\s.:]+\.([^\s.:]+): [^\n]*\[([^\s,\]]+), [^\]\n]*\]",
                            re.MULTILINE)
_CASE_ID = re.compile(r"\b[a-z][a-z0-9_]*-[0-9]{3}\b")


@dataclass
class ReferenceModel:
    """The offline replay model over ``cases``; see :mod:`geoask.models.reference`.

    Args:
        cases: the benchmark cases it knows.
        faulty: True for ``reference-faulty`` (first-attempt faults on the documented subset).

    Attributes:
        injected: faults injected so far, as ``(case id, fault kind)``.

    """

    cases: Sequence[BenchmarkCase]
    faulty: bool = False
    injected: list[tuple[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._by_question = {case.question.strip(): case for case in self.cases}
        self._by_id = {case.id: case for case in self.cases}
        self._done: set[tuple[str, str, str]] = set()
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        """``reference`` or ``reference-faulty``."""
        return REFERENCE_FAULTY if self.faulty else REFERENCE

    def model(self, role: str) -> FunctionModel:
        """The ``FunctionModel`` answering agent ``role``."""

        def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            return self._respond(role, messages, info)

        return FunctionModel(respond, model_name=f"{self.name}-{role}")

    def model_for(self, role: str, settings: object = None) -> FunctionModel:
        """Same as :meth:`model`; matches ``geoask.models.llm.model_for(role, settings)``."""
        return self.model(role)

    def any_role_model(self) -> FunctionModel:
        """One ``FunctionModel`` for every agent, the role read from the offered output tools.

        ``geoask.models.llm.model_for(..., reference_model=...)`` takes a single model.
        """

        def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            return self._respond(role_of(info), messages, info)

        return FunctionModel(respond, model_name=self.name)

    def _respond(self, role: str, messages: list[ModelMessage],
                 info: AgentInfo) -> ModelResponse:
        prompt = latest_user_prompt(messages)
        if role == "react":
            reply = self.react_reply(prompt, messages)
            if isinstance(reply, ToolAction):
                call = ToolCallPart(reply.tool, reply.args)
                return _response(call, count_tokens(json.dumps(reply.args)), messages, info,
                                 f"{self.name}-{role}")
        else:
            reply = self.reply(role, prompt, retried=_was_retried(messages))
        return _tool_call(reply, messages, info, f"{self.name}-{role}")

    def react_reply(self, prompt: str,
                    messages: Sequence[ModelMessage]) -> ToolAction | BaseModel:
        """The REACT agent's next call for the case ``prompt`` asks (:mod:`.react`).

        Raises:
            ValueError: the prompt asks no known case.

        """
        case = self.find_case(prompt)
        if case is None:
            raise ValueError(UNKNOWN_QUESTION_MESSAGE)
        fault = planned_fault(case) if self.faulty else None
        if fault is not None and calls_made(messages) == 0:
            with self._lock:
                self.injected.append((case.id, fault.kind.value))
        return react_reply(case, messages, self.faulty)

    def find_case(self, prompt: str) -> BenchmarkCase | None:
        """The case whose question the prompt asks (exact text), else one whose id it names."""
        question = prompt_question(prompt)
        if question in self._by_question:
            return self._by_question[question]
        for case_id in _CASE_ID.findall(prompt):
            if case_id in self._by_id:
                return self._by_id[case_id]
        return None

    def reply(self, role: str, prompt: str, *, retried: bool = False) -> BaseModel:
        """What agent ``role`` is answered for ``prompt`` (an output model of that agent)."""
        case = self.find_case(prompt)
        if case is None:
            if role == "intent":
                return IntentRejection(rejection_type=RejectionType.NOT_ANSWERABLE,
                                       message=UNKNOWN_QUESTION_MESSAGE)
            raise ValueError(UNKNOWN_QUESTION_MESSAGE)
        replay = _REPLIES.get(role)
        if replay is None:
            raise ValueError(f"the reference model has no role {role!r}")
        return replay(self, case, prompt, retried)

    def _intent(self, case: BenchmarkCase, prompt: str, retried: bool) -> BaseModel:
        missing = [q for q in getattr(case, "earlier_questions", []) if q not in prompt]
        if missing:  # a follow-up whose context is not in the conversation
            return IntentRejection(rejection_type=RejectionType.NOT_ANSWERABLE,
                                   message=clarifying_message(missing[-1]))
        return case_intent(case)

    def _plan(self, case: BenchmarkCase, prompt: str, retried: bool) -> BaseModel:
        shown = dict(_OUTLINE_TABLE.findall(prompt))
        return case_plan(case, replanned="Earlier plans failed" in prompt,
                         shown_tables=list(shown), granularities=shown)

    def _answer(self, case: BenchmarkCase, prompt: str, retried: bool) -> BaseModel:
        return case_answer(case, prompt)

    def _sql_step(self, case: BenchmarkCase, prompt: str, retried: bool) -> BaseModel:
        return self._sql(case, self._step(case, prompt), retried)

    def _compute_step(self, case: BenchmarkCase, prompt: str, retried: bool) -> BaseModel:
        return self._compute(case, self._step(case, prompt), retried)

    def _step(self, case: BenchmarkCase, prompt: str) -> ReferenceStep:
        match = re.search(r'^Step \(JSON\): (.*)$', prompt, re.MULTILINE)
        step_id = json.loads(match.group(1))["id"] if match else ""
        for step in consolidated_steps(case):
            if step.id == step_id:
                return step
        raise ValueError(f"case {case.id} has no step {step_id!r}")

    def _first_time(self, case: BenchmarkCase, kind: FaultKind, step_id: str) -> bool:
        with self._lock:
            key = (case.question, kind.value, step_id)
            if key in self._done:
                return False
            self._done.add(key)
            self.injected.append((case.id, kind.value))
            return True

    def _fault(self, case: BenchmarkCase, step: ReferenceStep, retried: bool,
               kinds: tuple[FaultKind, ...]) -> InjectedFault | None:
        if not self.faulty or retried:
            return None
        fault = planned_fault(case)
        if fault is None or fault.kind not in kinds or fault.step_id != step.id:
            return None
        return fault if self._first_time(case, fault.kind, step.id) else None

    def _sql(self, case: BenchmarkCase, step: ReferenceStep, retried: bool) -> SqlDraft:
        fault = self._fault(case, step, retried,
                            (FaultKind.MISSING_FIELD, FaultKind.WRONG_COLUMN))
        statements = (statements_from_text(fault.faulty_text) if fault
                      else list(step.statements))
        return SqlDraft(statements=[
            SqlStatement(name=s.name, sql=s.sql, purpose=f"{s.name}: {step.objective}"[:300])
            for s in statements])

    def _compute(self, case: BenchmarkCase, step: ReferenceStep,
                 retried: bool) -> ComputeScript:
        fault = self._fault(case, step, retried, (FaultKind.DEGREES,))
        script = fault.faulty_text if fault else step.script
        method = ("reference script of the case, as verified"
                  + (f"; measured as the case states: {case.measurement}"
                     if case.measurement else ""))
        return ComputeScript(script=script, method=method[:500])

    def _review(self, case: BenchmarkCase, prompt: str, retried: bool = False) -> Review:
        fault = planned_fault(case) if self.faulty else None
        if fault is not None and fault.kind is FaultKind.DEGREES:
            key = (case.question, "review", fault.step_id)
            with self._lock:
                first = key not in self._done and (
                    case.question, FaultKind.DEGREES.value, fault.step_id) in self._done
                if first:
                    self._done.add(key)
            if first:
                return Review(decision=ReviewDecision.REVISE, target_step=fault.step_id,
                              reason="the distances/areas are in degrees (the script measured "
                                     "in EPSG:4326); reproject to a metric CRS and recompute")
        return Review(decision=ReviewDecision.ACCEPT,
                      reason="the evidence has the fields of the answer contract")


_Reply = Callable[[ReferenceModel, BenchmarkCase, str, bool], BaseModel]

_REPLIES: Final[dict[str, _Reply]] = {
    "intent": ReferenceModel._intent, "planner": ReferenceModel._plan,
    "sql": ReferenceModel._sql_step, "compute": ReferenceModel._compute_step,
    "reviewer": ReferenceModel._review, "answer": ReferenceModel._answer,
}
"""Agent role -> the reply of :meth:`ReferenceModel.reply` (``react`` answers by
:meth:`ReferenceModel.react_reply`, over the whole conversation of tool calls)."""
REPLAYED_ROLES: Final = frozenset({*_REPLIES, "react"})
"""The agent roles the reference model plays (every question-run role)."""


_ROLE_BY_OUTPUT: Final = {
    "Intent": "intent", "Plan": "planner", "SqlDraft": "sql", "ComputeScript": "compute",
    "Review": "reviewer", "FinalAnswer": "answer",
}


def clarifying_message(earlier: str) -> str:
    """The clarifying refusal of a follow-up asked without the turn it builds on."""
    return ("This question refers to earlier results that this conversation does not hold, "
            f"so I cannot tell what it means. Did you mean a follow-up to: \"{earlier}\"? "
            "Ask that first (or in the same conversation), or ask the question in full.")


def role_of(info: AgentInfo) -> str:
    """The agent role of a request, from the names of its tools.

    ``react`` when the ReAct agent's ``run_sql`` tool is offered; else from the output tools.

    Raises:
        ValueError: no output tool belongs to one of the six agents.

    """
    if any(tool.name == "run_sql" for tool in info.function_tools):
        return "react"
    for tool in info.output_tools:
        for output, role in _ROLE_BY_OUTPUT.items():
            if tool.name == output or tool.name.endswith(f"_{output}"):
                return role
    offered = ", ".join(tool.name for tool in info.output_tools) or "none"
    raise ValueError(f"the reference model answers only the geoask agents (offered: {offered})")


def prompt_question(prompt: str) -> str:
    r"""The question of an agent prompt (``Question: ...`` up to the first blank line).

    >>> prompt_question("Question: How many?\n\nTables: ...")
    'How many?'
    """
    if not prompt.startswith("Question: "):
        return prompt.strip()
    return prompt[len("Question: "):].split("\n\n", 1)[0].strip()


def _was_retried(messages: Sequence[ModelMessage]) -> bool:
    return any(isinstance(part, RetryPromptPart) for message in messages
               if isinstance(message, ModelRequest) for part in message.parts)


def _tool_call(reply: BaseModel, messages: list[ModelMessage], info: AgentInfo,
               model_name: str) -> ModelResponse:
    """Answer through the agent's output tool for ``reply``'s type, with local token counts."""
    call, completion_tokens = output_tool_call(reply, info)
    return _response(call, completion_tokens, messages, info, model_name)


def _response(call: ToolCallPart, completion_tokens: int, messages: list[ModelMessage],
              info: AgentInfo, model_name: str) -> ModelResponse:
    """One tool call, with the prompt counted locally over everything the request sends."""
    return ModelResponse(
        parts=[call],
        usage=RequestUsage(input_tokens=count_tokens(request_text(messages, info)),
                           output_tokens=completion_tokens),
        model_name=model_name,
    )


def reference_model(cases: Sequence[BenchmarkCase], name: str = REFERENCE) -> ReferenceModel:
    """A :class:`ReferenceModel` for ``name`` (``reference`` or ``reference-faulty``).

    Raises:
        ValueError: ``name`` is not one of :data:`REFERENCE_MODELS`.

    """
    if name not in REFERENCE_MODELS:
        raise ValueError(f"{name!r} is not a reference model ({', '.join(REFERENCE_MODELS)})")
    return ReferenceModel(cases, faulty=name == REFERENCE_FAULTY)
