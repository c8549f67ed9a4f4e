"""The question check every entry point runs before any agent call."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from flows.answer_question import answer_question
from geoask.app.cli import app
from geoask.errors import ConfigurationError
from geoask.run.request import RequestError, check_request
from geoask.run.variants import Variant
from geoask.settings import Settings
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


@pytest.mark.parametrize(("options", "parameter"), [
    ({"question": "  "}, "question"),
    ({"variant": "FASTEST"}, "variant"),
    ({"variant": 3}, "variant"),
    ({"model": ["openai:gpt-4o"]}, "model"),
    ({"conversation": "../etc"}, "conversation"),
])
def test_a_bad_request_names_its_parameter(options, parameter):
    request = {"question": "How many airports are in Texas?", **options}
    with pytest.raises(RequestError) as caught:
        check_request(request.pop("question"), Settings(), **request)
    assert caught.value.parameter == parameter
    assert "\n" not in str(caught.value)


def test_a_good_request_is_parsed_once():
    request = check_request("Which county?", Settings(), variant="no-planner", conversation="c1")
    assert (request.variant, request.conversation) == (Variant.NO_PLANNER, "c1")
    assert check_request("Which county?", Settings(variant="BASE")).variant is Variant.BASE


@pytest.mark.parametrize(("args", "hint", "message"), [
    (["ask", "  "], "QUESTION", "empty"),
    (["ask", "Which county?", "--variant", "FASTEST"], "--variant", "FASTEST"),
    (["ask", "Which county?", "--conversation", "../x"], "--conversation", "not usable"),
])
def test_the_ask_command_reports_a_bad_request_as_a_usage_error(args, hint, message):
    result = CliRunner().invoke(app, args, terminal_width=200)
    assert result.exit_code == 2
    assert f"Invalid value for {hint}" in result.output and message in result.output


def recorded_run(folder, question: str | None):
    (folder / "calls").mkdir(parents=True)
    if question is not None:
        (folder / "execution_log.json").write_text(f'{{"question": "{question}"}}')
    return f"recorded:{folder}"


def test_a_recorded_model_refuses_another_question_as_a_usage_error(tmp_path):
    model = recorded_run(tmp_path / "texas", "How many airports are in Texas?")
    result = CliRunner().invoke(app, ["ask", "--model", model,
                                      "How many airports are in Florida?"], terminal_width=200)
    assert result.exit_code == 2
    assert "Invalid value for --model" in result.output
    assert "'How many airports are in Texas?', not 'How many airports are in Florida?'" in (
        " ".join(result.output.replace("│", " ").split()))


def test_a_recorded_model_takes_its_own_question_only(tmp_path):
    model = recorded_run(tmp_path / "texas", "How many airports are in Texas?")
    assert check_request("How many  airports are\nin Texas?", Settings(), model=model).model
    for settings, options in ((Settings(model=model), {}), (Settings(model_sql=model), {}),
                              (Settings(), {"model": model})):
        with pytest.raises(RequestError, match="replays the question") as caught:
            check_request("How many airports are in Utah?", settings, **options)
        assert caught.value.parameter == "model"
    unlogged = recorded_run(tmp_path / "unlogged", None)
    with pytest.raises(RequestError, match=r"no execution_log\.json naming its question"):
        check_request("How many airports are in Texas?", Settings(), model=unlogged)
