"""What an agent run was told when its output was rejected: the rules its outputs broke."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic_ai.messages import ModelMessage, ModelRequest, RetryPromptPart, ToolReturnPart


def broken_rules(messages: Sequence[ModelMessage]) -> str | None:
    """The rules an agent run's outputs broke: its last rejection's feedback, on one line.

    An output validator rejects an attempt with ``ModelRetry`` naming each broken rule
    (``agents/_checks.py``), sent back as the output tool's ``retried`` return; a schema or
    tool-argument error comes back as a :class:`RetryPromptPart`. The run's last attempt, the
    one that spent the budget, gets no feedback: the last rejection before it is returned.
    """
    for message in reversed(messages):
        if not isinstance(message, ModelRequest):
            continue
        texts = [_feedback_text(part) for part in message.parts
                 if isinstance(part, RetryPromptPart)
                 or (isinstance(part, ToolReturnPart) and part.outcome == "retried")]
        if texts:
            return " ".join(texts)
    return None


def _feedback_text(part: RetryPromptPart | ToolReturnPart) -> str:
    content = part.content
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):  # a RetryPromptPart's validation errors
        text = "; ".join(f"{'.'.join(map(str, e.get('loc', ())))}: {e.get('msg', '')}"
                         for e in content if isinstance(e, dict))
    else:
        text = str(content)
    return " ".join(text.split())
