"""The reviewer agent: decision rules (table-driven) and its validator's retries."""

from __future__ import annotations

import pytest
from agent_builders import retry_feedback
from pydantic_ai.exceptions import UnexpectedModelBehavior

from agents import reviewer as reviewer_module
from agents.reviewer import ReviewerDeps, prompt, review_errors, reviewer_agent
from geoask.errors import AgentOutputError
from geoask.models.llm import model_call_error
from geoask.models.scripted import ScriptedModel
from geoask.vocabulary.answers import AnswerType
from geoask.vocabulary.plan import Review, ReviewDecision, ReviewRefusal

SUMMARY = "variant FULL; plan 1\nsql-1 done: 100 rows -> parks.geojson\npython-1 done: n=12"
DEPS = ReviewerDeps(question="How many parks lie within 1 km of a school?",
                    answer_type=AnswerType.SCALAR, answer_fields=["n"],
                    evidence='python-1 result: {"n": 12}', state_summary=SUMMARY)

# (title, decision, target, reason, expected fragment or None)
CASES = [
    ("accept", "accept", None, "n=12 answers the count", None),
    ("accept with target", "accept", "sql-1", "ok", "takes no target_step"),
    ("replan", "replan", None, "wrong table", None),
    ("revise last step", "revise", "python-1", "distance in degrees", None),
    ("revise without target", "revise", None, "units", "needs target_step"),
    ("repair upstream", "repair", "sql-1", "school geometry not exported", None),
    ("repair unknown step", "repair", "sql-3", "missing geom", "not a step of this run"),
    ("blank reason", "accept", None, " ", "give the reason"),
]


@pytest.mark.parametrize(("decision", "target", "reason", "expected"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_review_rules(decision, target, reason, expected):
    review = Review(decision=ReviewDecision(decision), reason=reason, target_step=target)
    errors = review_errors(review, DEPS)
    if expected is None:
        assert errors == []
    else:
        assert len(errors) == 1 and expected in errors[0], errors


def test_unknown_steps_cannot_be_checked_without_ids_in_summary():
    d = ReviewerDeps(question="q", answer_type=AnswerType.SCALAR, answer_fields=[],
                     evidence="e", state_summary="no steps listed")
    review = Review(decision=ReviewDecision.REPAIR, reason="r", target_step="sql-9")
    assert review_errors(review, d) == []


def test_refusal_and_prompt():
    assert review_errors(ReviewRefusal(reason="evidence empty"), DEPS) == []
    text = prompt(DEPS)
    assert "answer_type=scalar" in text and SUMMARY in text and '{"n": 12}' in text


def test_missing_target_is_retried_then_accepted():
    bad = Review(decision=ReviewDecision.REPAIR, reason="school geometry missing")
    good = bad.model_copy(update={"target_step": "sql-1"})
    scripted = ScriptedModel({"reviewer": [bad, good]})
    result = reviewer_agent.run_sync(prompt(DEPS), deps=DEPS, model=scripted.model("reviewer"))
    assert result.output == good
    assert any("needs target_step" in t for t in retry_feedback(result.all_messages()))


def test_exhausted_budget_is_a_clear_error():
    bad = Review(decision=ReviewDecision.REVISE, reason="r")
    scripted = ScriptedModel({"reviewer": [bad] * (reviewer_module.OUTPUT_RETRIES + 1)})
    with pytest.raises(UnexpectedModelBehavior) as caught:
        reviewer_agent.run_sync(prompt(DEPS), deps=DEPS, model=scripted.model("reviewer"))
    assert isinstance(model_call_error(caught.value, "reviewer"), AgentOutputError)
