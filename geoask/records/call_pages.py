"""The call transcripts of a run for people: plain text, and a collapsed run-page section.

Plain text is what ``geoask runs show --calls`` prints; the section goes through the run
page's one escaping rule (:class:`Markdown`).

Each call shows its header (number, role, stage, model, output mode, status, time), then its
messages in order: the instructions, the user prompt, each response's text and raw tool-call
arguments, the validator's retry messages, tool returns, and each failed request's error.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from geoask.models.transcripts import CallTranscript
from geoask.records.run_artifacts import Markdown, code_block

_PART_LABELS = {
    "system-prompt": "system", "user-prompt": "user", "text": "model text",
    "tool-call": "model tool call", "tool-return": "tool return",
    "retry-prompt": "retry (validator)", "retry-feedback": "retry (validator)",
    "thinking": "model thinking",
}


def call_header(call: CallTranscript) -> str:
    """One line: ``#3 sql (sql-1) openai:smollm2 mode=tool ok 1.9 s, 2 requests``."""
    tokens = sum(r.input_tokens for r in call.requests), sum(r.output_tokens
                                                             for r in call.requests)
    return (f"#{call.n} {call.role} ({call.stage}) {call.system}:{call.model} "
            f"mode={call.output_mode} {call.status} {call.duration_ms / 1000:.1f} s, "
            f"{len(call.requests)} request(s), tokens in/out {tokens[0]}/{tokens[1]}"
            + (f" - {call.error}" if call.error else ""))


def call_text(call: CallTranscript) -> str:
    """The whole call as plain text: header, messages in order, failed requests."""
    lines = [call_header(call)]
    for message in call.messages:
        if message.get("instructions") and message.get("kind") == "request":
            lines.append(f"  [instructions] {message['instructions']}")
        lines += [f"  [{_label(part)}] {_part_text(part)}" for part in message.get("parts", [])]
    lines += [f"  [request {index} failed after {record.latency_ms:.0f} ms] {record.error}"
              for index, record in enumerate(call.requests, start=1) if record.error]
    return "\n".join(lines)


def calls_markdown(calls: Sequence[CallTranscript]) -> Markdown:
    """A collapsed run-page section: one line per call, then each call's text in a code block."""
    if not calls:
        return Markdown("")
    body = Markdown("\n\n").join(
        Markdown("{}\n\n{}").format(call_header(call), code_block(call_text(call)))
        for call in calls)
    return Markdown("<details><summary>Model calls ({}): every request and response</summary>"
                    "\n\n{}\n\n</details>").format(len(calls), body)


def _label(part: dict[str, Any]) -> str:
    kind = str(part.get("part_kind"))
    if kind == "tool-return" and part.get("outcome") == "retried":
        return "retry (validator)"
    return _PART_LABELS.get(kind, kind)


def _part_text(part: dict[str, Any]) -> str:
    if part.get("part_kind") == "tool-call":
        args = part.get("args")
        return f"{part.get('tool_name')} {args if isinstance(args, str) else json.dumps(args)}"
    content = part.get("content")
    if part.get("part_kind") == "tool-return" and part.get("outcome") != "retried":
        return f"{part.get('tool_name')} -> {json.dumps(content, default=str)[:300]}"
    return content if isinstance(content, str) else json.dumps(content, default=str)


__all__ = ["call_header", "call_text", "calls_markdown"]
