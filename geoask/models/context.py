"""The context budget: a request that would not fit the model's context window never goes out.

The window comes from ``GEOASK_MODEL_CONTEXT_TOKENS``, else the server
(:func:`geoask.models.local_server.server_context_tokens`: llama.cpp's ``/props``, vLLM's
``max_model_len``), else pydantic-ai's knowledge of the model's name (its profile's
``context_window``). :func:`check_context` estimates a request's prompt - instructions, every
message part, the tool and output schemas - with the shipped local tokenizer, with a margin
for the difference between tokenizers and room for the answer, and refuses one that would not
fit with one line, instead of the server's HTTP 400.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Final

from pydantic_ai.messages import ModelMessage, ModelRequest
from pydantic_ai.models import ModelRequestParameters

from geoask.errors import ModelCallError
from geoask.models.local_server import server_context_tokens
from geoask.models.tokens import count_text, part_text

TOKENIZER_MARGIN: Final = 1.15
"""Local WordPiece counts times this: other tokenizers split code and JSON finer."""
ANSWER_ROOM: Final = 0.15
"""Share of the window kept free for the model's answer."""


class ContextOverflowError(ModelCallError):
    """A request's prompt does not fit the model's context window."""


_SERVED: dict[str, int] = {}


def served_context_tokens(base_url: str) -> int | None:
    """The window a server reports (kept per base URL once known; asked again while unknown)."""
    if base_url not in _SERVED and (found := server_context_tokens(base_url)):
        _SERVED[base_url] = found
    return _SERVED.get(base_url)


def prompt_tokens(messages: Sequence[ModelMessage], params: ModelRequestParameters) -> int:
    """Estimated prompt tokens of a request (local tokenizer, before the margin)."""
    texts: list[str] = []
    for message in messages:
        if isinstance(message, ModelRequest) and message.instructions:
            texts.append(message.instructions)
        texts.extend(part_text(part) for part in message.parts)
    for tool in (*params.function_tools, *params.output_tools):
        texts.append(f"{tool.name} {tool.description or ''} "
                     f"{json.dumps(tool.parameters_json_schema)}")
    if params.output_object is not None:
        texts.append(json.dumps(params.output_object.json_schema))
    return count_text("\n".join(texts))


def check_context(role: str, window: int | None, messages: Sequence[ModelMessage],
                  params: ModelRequestParameters) -> None:
    """Refuse a request whose prompt would not fit ``window`` (None: no window known).

    Raises:
        ContextOverflowError: the estimated prompt and the answer's room exceed the window.

    """
    if not window:
        return
    estimate = round(prompt_tokens(messages, params) * TOKENIZER_MARGIN)
    limit = round(window * (1 - ANSWER_ROOM))
    if estimate > limit:
        raise ContextOverflowError(
            role, f"the prompt (~{estimate} tokens) does not fit the model's context window "
            f"of {window} tokens ({limit} for the prompt); use a model with a larger window "
            "(GEOASK_MODEL_CONTEXT_TOKENS says what the server has) or ask a narrower question")


__all__ = ["ContextOverflowError", "check_context", "prompt_tokens", "served_context_tokens"]
