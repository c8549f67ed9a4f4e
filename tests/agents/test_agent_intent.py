"""The intent agent: its rule checks (table-driven) and its validator's retry behaviour."""

from __future__ import annotations

import pytest
from agent_builders import make_intent, retry_feedback
from pydantic import ValidationError
from pydantic_ai.exceptions import UnexpectedModelBehavior

from agents import intent as intent_module
from agents.intent import IntentDeps, intent_agent, intent_errors, prompt
from geoask.errors import AgentOutputError
from geoask.models.llm import model_call_error
from geoask.models.scripted import ScriptedModel
from geoask.vocabulary.plan import (
    Distance,
    IntentRejection,
    OperationIntent,
    PlaceResolution,
    RejectionType,
    SpatialPredicate,
    SpatialTopology,
    SpatiotemporalScope,
)

TOPK = OperationIntent.RANK_TOP_K
WITHIN_10_KM = SpatialTopology(predicate=SpatialPredicate.WITHIN_DISTANCE,
                               distance=Distance(value=10, unit="km"), reference="I-40")

# (title, intent changes, expected rule message fragment or None)
CASES = [
    ("plain filter passes", {}, None),
    ("top-k with k passes", {"operation": TOPK, "top_k": 5}, None),
    ("top-k without k", {"operation": TOPK}, "needs top_k"),
    ("k without top-k", {"top_k": 3}, "not rank_top_k"),
    ("distance predicate with distance passes", {"topology": WITHIN_10_KM}, None),
    ("distance predicate without distance",
     {"topology": SpatialTopology(predicate=SpatialPredicate.WITHIN_DISTANCE)}, "needs topology"),
    ("distance on intersects",
     {"topology": SpatialTopology(predicate=SpatialPredicate.INTERSECTS,
                                  distance=Distance(value=1, unit="mi"))}, "a distance is given"),
    ("nearest with distance passes",
     {"topology": SpatialTopology(predicate=SpatialPredicate.NEAREST,
                                  distance=Distance(value=5, unit="km"))}, None),
    ("comparison with two years passes",
     {"operation": OperationIntent.COMPARE_PERIODS,
      "scope": SpatiotemporalScope(years=[2010, 2020])}, None),
    ("comparison with one year",
     {"operation": OperationIntent.COMPARE_PERIODS, "scope": SpatiotemporalScope(years=[2020])},
     "at least two years"),
    ("resolved place passes",
     {"scope": SpatiotemporalScope(places=[PlaceResolution(
         mentioned="Raleigh", level="city", resolved_to="Wake County, NC (county)")])}, None),
    ("blank target", {"target": "  "}, "target is empty"),
]


@pytest.mark.parametrize(("changes", "expected"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_intent_rules(changes, expected):
    errors = intent_errors(make_intent(**changes))
    if expected is None:
        assert errors == []
    else:
        assert len(errors) == 1 and expected in errors[0], errors


@pytest.mark.parametrize(("message", "ok"), [("I answer questions about the map data.", True),
                                              ("   ", False)])
def test_rejection_needs_a_message(message, ok):
    rejection = IntentRejection(rejection_type=RejectionType.CHIT_CHAT, message=message)
    assert (intent_errors(rejection) == []) is ok


DEPS = IntentDeps(question="Which 5 counties of North Carolina have the most people?",
                  catalog_summary="demo.nc_counties: NC counties, population 2020, geometry")


def test_prompt_carries_question_and_catalog():
    text = prompt(DEPS)
    assert DEPS.question in text and "demo.nc_counties" in text


def test_rule_break_is_retried_and_corrected_output_accepted():
    bad = make_intent(operation=TOPK)  # no top_k
    good = make_intent(operation=TOPK, top_k=5)
    scripted = ScriptedModel({"intent": [bad, good]})
    result = intent_agent.run_sync(prompt(DEPS), deps=DEPS, model=scripted.model("intent"))
    assert result.output == good
    assert len(scripted.calls) == 2
    assert any("needs top_k" in text for text in retry_feedback(result.all_messages()))


def test_rejection_passes_through():
    rejection = IntentRejection(rejection_type=RejectionType.CHIT_CHAT,
                                message="I answer questions about the demo map data.")
    scripted = ScriptedModel({"intent": [rejection]})
    result = intent_agent.run_sync("hello, how are you?",
                                   deps=IntentDeps("hello", "demo.t"),
                                   model=scripted.model("intent"))
    assert result.output == rejection


def test_exhausted_budget_is_a_clear_error():
    bad = make_intent(operation=TOPK)
    scripted = ScriptedModel({"intent": [bad] * (intent_module.OUTPUT_RETRIES + 1)})
    with pytest.raises(UnexpectedModelBehavior) as caught:
        intent_agent.run_sync(prompt(DEPS), deps=DEPS, model=scripted.model("intent"))
    assert len(scripted.calls) == intent_module.OUTPUT_RETRIES + 1
    error = model_call_error(caught.value, "intent")
    assert isinstance(error, AgentOutputError) and not error.transient
    assert str(error).startswith("intent agent: the model's output broke the agent's rules")


def test_exhausted_budget_names_the_rule_the_last_attempt_broke():
    """Through call_agent (the tasks' path): the error and the execution log both say why."""
    from geoask.records.execution_log import ExecutionRecorder
    from tasks.agent_calls import call_agent

    bad = make_intent(operation=TOPK)
    scripted = ScriptedModel({"intent": [bad] * (intent_module.OUTPUT_RETRIES + 1)})
    recorder = ExecutionRecorder("run", "q", "FULL")
    with pytest.raises(AgentOutputError) as caught:
        call_agent(intent_agent, DEPS, prompt(DEPS), models=scripted.model, recorder=recorder,
                   stage="intent")
    assert "last rejection: Fix this and answer again:" in str(caught.value)
    assert "needs top_k" in str(caught.value) and "\n" not in str(caught.value)
    (call,) = recorder.log.model_calls
    assert call.status == "error" and "needs top_k" in (call.error or "")


def test_broken_rules_reads_the_last_rejection():
    from pydantic_ai.messages import ModelRequest, RetryPromptPart, ToolReturnPart, UserPromptPart

    from geoask.models.feedback import broken_rules

    messages = [ModelRequest(parts=[UserPromptPart("q")]),
                ModelRequest(parts=[RetryPromptPart("Fix these and answer again:\n1. a\n2. b")]),
                ModelRequest(parts=[ToolReturnPart("final_result", "Fix this and answer again: c",
                                                   outcome="retried"),
                                    ToolReturnPart("run_sql", "3 rows")])]
    assert broken_rules(messages) == "Fix this and answer again: c"
    assert broken_rules(messages[:2]) == "Fix these and answer again: 1. a 2. b"
    assert broken_rules(messages[:1]) is None


@pytest.mark.parametrize("scope", [{"months": [9, 13]}, {"months": list(range(1, 13)) * 2},
                                   {"years": list(range(1900, 1931))}, {"years": [20]},
                                   {"years": [2101]}])
def test_a_scope_past_its_bounds_is_refused(scope):
    # SmolLM2-135M listed months and years on until its token limit: the bounds go with the
    # schema, so a grammar-bound server stops the list and pydantic refuses what ignores them.
    with pytest.raises(ValidationError):
        SpatiotemporalScope.model_validate(scope)
    assert SpatiotemporalScope.model_validate({"months": [9], "years": [1999, 2000]}).years
