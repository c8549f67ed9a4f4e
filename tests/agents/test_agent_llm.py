"""geoask.models.llm: model factory from settings, error translation and token accounting."""

from __future__ import annotations

import pytest
from pydantic_ai import Agent
from pydantic_ai.exceptions import (
    ModelHTTPError,
    ModelRequestTimeout,
    UnexpectedModelBehavior,
    UsageLimitExceeded,
    UserError,
)
from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.usage import RequestUsage

from geoask.errors import AgentOutputError, ConfigurationError, ModelCallError
from geoask.models.llm import (
    ROLES,
    is_transient_model_error,
    model_call_error,
    model_for,
    model_name_for,
    token_usage,
)
from geoask.settings import Settings


@pytest.fixture(autouse=True)
def _clean_model_env(monkeypatch):
    for name in ["GEOASK_MODEL", "GEOASK_OPENAI_BASE_URL", "GEOASK_OPENAI_API_KEY",
                 *(f"GEOASK_MODEL_{role.upper()}" for role in ROLES)]:
        monkeypatch.delenv(name, raising=False)


def test_model_settings_are_read_from_environment(monkeypatch):
    monkeypatch.setenv("GEOASK_MODEL", "openai-compatible:qwen-plus")
    monkeypatch.setenv("GEOASK_MODEL_SQL", "openai-compatible:qwen-coder")
    monkeypatch.setenv("GEOASK_OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("GEOASK_MODEL_MAX_RETRIES", "4")
    settings = Settings()
    assert model_name_for("sql", settings) == "openai-compatible:qwen-coder"
    assert model_name_for("intent", settings) == "openai-compatible:qwen-plus"
    assert settings.model_temperature == 0.0 and settings.model_max_retries == 4


@pytest.mark.parametrize("role", ROLES)
def test_no_model_says_how_to_configure(role):
    with pytest.raises(ConfigurationError) as caught:
        model_for(role, Settings())
    message = str(caught.value)
    assert f"{role} agent" in message and "GEOASK_MODEL" in message
    assert "openai-compatible:" in message and "GEOASK_OPENAI_BASE_URL" in message


def test_unknown_role_is_rejected():
    with pytest.raises(ConfigurationError, match="unknown agent role"):
        model_name_for("painter", Settings(model="openai-compatible:x"))


def test_openai_compatible_model_gets_endpoint_and_request_settings():
    settings = Settings(model="openai-compatible:qwen-plus",
                        openai_base_url="http://127.0.0.1:9/v1", openai_api_key="sk-test",
                        model_timeout_s=12.5, model_max_retries=3)
    model = model_for("planner", settings)
    assert isinstance(model, OpenAIChatModel)
    assert model.model_name == "qwen-plus"
    assert model.base_url.rstrip("/") == "http://127.0.0.1:9/v1"
    assert model.settings == {"temperature": 0.0, "timeout": 12.5, "request_timeout": 300.0,
                              "max_retries": 3}


def test_per_role_override_picks_another_model():
    settings = Settings(model="openai-compatible:big", model_compute="openai-compatible:coder",
                        openai_base_url="http://127.0.0.1:9/v1")
    assert model_for("compute", settings).model_name == "coder"
    assert model_for("answer", settings).model_name == "big"


@pytest.mark.parametrize(("settings", "fragment"), [
    ({"model": "openai-compatible:qwen-plus"}, "needs GEOASK_OPENAI_BASE_URL"),
    ({"model": "openai-compatible:", "openai_base_url": "http://x/v1"}, "needs a model name"),
    ({"model": "nosuch:model"}, "Unknown model"),
    ({"model": "anthropic:claude-sonnet-4-5"}, "pydantic-ai-slim[anthropic]"),
    ({"model": "reference"}, "offline replay model"),
], ids=["no base url", "no model name", "unknown provider", "missing package", "no reference"])
def test_unusable_model_is_a_configuration_error(settings, fragment, monkeypatch):
    pytest.importorskip("openai")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ConfigurationError) as caught:
        model_for("intent", Settings(**settings))
    assert fragment in str(caught.value)


def test_openai_without_key_is_a_configuration_error(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        model_for("intent", Settings(model="openai:gpt-4o"))


def test_openai_with_geoask_key_builds_chat_model():
    model = model_for("intent", Settings(model="openai:gpt-4o", openai_api_key="sk-test"))
    assert isinstance(model, OpenAIChatModel) and model.settings["temperature"] == 0.0


def test_inferred_model_gets_request_settings(monkeypatch):
    monkeypatch.setenv("DEEPSEEK_API_KEY", "test-key")
    model = model_for("intent", Settings(model="deepseek:deepseek-chat", model_max_retries=5))
    assert model.settings["max_retries"] == 5 and model.settings["temperature"] == 0.0


def test_reference_model_is_injected():
    injected = TestModel()
    assert model_for("sql", Settings(model="reference"), reference_model=injected) is injected
    with pytest.raises(ConfigurationError, match="GEOASK_MODEL_SQL=reference"):
        model_for("sql", Settings(model="x", model_sql="reference"))


# --- error translation ---------------------------------------------------------------------

# (title, exception, transient, message fragment, error class)
ERROR_CASES = [
    ("429", ModelHTTPError(429, "m", {"error": "slow down"}), True,
     "the model endpoint answered HTTP 429 after retries", ModelCallError),
    ("503", ModelHTTPError(503, "m"), True, "answered HTTP 503 after retries", ModelCallError),
    ("deadline", ModelRequestTimeout(timeout=5.0, model_name="m"), True, "unavailable",
     ModelCallError),
    ("401", ModelHTTPError(401, "m"), False, "refused the API key", ModelCallError),
    ("404", ModelHTTPError(404, "m"), False, "does not know this model", ModelCallError),
    ("400", ModelHTTPError(400, "m", {"message": "Field 'max_completion_tokens': Value must be "
                                      "between -1 <= value <= 2147483647"}), False,
     "refused the request as invalid (status_code: 400", ModelCallError),
    ("budget", UnexpectedModelBehavior("Exceeded maximum output retries (2)"), False,
     "broke the agent's rules", AgentOutputError),
    ("steps", UsageLimitExceeded("The next request would exceed the request_limit of 27"),
     False, "used its whole step budget without a final answer", AgentOutputError),
    ("garbage", UnexpectedModelBehavior("Received empty model response"), False,
     "response geoask cannot use", ModelCallError),
    ("other", UserError("bad call"), False, "UserError: bad call", ModelCallError),
]


@pytest.mark.parametrize(("error", "transient", "fragment", "cls"), [c[1:] for c in ERROR_CASES],
                         ids=[c[0] for c in ERROR_CASES])
def test_model_call_error(error, transient, fragment, cls):
    translated = model_call_error(error, "sql")
    assert type(translated) is cls
    assert translated.transient is transient
    assert is_transient_model_error(error) is transient
    assert str(translated).startswith("sql agent: ") and fragment in str(translated)


CREDENTIALED = "http://alice:pw-s3cret@127.0.0.1:9/v1"


@pytest.mark.parametrize("error", [
    ModelHTTPError(503, "m", {"error": f"upstream {CREDENTIALED} down"}),
    UserError(f"cannot reach {CREDENTIALED}"),
    UnexpectedModelBehavior(f"bad reply from {CREDENTIALED}"),
], ids=["503", "other", "garbage"])
def test_a_model_error_never_shows_the_url_credentials(error):
    text = str(model_call_error(error, "sql", CREDENTIALED))
    assert "pw-s3cret" not in text and "sql agent: " in text


def test_the_execution_log_is_redacted_like_a_transcript():
    from geoask.records.execution_log import ExecutionRecorder, ModelCall

    recorder = ExecutionRecorder("run-1", "q", "FULL", secrets=["kept-s3cret"])
    recorder.model_call(ModelCall(role="sql", stage="sql", duration_ms=1.0, status="error",
                                  error=f"ModelCallError: {CREDENTIALED} said kept-s3cret"))
    data = recorder.log.to_json_dict()
    assert data["model_calls"][0]["error"] == (
        "ModelCallError: http://alice:[redacted]@127.0.0.1:9/v1 said [redacted]")
    assert data["failed_calls"] == 1 and data["question"] == "q"


# --- token accounting ------------------------------------------------------------------------


def words(text: str) -> int:
    return len(text.split())


def test_reported_usage_is_used():
    messages = [ModelRequest(parts=[UserPromptPart("one two three")], instructions="be brief"),
                ModelResponse(parts=[TextPart("four five")],
                              usage=RequestUsage(input_tokens=100, output_tokens=7))]
    usage = token_usage(messages, count_tokens=words)
    assert (usage.prompt_tokens, usage.completion_tokens, usage.requests) == (100, 7, 1)
    assert usage.locally_counted is False


def test_missing_usage_is_counted_locally_over_the_whole_conversation():
    messages = [ModelRequest(parts=[UserPromptPart("one two three")], instructions="be brief"),
                ModelResponse(parts=[ToolCallPart("final_result_X", {"a": 1})]),
                ModelRequest(parts=[UserPromptPart("fix it")], instructions="be brief"),
                ModelResponse(parts=[TextPart("ok done")])]
    usage = token_usage(messages, count_tokens=words)
    # request 1: "be brief" + "one two three" = 5; request 2 adds the reply (3 words), the
    # instructions again (2) and "fix it" (2) = 12
    assert usage.prompt_tokens == 5 + 12
    assert usage.completion_tokens == 3 + 2
    assert usage.requests == 2 and usage.locally_counted


def test_default_counter_is_the_shipped_tokenizer():
    agent = Agent(output_type=str, name="t", defer_model_check=True)
    result = agent.run_sync("How many counties are in North Carolina?",
                            model=TestModel(custom_output_text="one hundred"))
    usage = token_usage(result.all_messages())
    assert usage.requests == 1 and usage.prompt_tokens > 0 and usage.completion_tokens > 0


def test_pydantic_ais_first_run_banner_is_off_for_geoasks_agents():
    """The banner (Logfire advice, to a terminal's stderr) is switched off at pydantic-ai's own
    setting: checked outside pytest, whose PYTEST_VERSION would hide it anyway."""
    import os
    import subprocess
    import sys

    code = ("from pydantic_ai import _display; before = _display._banner_suppressed(); "
            "import geoask.models.llm; print(before, _display._banner_suppressed())")
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTEST_VERSION", "CI", "PYDANTIC_AI_NO_BANNER")}
    ran = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120, check=True)
    assert ran.stdout.split() == ["False", "True"]
