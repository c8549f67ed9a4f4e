"""The question check every entry point runs before any agent call."""

from __future__ import annotations

import pytest

from flows.answer_question import answer_question
from geoask.errors import ConfigurationError
from geoask.vocabulary.questions import check_question


@pytest.mark.parametrize(("question", "message"), [
    ("", "empty"), ("  \n ", "empty"), (None, "empty"), ("a\udcffb", "UTF-8"),
    ("x" * 4097, "4,097 characters; at most 4,096"),
])
def test_bad_questions_are_one_line_errors(question, message):
    with pytest.raises(ConfigurationError, match=message) as caught:
        check_question(question, 4096)
    assert "\n" not in str(caught.value)


def test_a_question_at_the_cap_passes():
    assert check_question("x" * 4096, 4096) == "x" * 4096


class _NoServices:
    """Fails the test if the flow touched any service (agents, database, sandbox)."""

    def __getattr__(self, name):
        raise AssertionError(f"the flow used services.{name} before checking the question")


def test_the_flow_checks_the_question_before_any_agent_call():
    with pytest.raises(ConfigurationError, match="at most"):
        answer_question.fn("Which county? " * 400, services=_NoServices())
