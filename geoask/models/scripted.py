"""ScriptedModel: replays given outputs per agent role through pydantic-ai's ``FunctionModel``.

Used by the offline flow tests and benchmarks (and later by the offline ``reference`` model).
Each role (``intent``, ``planner``, ``sql``, ``compute``, ``reviewer``, ``answer``) gets a queue
of replies; every model request pops the next one:

- a pydantic model instance: returned by calling the agent's output tool for its type (found
  by inspecting ``AgentInfo.output_tools``: ``final_result_<TypeName>`` or the single one);
- an exception instance: raised from the model (e.g. a ``ModelHTTPError`` 429);
- a callable ``(prompt: str) -> reply``: called with the latest user prompt text, so a scripted
  "model" can copy numbers from the evidence it was shown.

Usage is reported with the shipped local WordPiece tokenizer (prompt = every message part,
the instructions and the output tool schemas; completion = the tool-call arguments).

>>> from pydantic import BaseModel
>>> from pydantic_ai import Agent
>>> class Out(BaseModel):
...     n: int
>>> scripted = ScriptedModel({"demo": [Out(n=3)]})
>>> Agent(output_type=Out, name="demo").run_sync("hi", model=scripted.model("demo")).output
Out(n=3)
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.usage import RequestUsage

Reply = BaseModel | BaseException | Callable[[str], Any]
"""One scripted reply: an output object, an exception to raise, or a function of the prompt."""


class ScriptExhaustedError(RuntimeError):
    """A role was asked for more replies than were scripted (a test expectation failed)."""


@dataclass(frozen=True)
class ScriptedCall:
    """One model request answered by the script.

    Attributes:
        role: the agent role whose queue answered.
        prompt: the latest user prompt text of the request.
        output: the class name of the returned output, or of the raised exception.
        prompt_tokens: local-tokenizer count of everything sent.
        completion_tokens: local-tokenizer count of the tool-call arguments returned.

    """

    role: str
    prompt: str
    output: str
    prompt_tokens: int
    completion_tokens: int


@dataclass
class ScriptedModel:
    """Replays scripted replies per role; see the module docstring.

    Args:
        scripts: role -> replies in the order they are to be used.

    Attributes:
        calls: every request answered, in order (all roles).

    """

    scripts: Mapping[str, Sequence[Reply]]
    calls: list[ScriptedCall] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._queues: dict[str, deque[Reply]] = {
            role: deque(replies) for role, replies in self.scripts.items()
        }

    def model(self, role: str) -> FunctionModel:
        """The ``FunctionModel`` answering requests of ``role`` from its queue."""

        def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            return self._respond(role, messages, info)

        return FunctionModel(respond, model_name=f"scripted-{role}")

    def model_for(self, role: str, settings: object = None) -> FunctionModel:
        """Same as :meth:`model`; matches ``geoask.models.llm.model_for(role, settings)``."""
        return self.model(role)

    def remaining(self, role: str) -> int:
        """Replies of ``role`` not yet used."""
        return len(self._queues.get(role, ()))

    def roles_called(self) -> list[str]:
        """Roles of the answered requests, in order."""
        return [call.role for call in self.calls]

    def _respond(self, role: str, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        queue = self._queues.get(role)
        if not queue:
            raise ScriptExhaustedError(f"no scripted reply left for role {role!r}")
        reply = queue.popleft()
        prompt = latest_user_prompt(messages)
        prompt_tokens = count_tokens(request_text(messages, info))
        if callable(reply) and not isinstance(reply, BaseModel | BaseException):
            reply = reply(prompt)
        if isinstance(reply, BaseException):
            self.calls.append(ScriptedCall(role, prompt, type(reply).__name__, prompt_tokens, 0))
            raise reply
        if not isinstance(reply, BaseModel):
            raise TypeError(f"scripted reply for {role!r} must be a pydantic model, got {reply!r}")
        call, completion_tokens = output_tool_call(reply, info)
        self.calls.append(
            ScriptedCall(role, prompt, type(reply).__name__, prompt_tokens, completion_tokens)
        )
        return ModelResponse(
            parts=[call],
            usage=RequestUsage(input_tokens=prompt_tokens, output_tokens=completion_tokens),
            model_name=f"scripted-{role}",
        )


def output_tool_call(reply: BaseModel, info: AgentInfo) -> tuple[ToolCallPart, int]:
    """The output-tool call that answers with ``reply``, and its completion tokens.

    Fields left unset (None) are omitted, as the compact output schemas advertise them
    (agents/_schema.py); values inside free-form fields such as a payload keep their nulls.
    """
    tool = output_tool_for(reply, info.output_tools)
    arguments = reply.model_dump(mode="json", exclude_none=True)
    if tool.outer_typed_dict_key:
        arguments = {tool.outer_typed_dict_key: arguments}
    return ToolCallPart(tool.name, arguments), count_tokens(json.dumps(arguments))


def output_tool_for(reply: BaseModel, tools: Sequence[ToolDefinition]) -> ToolDefinition:
    """The output tool that accepts ``reply``'s type.

    Matches ``final_result_<TypeName>`` (a union output), then a schema titled ``<TypeName>``,
    then the only output tool.

    Raises:
        ScriptExhaustedError: no output tool fits (the script does not match the agent).

    """
    name = type(reply).__name__
    for tool in tools:
        if tool.name.endswith(f"_{name}") or tool.name == name:
            return tool
    for tool in tools:
        if tool.parameters_json_schema.get("title") == name:
            return tool
    if len(tools) == 1:
        return tools[0]
    offered = ", ".join(tool.name for tool in tools) or "none"
    raise ScriptExhaustedError(f"no output tool accepts {name} (offered: {offered})")


def latest_user_prompt(messages: Sequence[ModelMessage]) -> str:
    """Text of the most recent user prompt in ``messages`` ('' when there is none)."""
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            for part in reversed(message.parts):
                if isinstance(part, UserPromptPart):
                    return part.content if isinstance(part.content, str) else str(part.content)
    return ""


def request_text(messages: Sequence[ModelMessage], info: AgentInfo) -> str:
    """Everything a request sends, as text: instructions, message parts and tool schemas."""
    pieces: list[str] = [info.instructions or ""]
    for message in messages:
        for part in message.parts:
            content = getattr(part, "content", None)
            if isinstance(content, str):
                pieces.append(content)
            elif content is not None:
                pieces.append(json.dumps(content, default=str))
            args = getattr(part, "args", None)
            if args is not None:
                pieces.append(args if isinstance(args, str) else json.dumps(args, default=str))
    for tool in [*info.function_tools, *info.output_tools]:
        pieces.append(f"{tool.name} {tool.description or ''} "
                      f"{json.dumps(tool.parameters_json_schema)}")
    return "\n".join(pieces)


def count_tokens(text: str) -> int:
    """Tokens of ``text`` under the shipped local WordPiece tokenizer (no download)."""
    from geoask.embeddings.static import shipped_embedder

    return shipped_embedder().count_tokens(text)
