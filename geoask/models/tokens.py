"""Token accounting of agent runs: the backend's usage, or the shipped local tokenizer.

:func:`token_usage` gives prompt/completion tokens of a run from its messages; where a backend
reports no usage they are counted with the shipped WordPiece tokenizer (an approximation:
nothing is downloaded).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelRequest


@dataclass(frozen=True)
class TokenUsage:
    """Tokens of one agent run.

    Attributes:
        prompt_tokens: input tokens over all model requests of the run (each request re-sends
            the conversation so far).
        completion_tokens: output tokens over all responses.
        requests: model requests made (output retries included).
        locally_counted: True if some figure was counted with the local tokenizer because the
            backend reported no usage for that request.

    """

    prompt_tokens: int
    completion_tokens: int
    requests: int
    locally_counted: bool


def token_usage(
    messages: Sequence[ModelMessage], count_tokens: Callable[[str], int] | None = None
) -> TokenUsage:
    """Prompt and completion tokens of a run from its messages (``result.all_messages()``).

    A response's reported usage is used when it has any; otherwise the prompt (instructions and
    every message before the response) and the completion (text, tool-call arguments) are
    counted with ``count_tokens`` - by default the shipped WordPiece tokenizer of
    ``geoask.embeddings``, a local approximation (no tiktoken, nothing downloaded).
    """
    counter = count_tokens or count_text
    prompt_total = completion_total = requests = 0
    locally = False
    conversation: list[str] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            if message.instructions:
                conversation.append(message.instructions)
            conversation.extend(part_text(part) for part in message.parts)
            continue
        requests += 1
        usage = message.usage
        response_text = "\n".join(part_text(part) for part in message.parts)
        if usage.input_tokens or usage.output_tokens:
            prompt_total += usage.input_tokens
            completion_total += usage.output_tokens
        else:
            locally = True
            prompt_total += counter("\n".join(conversation))
            completion_total += counter(response_text)
        conversation.append(response_text)
    return TokenUsage(prompt_total, completion_total, requests, locally)


def part_text(part: Any) -> str:
    """The text a message part contributes to a prompt (content or tool-call arguments)."""
    if hasattr(part, "args"):
        args = part.args
        return f"{part.tool_name} {args if isinstance(args, str) else json.dumps(args)}"
    content = getattr(part, "content", "")
    if isinstance(content, str):
        return content
    try:
        return json.dumps(content, default=str)
    except (TypeError, ValueError):
        return str(content)


def count_text(text: str) -> int:
    """Tokens of ``text`` by the shipped WordPiece tokenizer (a local approximation)."""
    from geoask.embeddings.static import shipped_embedder

    return shipped_embedder().count_tokens(text)


__all__ = ["TokenUsage", "count_text", "part_text", "token_usage"]
