"""Compact output tools and prompt JSON: what every agent shares.

The output models carry compact schemas (:mod:`geoask.base.compact_schema`); here their output
tools get ``$defs`` inlined and null branches dropped, and prompts render models compactly.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from pydantic import BaseModel
from pydantic_ai import RunContext
from pydantic_ai.capabilities import PrepareOutputTools
from pydantic_ai.tools import ToolDefinition


def compact_json(model: BaseModel) -> str:
    """``model`` as JSON for a prompt: unset, empty and default fields left out.

    >>> from pydantic import Field
    >>> class Scope(BaseModel):
    ...     years: list[int] = Field(default_factory=list)
    >>> class Step(BaseModel):
    ...     id: str
    ...     scope: Scope
    ...     top_k: int | None = None
    >>> compact_json(Step(id="sql-1", scope=Scope()))
    '{"id":"sql-1"}'
    """
    data = model.model_dump(mode="json", exclude_none=True, exclude_defaults=True)
    return json.dumps(_without_empty(data), separators=(",", ":"), ensure_ascii=False)


def _without_empty(value: Any) -> Any:
    """``value`` without dict entries that are empty dicts or lists (recursively)."""
    if isinstance(value, dict):
        cleaned = {k: _without_empty(v) for k, v in value.items()}
        return {k: v for k, v in cleaned.items() if v != {} and v != []}
    if isinstance(value, list):
        return [_without_empty(item) for item in value]
    return value


def inline_defs(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with every ``$ref`` to its ``$defs`` replaced by the definition itself.

    The output models are not recursive and use each nested model in one place, so inlining
    only drops the ``$defs``/``$ref`` indirection the model would have to follow. An inlined
    enum loses its class name and docstring (a description the field itself sets is kept).

    >>> inline_defs({"$defs": {"K": {"enum": ["a"]}}, "properties": {"k": {"$ref": "#/$defs/K"}}})
    {'properties': {'k': {'enum': ['a']}}}
    """
    defs = schema.get("$defs", {})

    def resolve(node: Any, seen: frozenset[str]) -> Any:
        if isinstance(node, list):
            return [resolve(item, seen) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            name = ref.removeprefix("#/$defs/")
            if name in defs and name not in seen:  # a recursive model keeps its $ref
                siblings = {k: resolve(v, seen) for k, v in node.items() if k != "$ref"}
                definition = resolve(defs[name], seen | {name})
                if "enum" in definition:  # an enum's name and docstring: its values say it all
                    definition.pop("title", None)
                    definition.pop("description", None)
                return {**definition, **siblings}
        return {k: resolve(v, seen) for k, v in node.items() if k != "$defs"}

    inlined: dict[str, Any] = resolve(schema, frozenset())
    return inlined


def drop_null_branches(schema: Any) -> Any:
    """``schema`` with each optional ``anyOf: [X, {"type": "null"}]`` replaced by ``X``.

    An optional field is already optional by not being ``required``; the null branch only
    repeats that. Validation is unchanged: pydantic still accepts an explicit null.

    >>> drop_null_branches({"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}]})
    {'type': 'integer', 'minimum': 1}
    """
    if isinstance(schema, list):
        return [drop_null_branches(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    branches = schema.get("anyOf")
    if isinstance(branches, list):
        kept = [b for b in branches if b != {"type": "null"}]
        if len(kept) == 1 and len(branches) == 2 and isinstance(kept[0], dict):
            rest = {k: v for k, v in schema.items() if k != "anyOf"}
            return drop_null_branches({**kept[0], **rest})
    return {key: drop_null_branches(value) for key, value in schema.items()}


def compact_output_tools(ctx: RunContext[Any],
                         tool_defs: list[ToolDefinition]) -> list[ToolDefinition]:
    """The agents' output tools with compact JSON schemas.

    ``$defs`` inlined (:func:`inline_defs`), null branches of optional fields dropped
    (:func:`drop_null_branches`).

    Used as ``capabilities=[PrepareOutputTools(compact_output_tools)]``: what it returns is
    what every model is sent.
    """
    return [replace(tool, parameters_json_schema=drop_null_branches(
        inline_defs(tool.parameters_json_schema))) for tool in tool_defs]


COMPACT_OUTPUT_TOOLS = PrepareOutputTools(compact_output_tools)
"""The capability every agent uses to send inlined output schemas."""
