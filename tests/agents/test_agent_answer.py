"""The answer agent: contract, payload schema and evidence-grounding checks; retries."""

from __future__ import annotations

import pytest
from agent_builders import retry_feedback
from pydantic_ai.exceptions import UnexpectedModelBehavior

from agents import answer as answer_module
from agents.answer import (
    AnswerDeps,
    answer_agent,
    answer_errors,
    numbers_from_evidence,
    payload_valid,
    prompt,
    summary_readable,
    type_matches_contract,
)
from geoask.errors import AgentOutputError
from geoask.models.llm import model_call_error
from geoask.models.scripted import ScriptedModel
from geoask.vocabulary.answers import AnswerRefusal, AnswerType, FinalAnswer

EVIDENCE = ('artifact top_counties: 3 rows\nrecords (JSON): [{"county_fips": "37183", '
            '"county_name": "Wake", "population": 1129410}, {"county_fips": "37119", '
            '"county_name": "Mecklenburg", "population": 1115482}, {"county_fips": "37081", '
            '"county_name": "Guilford", "population": 541299}]\nmean density 512.3456 per km2')
TOP3 = {"items": [{"rank": 1, "id": "37183", "name": "Wake", "value": 1129410},
                  {"rank": 2, "id": "37119", "name": "Mecklenburg", "value": 1115482},
                  {"rank": 3, "id": "37081", "name": "Guilford", "value": 541299}],
        "unit": "count", "order": "descending"}


def answer(answer_type=AnswerType.RANKED_LIST, payload=None, summary="Wake leads.") -> FinalAnswer:
    return FinalAnswer(answer_type=answer_type, data_payload=payload or TOP3, summary=summary)


DEPS = AnswerDeps(question="Top 3 NC counties by population?",
                  answer_type=AnswerType.RANKED_LIST, answer_fields=["county_fips", "population"],
                  evidence=EVIDENCE)

# (title, rule, answer, expected fragment or None)
CASES = [
    ("contract type ok", lambda a: type_matches_contract(a, AnswerType.RANKED_LIST), answer(),
     None),
    ("contract type wrong", lambda a: type_matches_contract(a, AnswerType.RANKED_LIST),
     answer(AnswerType.SCALAR, {"value": 1129410}), "must be ranked_list"),
    ("payload ok", lambda a: "; ".join(payload_valid(a)) or None, answer(), None),
    ("payload missing value", lambda a: "; ".join(payload_valid(a)) or None,
     answer(payload={"items": [{"rank": 1, "id": "37183"}]}), "'value' is a required property"),
    ("ranks out of order", lambda a: "; ".join(payload_valid(a)) or None,
     answer(payload={"items": [{"rank": 2, "id": "a", "value": 1}]}), "ranks must start at 1"),
    ("bbox min > max", lambda a: "; ".join(payload_valid(a)) or None,
     answer(AnswerType.BBOX, {"bbox": [10, 0, 0, 5]}), "min <= max"),
    ("summary ok", summary_readable, answer(), None),
    ("summary blank", summary_readable, answer(summary=" "), "summary is empty"),
    ("summary too long", summary_readable, answer(summary="x" * 700), "700 characters"),
    ("numbers from evidence", lambda a: numbers_from_evidence(a, EVIDENCE), answer(), None),
    ("rounded number from evidence", lambda a: numbers_from_evidence(a, EVIDENCE),
     answer(AnswerType.SCALAR, {"value": 512.35, "unit": "per km2"}), None),
    ("invented number", lambda a: numbers_from_evidence(a, EVIDENCE),
     answer(AnswerType.SCALAR, {"value": 1200000}), "not in the evidence: 1.2e+06"),
    ("rounded the wrong way", lambda a: numbers_from_evidence(a, EVIDENCE),
     answer(AnswerType.SCALAR, {"value": 512.4}), "not in the evidence: 512.4"),
    ("ranks are not values", lambda a: numbers_from_evidence(a, "37183 | 5"),
     answer(payload={"items": [{"rank": 1, "id": "37183", "value": 5}]}), None),
]


@pytest.mark.parametrize(("rule", "final", "expected"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_answer_rules(rule, final, expected):
    error = rule(final)
    if expected is None:
        assert error is None
    else:
        assert error is not None and expected in error, error


def test_refusal_type_mismatch_short_circuits_and_prompt():
    assert answer_errors(AnswerRefusal(reason="no evidence"), DEPS) == []
    assert answer_errors(answer(AnswerType.SCALAR, {"value": 9}), DEPS) == [
        "answer_type must be ranked_list (the answer contract), not scalar"]
    text = prompt(DEPS)
    assert "answer_type=ranked_list" in text and "Mecklenburg" in text


def test_invented_number_is_retried_then_grounded_answer_accepted():
    invented = answer(payload={**TOP3, "items": [{**TOP3["items"][0], "value": 1130000},
                                                 *TOP3["items"][1:]]})
    scripted = ScriptedModel({"answer": [invented, answer()]})
    result = answer_agent.run_sync(prompt(DEPS), deps=DEPS, model=scripted.model("answer"))
    assert result.output == answer()
    assert any("not in the evidence" in t for t in retry_feedback(result.all_messages()))


def test_exhausted_budget_is_a_clear_error():
    bad = answer(payload={"items": []}, summary="")
    scripted = ScriptedModel({"answer": [bad] * (answer_module.OUTPUT_RETRIES + 1)})
    with pytest.raises(UnexpectedModelBehavior) as caught:
        answer_agent.run_sync(prompt(DEPS), deps=DEPS, model=scripted.model("answer"))
    assert isinstance(model_call_error(caught.value, "answer"), AgentOutputError)


@pytest.mark.parametrize("answer_type", [AnswerType.RANKED_LIST, AnswerType.BBOX])
def test_output_tool_offers_only_the_contracted_answer_type(answer_type):
    from dataclasses import replace

    from pydantic_ai.models.function import AgentInfo, FunctionModel

    seen: list[AgentInfo] = []

    def capture(messages, info):
        seen.append(info)
        raise RuntimeError("captured")

    deps = replace(DEPS, answer_type=answer_type)
    with pytest.raises(RuntimeError, match="captured"):
        answer_agent.run_sync(prompt(deps), deps=deps, model=FunctionModel(capture))
    tools = {tool.name: tool.parameters_json_schema for tool in seen[0].output_tools}
    final = next(schema for name, schema in tools.items() if name.endswith("FinalAnswer"))
    assert final["properties"]["answer_type"] == {"type": "string", "enum": [answer_type.value]}
    refusal = next(schema for name, schema in tools.items() if name.endswith("AnswerRefusal"))
    assert "answer_type" not in refusal["properties"]
