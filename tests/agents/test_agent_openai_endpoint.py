"""End to end through the real OpenAI-compatible client against a local fake server.

The server (fake_chat_server.py) speaks the chat-completions protocol on 127.0.0.1 with tool
calls as structured output. It injects a 429 (retried by the client, then the call succeeds),
malformed tool-call arguments (sent back to the model as a retry) and a malformed response
(a clear ModelCallError, no traceback), and shows a validator retry over HTTP.
"""

from __future__ import annotations

import json
import socket

import pytest
from fake_chat_server import FakeChatServer, RawBody, RawToolCall, Slow, Status, ToolCall
from pydantic_ai import models
from pydantic_ai.exceptions import AgentRunError

from agents.intent import IntentDeps, intent_agent, prompt
from geoask.errors import AgentOutputError, ModelCallError
from geoask.models.llm import model_call_error, model_for, token_usage
from geoask.settings import Settings

DEPS = IntentDeps(question="Which 5 NC counties had the most people in 2020?",
                  catalog_summary="demo.county_decadal_stats: county population by census year")
INTENT = {"target": "NC counties, population", "operation": "rank_top_k", "top_k": 5,
          "scope": {"places": [{"mentioned": "NC", "level": "state"}], "years": [2020]},
          "topology": {"predicate": "none"}}
RATE_LIMITED = Status(429, {"error": {"message": "rate limit", "type": "rate_limit"}},
                      {"retry-after-ms": "20"})


@pytest.fixture
def allow_local_requests(monkeypatch):
    # Requests go only to the fake server on 127.0.0.1.
    monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", True)


def run(server: FakeChatServer, role: str = "intent", **settings):
    defaults = {"model_timeout_s": 10.0, "model_request_timeout_s": 30.0}
    config = Settings(model="openai-compatible:fake-qwen", openai_base_url=server.base_url,
                      openai_api_key="sk-local", **{**defaults, **settings})
    return intent_agent.run_sync(prompt(DEPS), deps=DEPS, model=model_for(role, config))


@pytest.mark.usefixtures("allow_local_requests")
def test_429_is_retried_then_the_tool_call_is_the_output():
    with FakeChatServer([RATE_LIMITED, ToolCall("Intent", INTENT)]) as server:
        result = run(server)
    assert result.output.top_k == 5 and result.output.scope.years == [2020]
    assert len(server.requests) == 2 and server.paths == ["/v1/chat/completions"] * 2
    request = server.requests[-1]
    assert request["model"] == "fake-qwen" and request["temperature"] == 0.0
    tools = {tool["function"]["name"] for tool in request["tools"]}
    assert tools == {"final_result_Intent", "final_result_IntentRejection"}
    system = " ".join(m["content"] for m in request["messages"] if m["role"] == "system")
    assert "intent tuple" in system
    usage = token_usage(result.all_messages())
    assert (usage.prompt_tokens, usage.completion_tokens, usage.locally_counted) == (321, 45,
                                                                                      False)


@pytest.mark.usefixtures("allow_local_requests")
@pytest.mark.parametrize("limit", [None, 256])
def test_the_response_token_limit_is_sent_only_when_set(limit):
    with FakeChatServer([ToolCall("Intent", INTENT)]) as server:
        run(server, model_max_output_tokens=limit)
    assert server.requests[0].get("max_completion_tokens") == limit  # OpenAI's name for it


@pytest.mark.usefixtures("allow_local_requests")
def test_persistent_429_ends_as_a_transient_model_call_error():
    with FakeChatServer([RATE_LIMITED] * 5) as server, pytest.raises(AgentRunError) as caught:
        run(server, model_max_retries=1)
    assert len(server.requests) == 2  # one attempt + one retry, then give up
    error = model_call_error(caught.value, "intent")
    assert type(error) is ModelCallError and error.transient
    assert "answered HTTP 429 after retries" in str(error)


@pytest.mark.usefixtures("allow_local_requests")
def test_server_error_is_not_retried_when_retries_are_off():
    overloaded = Status(503, {"error": {"message": "overloaded"}})
    with FakeChatServer([overloaded]) as server, pytest.raises(AgentRunError) as caught:
        run(server, model_max_retries=0)
    assert len(server.requests) == 1
    assert model_call_error(caught.value, "intent").transient


@pytest.mark.usefixtures("allow_local_requests")
def test_malformed_tool_arguments_are_sent_back_and_corrected():
    with FakeChatServer([RawToolCall("Intent", '{"target": "NC counties", "operation": '),
                         ToolCall("Intent", INTENT)]) as server:
        result = run(server)
    assert result.output.operation == "rank_top_k"
    retry_messages = [m for m in server.requests[1]["messages"] if m["role"] == "tool"]
    assert len(retry_messages) == 1 and "json_invalid" in retry_messages[0]["content"]


@pytest.mark.usefixtures("allow_local_requests")
@pytest.mark.parametrize("body", ["this is not json", json.dumps({"id": "x", "object": "oops"})],
                         ids=["not json", "no choices"])
def test_malformed_response_is_a_clear_error(body):
    with FakeChatServer([RawBody(body)] * 3) as server, pytest.raises(AgentRunError) as caught:
        run(server, model_max_retries=0)
    assert len(server.requests) == 1
    error = model_call_error(caught.value, "intent")
    assert type(error) is ModelCallError and not error.transient
    assert str(error).startswith("intent agent: the model endpoint sent a response geoask "
                                 "cannot use")
    assert "Traceback" not in str(error)


@pytest.mark.usefixtures("allow_local_requests")
def test_output_cut_at_the_token_limit_is_broken_output_naming_the_limit():
    cut = {"id": "x", "object": "chat.completion", "created": 1, "model": "fake-qwen",
           "choices": [{"index": 0, "finish_reason": "length", "message": {
               "role": "assistant", "content": None, "tool_calls": [{
                   "id": "c1", "type": "function", "function": {
                       "name": "final_result_Intent", "arguments": '{"target": "NC coun'}}]}}]}
    with FakeChatServer([RawBody(json.dumps(cut))] * 3) as server, \
            pytest.raises(AgentRunError) as caught:
        run(server, model_max_output_tokens=64)
    assert server.requests[0]["max_completion_tokens"] == 64
    error = model_call_error(caught.value, "intent")
    assert isinstance(error, AgentOutputError)
    assert "cut off at its token limit" in str(error)
    assert "GEOASK_MODEL_MAX_OUTPUT_TOKENS" in str(error)


@pytest.mark.usefixtures("allow_local_requests")
def test_rule_break_over_http_is_retried_and_then_accepted():
    no_k = {**INTENT, "top_k": None}
    with FakeChatServer([ToolCall("Intent", no_k), ToolCall("Intent", INTENT)]) as server:
        result = run(server)
    assert result.output.top_k == 5
    feedback = json.dumps(server.requests[1]["messages"])
    assert "needs top_k" in feedback


@pytest.mark.usefixtures("allow_local_requests")
def test_rule_break_every_time_exhausts_the_budget():
    no_k = {**INTENT, "top_k": None}
    replies = [ToolCall("Intent", no_k)] * 3
    with FakeChatServer(replies) as server, pytest.raises(AgentRunError) as caught:
        run(server)
    assert len(server.requests) == 3
    assert isinstance(model_call_error(caught.value, "intent"), AgentOutputError)


@pytest.mark.usefixtures("allow_local_requests")
def test_missing_usage_is_counted_with_the_local_tokenizer():
    with FakeChatServer([ToolCall("Intent", INTENT, usage=None)]) as server:
        result = run(server)
    usage = token_usage(result.all_messages())
    assert usage.locally_counted and usage.prompt_tokens > 100 and usage.completion_tokens > 10


@pytest.mark.usefixtures("allow_local_requests")
def test_slow_attempt_times_out_and_the_retry_succeeds():
    replies = [Slow(2.0, ToolCall("Intent", INTENT)), ToolCall("Intent", INTENT)]
    with FakeChatServer(replies) as server:
        result = run(server, model_timeout_s=0.3, model_max_retries=1)
    assert result.output.top_k == 5 and len(server.requests) == 2


@pytest.mark.usefixtures("allow_local_requests")
def test_request_deadline_is_a_transient_error():
    replies = [Slow(2.0, ToolCall("Intent", INTENT))] * 3
    with FakeChatServer(replies) as server, pytest.raises(AgentRunError) as caught:
        run(server, model_timeout_s=5.0, model_request_timeout_s=0.3)
    error = model_call_error(caught.value, "intent")
    assert error.transient and "unavailable after retries" in str(error)


def closed_port_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}/v1"


@pytest.mark.usefixtures("allow_local_requests")
@pytest.mark.parametrize(("url", "cause"), [
    (closed_port_url(), "refused the connection"),
    ("http://geoask-no-such-host.invalid/v1", "host name could not be resolved (DNS: "),
])
def test_an_unreachable_endpoint_is_named_with_its_cause(url, cause):
    config = Settings(model="openai-compatible:x", openai_base_url=url)
    model = model_for("intent", config)
    with pytest.raises(AgentRunError) as caught:
        intent_agent.run_sync(prompt(DEPS), deps=DEPS, model=model)
    error = model_call_error(caught.value, "intent", model.base_url)
    assert str(error).startswith(f"intent agent: model endpoint {url} {cause}")
    assert error.transient
