"""The answer agent: turns the accepted evidence into ``{answer_type, data_payload, summary}``.

The payload must validate against the answer type's JSON Schema (geoask.vocabulary.answers);
numbers are
copied from the evidence, never computed or guessed by the model.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import PrepareOutputTools
from pydantic_ai.tools import ToolDefinition

from agents._checks import raise_for_errors
from agents._schema import compact_output_tools
from geoask.vocabulary.answers import (
    PAYLOAD_SCHEMAS,
    AnswerOutput,
    AnswerRefusal,
    AnswerType,
    FinalAnswer,
    contract_text,
    payload_errors,
)
from geoask.vocabulary.evidence import unsupported_numbers

# The Agent itself is defined at the end of this module (see agents/README.md).


@dataclass(frozen=True)
class AnswerDeps:
    """What the answer agent sees: the question, the contract and the final evidence."""

    question: str
    answer_type: AnswerType
    answer_fields: list[str]
    evidence: str


def payload_schema_text(answer_type: AnswerType) -> str:
    """The compact JSON Schema of ``answer_type``'s payload (only the contracted one is sent)."""
    return json.dumps(PAYLOAD_SCHEMAS[answer_type], separators=(",", ":"))

# --- instructions --------------------------------------------------------------------------
# Developer note: the final answer contract of CGD-QCSF: an explicit answer_type and a
# data_payload that must validate; numbers are copied from the accepted evidence.

INSTRUCTIONS = """\
Write the final answer of a question from accepted evidence, as FinalAnswer:
- answer_type: the contracted type.
- data_payload: valid under the payload JSON Schema given. Copy every number from the evidence
  (rounding is fine); never compute, estimate or invent one. Ranks start at 1 in the
  evidence's order. Units go in unit/units; coordinates are WGS 84 lon/lat.
- summary: one or two sentences for the user saying what the numbers are, with units.
Reply AnswerRefusal when the evidence does not contain the answer.
"""


# --- checks (pure; one rule each) ----------------------------------------------------------

_MAX_SUMMARY_CHARS = 600


def type_matches_contract(answer: FinalAnswer, expected: AnswerType) -> str | None:
    """The answer has the contracted answer type.

    >>> type_matches_contract(FinalAnswer(answer_type="scalar", data_payload={"value": 1},
    ...     summary="s"), AnswerType.RANKED_LIST)
    'answer_type must be ranked_list (the answer contract), not scalar'
    """
    if answer.answer_type != expected:
        return f"answer_type must be {expected.value} (the answer contract), not " \
               f"{answer.answer_type.value}"
    return None


def payload_valid(answer: FinalAnswer) -> list[str]:
    """The payload validates against its answer type's JSON Schema (geoask.vocabulary.answers)."""
    return [f"data_payload {error}" for error in payload_errors(answer.answer_type,
                                                                answer.data_payload)]


def summary_readable(answer: FinalAnswer) -> str | None:
    """The summary is present and short (at most 600 characters)."""
    text = answer.summary.strip()
    if not text:
        return "summary is empty: say what the answer is, with units"
    if len(text) > _MAX_SUMMARY_CHARS:
        return f"summary is {len(text)} characters; keep it to one or two sentences"
    return None


def numbers_from_evidence(answer: FinalAnswer, evidence: str) -> str | None:
    """Every number of the payload is in the evidence (maybe rounded): nothing is made up."""
    # The same check the flow applies to the final answer (geoask.vocabulary.evidence).
    invented = unsupported_numbers(answer.data_payload, evidence)
    if not invented:
        return None
    shown = ", ".join(f"{n:g}" for n in invented[:5])
    return f"these numbers are not in the evidence: {shown}; copy values from the evidence only"


def answer_errors(output: AnswerOutput, deps: AnswerDeps) -> list[str]:
    """Every rule the answer agent's ``output`` breaks for ``deps`` (empty when acceptable)."""
    if isinstance(output, AnswerRefusal):
        return [] if output.reason.strip() else ["a refusal needs a reason"]
    contract = type_matches_contract(output, deps.answer_type)
    if contract is not None:
        return [contract]
    errors = payload_valid(output)
    errors += [e for e in (summary_readable(output),
                           numbers_from_evidence(output, deps.evidence)) if e is not None]
    return errors


# --- agent ---------------------------------------------------------------------------------


def contracted_output_tools(ctx: RunContext[AnswerDeps],
                            tool_defs: list[ToolDefinition]) -> list[ToolDefinition]:
    """The compact output tools, FinalAnswer's ``answer_type`` narrowed to the contracted type.

    The model is offered only the type the plan contracted (``ctx.deps.answer_type``);
    :func:`type_matches_contract` still checks what comes back.
    """
    tools = compact_output_tools(ctx, tool_defs)
    narrowed = []
    for tool in tools:
        schema = tool.parameters_json_schema
        properties = schema.get("properties", {})
        if "answer_type" in properties and "data_payload" in properties:
            answer_type = {"type": "string", "enum": [ctx.deps.answer_type.value]}
            schema = {**schema, "properties": {**properties, "answer_type": answer_type}}
        narrowed.append(replace(tool, parameters_json_schema=schema))
    return narrowed


OUTPUT_RETRIES = 2

answer_agent: Agent[AnswerDeps, AnswerOutput] = Agent(
    output_type=[FinalAnswer, AnswerRefusal],
    deps_type=AnswerDeps,
    instructions=INSTRUCTIONS,
    name="answer",
    defer_model_check=True,
    retries={"output": OUTPUT_RETRIES},
    capabilities=[PrepareOutputTools(contracted_output_tools)],
)


@answer_agent.output_validator
def _validate(ctx: RunContext[AnswerDeps], output: AnswerOutput) -> AnswerOutput:
    return raise_for_errors(answer_errors(output, ctx.deps), output)


def prompt(deps: AnswerDeps) -> str:
    """The user message of the answer agent: question, contract and accepted evidence."""
    return (f"Question: {deps.question}\n\n"
            f"{contract_text(deps.answer_type, deps.answer_fields)}\n\n"
            f"Payload JSON Schema: {payload_schema_text(deps.answer_type)}\n\n"
            f"Evidence:\n{deps.evidence}")
