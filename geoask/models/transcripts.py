"""Per-call transcripts: what each agent call sent to its model and what came back.

:class:`TranscribingModel` wraps the model of one agent call and records every model request
of it: latency, the tokens the backend reported, the response as sent (raw tool-call argument
text included) or the failure (HTTP status and first line). With the call's whole message
history (instructions, prompts, the output validator's retry messages) it makes a
:class:`CallTranscript`, which the run folder keeps as ``calls/<n>-<role>.json``.

Secrets never reach a transcript: :func:`redact` replaces the values of the process's secret
variables (``*_API_KEY``, ``*_TOKEN``, ``*_SECRET``, ``*_PASSWORD``), any further secret given
to it, bearer tokens and the password of a URL's credentials (or its user name when that is all
it has: a token) before anything is written.

>>> redact("Authorization: Bearer sk-abc123 at postgresql://u:pw@h/db", ["zz"])
'Authorization: [redacted] at postgresql://u:[redacted]@h/db'
>>> redact("http://alice:pw@127.0.0.1:9/v1 and https://sk-abc@h/v1")
'http://alice:[redacted]@127.0.0.1:9/v1 and https://[redacted]@h/v1'
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterable, Sequence
from typing import Any, Final

from pydantic import BaseModel, Field
from pydantic_ai import exceptions as ai_errors
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ModelResponse
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings

from geoask.models.context import check_context, served_context_tokens
from geoask.models.recordings import CALLS_FOLDER

REDACTED: Final = "[redacted]"
OPENAI_COMPATIBLE_PROVIDER_NAME: Final = "geoask-openai-compatible"
"""The provider name of ``openai-compatible:`` models (whose server is asked its window)."""
_SECRET_NAME = re.compile(r"(API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$", re.I)
# (words that must occur for the pattern to match - a cheap test first -, the pattern)
_PATTERNS: Final = (
    (("authorization",),
     re.compile(r"(?i)(authorization\"?\s*[:=]\s*\"?)(?:[a-z]+\s+)?[^\s\"',}]+")),
    (("bearer", "basic"), re.compile(r"(?i)((?:bearer|basic)\s+)[A-Za-z0-9._~+/=-]+")),
    (("key", "password", "secret"),
     re.compile(r"(?i)(\"?(?:api[_-]?key|password|secret)\"?\s*[:=]\s*\"?)[^\s\"',}]+")),
    (("://",), re.compile(r"([a-z][a-z0-9+.-]*://[^:/@\s\"]+:)[^@\s\"/]+(?=@)")),
    (("://",), re.compile(r"([a-z][a-z0-9+.-]*://)[^:/@\s\"\[]+(?=@)")),  # a token as the user
)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every known secret and credential-looking value replaced by ``[redacted]``.

    Args:
        text: what is about to be written.
        secrets: further secret values (e.g. ``GEOASK_OPENAI_API_KEY`` from a settings file);
            the process's secret environment variables are always included.

    """
    values = {value for value in (*secrets, *_environment_secrets()) if len(value) >= 4}
    for value in sorted(values, key=len, reverse=True):
        text = text.replace(value, REDACTED)
    lowered = text.lower()
    for words, pattern in _PATTERNS:
        if any(word in lowered for word in words):
            text = pattern.sub(lambda match: match.group(1) + REDACTED, text)
    return text


def _environment_secrets() -> list[str]:
    return [value for name, value in os.environ.items() if _SECRET_NAME.search(name) and value]


class RequestRecord(BaseModel):
    """One model request of an agent call (a call makes several when its output is retried).

    Attributes:
        latency_ms: wall time of the request, the provider SDK's HTTP retries included.
        input_tokens: prompt tokens the backend reported (0: none reported).
        output_tokens: completion tokens the backend reported.
        response: the response as pydantic-ai read it (JSON of a ``ModelResponse``), None
            when the request failed.
        error: the failure's type and first line, None on success.
        status_code: the HTTP status of a failed request, when there was one.

    """

    latency_ms: float
    input_tokens: int = 0
    output_tokens: int = 0
    response: dict[str, Any] | None = None
    error: str | None = None
    status_code: int | None = None


class CallTranscript(BaseModel):
    """One agent call as its model saw it: ``calls/<n>-<role>.json`` in the run folder.

    Attributes:
        n: the call's number in the run (1, 2, ...).
        role: the agent role.
        stage: the run stage that made the call (``intent``, ``sql-1`` ...).
        model: the model's name as the backend knows it.
        system: the provider (``openai``, ``function`` for replays ...).
        output_mode: how the structured output was asked for: ``tool``, ``native`` or
            ``prompted`` (:data:`geoask.models.llm.OUTPUT_MODES`).
        status: ``ok`` or ``error``.
        error: the call's error as the user saw it, None on success.
        duration_ms: wall time of the whole call.
        requests: every model request, in order.
        messages: the whole conversation (``ModelMessagesTypeAdapter`` JSON): instructions,
            the prompt, each response, the validator's retry messages.

    """

    n: int
    role: str
    stage: str
    model: str
    system: str
    output_mode: str
    status: str
    error: str | None = None
    duration_ms: float
    requests: list[RequestRecord] = Field(default_factory=list)
    messages: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def file_name(self) -> str:
        """``<n>-<role>.json``."""
        return f"{self.n}-{self.role}.json"

    def to_json(self, secrets: Iterable[str] = ()) -> str:
        """The transcript as indented JSON, secrets redacted (:func:`redact`)."""
        return redact(self.model_dump_json(indent=2), secrets)


def dump_messages(messages: Sequence[ModelMessage]) -> list[dict[str, Any]]:
    """Messages as JSON-ready data (``ModelMessagesTypeAdapter``)."""
    return list(ModelMessagesTypeAdapter.dump_python(list(messages), mode="json"))


def load_response(data: dict[str, Any]) -> ModelResponse:
    """A recorded response back as a ``ModelResponse``.

    Raises:
        ValueError: ``data`` is not a recorded model response.

    """
    message = ModelMessagesTypeAdapter.validate_python([data])[0]
    if not isinstance(message, ModelResponse):
        raise ValueError("a recorded request's response is not a model response")
    return message


class TranscribingModel(WrapperModel):
    """Wraps one agent call's model and records each of its requests (:class:`RequestRecord`).

    Attributes:
        records: the requests made so far, in order.

    """

    def __init__(self, wrapped: Model, role: str) -> None:
        """Wrap ``wrapped``, the model of agent ``role``; nothing recorded yet."""
        super().__init__(wrapped)
        self.role = role
        self.records: list[RequestRecord] = []

    def window(self) -> int | None:
        """The model's context window: its profile's, else what its local server reports."""
        known = self.wrapped.context_window
        if known or self.wrapped.system != OPENAI_COMPATIBLE_PROVIDER_NAME:
            return known
        return served_context_tokens(str(getattr(self.wrapped, "base_url", "")))

    async def request(self, messages: list[ModelMessage], model_settings: ModelSettings | None,
                      model_request_parameters: ModelRequestParameters) -> ModelResponse:
        """Forward the request, timing it and recording its response or failure.

        Raises:
            ContextOverflowError: the prompt would not fit the model's context window.

        """
        begin = time.perf_counter()
        try:
            check_context(self.role, self.window(), messages, model_request_parameters)
            response = await self.wrapped.request(messages, model_settings,
                                                  model_request_parameters)
        except Exception as error:
            self.records.append(RequestRecord(
                latency_ms=_ms_since(begin), error=_error_line(error),
                status_code=getattr(error, "status_code", None)))
            raise
        self.records.append(RequestRecord(
            latency_ms=_ms_since(begin), input_tokens=response.usage.input_tokens,
            output_tokens=response.usage.output_tokens,
            response=dump_messages([response])[0]))
        return response

    def transcript(self, *, n: int, role: str, stage: str, messages: Sequence[ModelMessage],
                   duration_ms: float, error: str | None = None) -> CallTranscript:
        """The call's transcript from the recorded requests and ``messages``."""
        return CallTranscript(
            n=n, role=role, stage=stage, model=self.wrapped.model_name,
            system=self.wrapped.system, output_mode=output_mode_of(self.wrapped),
            status="error" if error else "ok", error=error, duration_ms=duration_ms,
            requests=list(self.records), messages=dump_messages(messages))


def output_mode_of(model: Model) -> str:
    """The structured-output mode ``model`` answers in (its profile's default: ``tool``)."""
    return str(model.profile.get("default_structured_output_mode", "tool"))


def _ms_since(begin: float) -> float:
    return round((time.perf_counter() - begin) * 1000, 1)


def _error_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    detail = text[0][:300] if text else ""
    if isinstance(error, ai_errors.ModelHTTPError):
        body = json.dumps(error.body, default=str)[:300] if error.body is not None else ""
        detail = f"HTTP {error.status_code}: {body or detail}"
    return f"{type(error).__name__}: {detail}"


__all__ = [
    "CALLS_FOLDER",
    "REDACTED",
    "CallTranscript",
    "RequestRecord",
    "TranscribingModel",
    "dump_messages",
    "load_response",
    "output_mode_of",
    "redact",
]
