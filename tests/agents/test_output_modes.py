"""Output modes, the context budget and call transcripts over the real OpenAI client.

A local fake chat-completions server (fake_chat_server.py) sees what each mode sends: tools
(``tool``), a JSON-schema ``response_format`` and no tools (``native``), the schema in the
instructions (``prompted``). A prompt over the context window never reaches the server.
"""

from __future__ import annotations

import json

import pytest
from fake_chat_server import FakeChatServer, RawBody, Status, ToolCall
from pydantic_ai import models
from pydantic_ai.exceptions import ModelHTTPError

from agents.intent import IntentDeps, intent_agent, prompt
from geoask.models.context import ContextOverflowError
from geoask.models.llm import model_for
from geoask.models.local_server import _context_in
from geoask.models.output_modes import output_mode_for
from geoask.models.transcripts import TranscribingModel
from geoask.settings import Settings

DEPS = IntentDeps(question="Which 5 NC counties had the most people in 2020?",
                  catalog_summary="demo.county_decadal_stats: county population by census year")
INTENT = {"target": "NC counties, population", "operation": "rank_top_k", "top_k": 5,
          "scope": {"places": [{"mentioned": "NC", "level": "state"}], "years": [2020]},
          "topology": {"predicate": "none"}}
KEY = "sk-local-9d8e7f6a5b"


@pytest.fixture(autouse=True)
def allow_local_requests(monkeypatch):
    # Requests go only to the fake server on 127.0.0.1.
    monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", True)


def _text_reply(content: str) -> RawBody:
    return RawBody(json.dumps({
        "id": "chatcmpl-fake", "object": "chat.completion", "created": 1_700_000_000,
        "model": "fake",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 300, "completion_tokens": 40, "total_tokens": 340}}))


def _model(server: FakeChatServer, **settings: object) -> TranscribingModel:
    config = Settings(model="openai-compatible:fake", openai_base_url=server.base_url,
                      openai_api_key=KEY, model_timeout_s=10.0, model_max_retries=0,
                      **settings)
    return TranscribingModel(model_for("intent", config), "intent")


def _run(model: TranscribingModel):
    return intent_agent.run_sync(prompt(DEPS), deps=DEPS, model=model)


UNION_ANSWER = json.dumps({"result": {"kind": "Intent", "data": INTENT}})


def test_tool_mode_sends_output_tools():
    with FakeChatServer([ToolCall("Intent", INTENT)]) as server:
        model = _model(server)
        assert _run(model).output.top_k == 5
    request = server.requests[0]
    assert {tool["function"]["name"] for tool in request["tools"]} == {
        "final_result_Intent", "final_result_IntentRejection"}
    assert "response_format" not in request
    transcript = model.transcript(n=1, role="intent", stage="intent", messages=[],
                                  duration_ms=1.0)
    assert transcript.output_mode == "tool"
    assert transcript.requests[0].input_tokens == 321


def test_native_mode_sends_a_json_schema_response_format():
    with FakeChatServer([_text_reply(UNION_ANSWER)]) as server:
        model = _model(server, output_mode="native")
        assert _run(model).output.top_k == 5
    request = server.requests[0]
    assert "tools" not in request or not request["tools"]
    schema = request["response_format"]
    assert schema["type"] == "json_schema"
    assert "Intent" in json.dumps(schema["json_schema"]["schema"])
    assert model.transcript(n=1, role="intent", stage="intent", messages=[],
                            duration_ms=1.0).output_mode == "native"


def test_prompted_mode_puts_the_schema_in_the_instructions():
    with FakeChatServer([_text_reply(UNION_ANSWER)]) as server:
        assert _run(_model(server, output_mode="prompted")).output.top_k == 5
    request = server.requests[0]
    # no schema in a response_format (at most "json_object"), no tools: the schema is prompted
    assert request.get("response_format", {}).get("type") in (None, "json_object")
    assert not request.get("tools")
    system = " ".join(str(m["content"]) for m in request["messages"] if m["role"] == "system")
    assert "IntentRejection" in system and '"kind"' in system


def test_the_role_setting_overrides_the_global_one_and_auto_is_the_backends():
    settings = Settings(output_mode="prompted", output_mode_intent="native")
    assert output_mode_for("intent", settings, "openai-compatible:x") == "native"
    assert output_mode_for("sql", settings, "openai-compatible:x") == "prompted"
    assert output_mode_for("sql", Settings(), "anthropic:claude") == "tool"


def test_a_prompt_over_the_context_window_never_reaches_the_server():
    with FakeChatServer([ToolCall("Intent", INTENT)]) as server:
        model = _model(server, model_context_tokens=600)
        with pytest.raises(ContextOverflowError) as caught:
            _run(model)
    assert server.requests == []
    message = str(caught.value)
    assert "does not fit the model's context window of 600 tokens" in message
    assert "\n" not in message
    assert model.records[0].error and "context window" in model.records[0].error


def test_an_http_error_is_recorded_without_the_api_key():
    failed = Status(400, {"error": {"message": f"bad request for key {KEY}"}})
    with FakeChatServer([failed]) as server:
        model = _model(server)
        with pytest.raises(ModelHTTPError):
            _run(model)
    transcript = model.transcript(n=1, role="intent", stage="intent", messages=[],
                                  duration_ms=1.0, error="HTTP 400")
    assert transcript.requests[0].status_code == 400
    text = transcript.to_json([KEY])
    assert KEY not in text and "[redacted]" in text
    sent = {name.lower(): value for name, value in server.headers[0].items()}
    assert KEY in sent["authorization"]  # it was really sent


@pytest.mark.parametrize(("payload", "tokens"), [
    ({"default_generation_settings": {"n_ctx": 8192}}, 8192),
    ({"data": [{"id": "m", "max_model_len": 32768}]}, 32768),
    ({"data": [{"id": "m", "meta": {"n_ctx_train": 2048}}]}, 2048),
    ({"data": [{"id": "m"}]}, None),
])
def test_the_context_window_is_read_from_what_a_server_reports(payload, tokens):
    assert _context_in(payload) == tokens


def test_free_text_is_bounded_in_the_schema_and_a_run_on_string_is_sent_back():
    # SmolLM2-135M ran one `target` string on until its token limit: the bound goes with the
    # schema (llama.cpp's grammar closes the string there) and a model ignoring it is told.
    run_on = json.dumps({"result": {"kind": "Intent", "data": {
        **INTENT, "target": "US_STATES_2020_" * 40}}})
    with FakeChatServer([_text_reply(run_on), _text_reply(UNION_ANSWER)]) as server:
        assert _run(_model(server, output_mode="native")).output.top_k == 5
    sent = server.requests[0]["response_format"]["json_schema"]["schema"]
    assert [field["maxLength"] for field in _properties(sent, "target")] == [200]
    retry = json.dumps(server.requests[1]["messages"][-1])
    assert "at most 200 characters" in retry


def _properties(schema, name):
    """Every property called ``name`` anywhere in a JSON schema."""
    if isinstance(schema, list):
        return [found for item in schema for found in _properties(item, name)]
    if not isinstance(schema, dict):
        return []
    own = [schema["properties"][name]] if name in schema.get("properties", {}) else []
    return own + [found for value in schema.values() for found in _properties(value, name)]
