"""benchmark/real_model.py's outcome classes: a typed geoask error is never a crash."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmark"))
from real_model import outcome_class


@pytest.mark.parametrize(("message", "expected"), [
    ("KeyError: 'tables'", "crash"),
    ("AttributeError: 'NoneType' object has no attribute 'rows'", "crash"),
    ("ModelCallError: intent agent: the model endpoint sent a response geoask cannot use",
     "failure: model endpoint"),
    ("AgentOutputError: intent agent: the model's output was cut off at its token limit",
     "failure: output cut at the token limit"),
    ("AgentOutputError: sql agent: the model's output broke the agent's rules on every attempt",
     "failure: output broke the rules"),
    ("geoask could not answer this question: Fix error in output", "failure: the agent gave up"),
    ("geoask could not answer this question: react agent: the model's output was cut off at its "
     "token limit", "failure: output cut at the token limit"),
])
def test_only_an_exception_geoask_does_not_know_is_a_crash(message, expected):
    assert outcome_class({"outcome": "error"}, {"status": "error", "message": message}) == expected


def test_answers_and_infrastructure_come_first():
    run = {"status": "error", "message": "KeyError: x"}
    assert outcome_class({"ssa": True}, run) == "answered right"
    assert outcome_class({"answered": True}, run) == "answered wrong"
    assert outcome_class({}, {**run, "infrastructure": True}) == "failure: infrastructure"
