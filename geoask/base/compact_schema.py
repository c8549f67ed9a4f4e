"""Compact JSON schemas for the output models of the agents (``geoask.vocabulary.plan``, ...).

The JSON schema of an output model is sent to the model with every request, so it carries only
what the model needs: field names, types, constraints and terse descriptions. Model titles
(the tool name already says the type) and enum titles/docstrings (the values say it all) are
left out; validation is unchanged (pydantic validates against the models, not this text).
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema


def _compact(schema: dict[str, Any]) -> None:
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        if "default" in prop and prop["default"] is None:  # optional already says it
            del prop["default"]


def _compact_nested(schema: dict[str, Any]) -> None:
    _compact(schema)
    schema.pop("description", None)


COMPACT_SCHEMA = ConfigDict(json_schema_extra=_compact)
"""``model_config`` of an output model: no ``title``, no ``"default": null``."""

NESTED_SCHEMA = ConfigDict(json_schema_extra=_compact_nested)
"""``model_config`` of a model nested in an output: also no docstring (the instructions say it)."""


class BareEnumSchema:
    """Enum mixin: its JSON schema is just its type and values (no title, no docstring).

    ``class Kind(BareEnumSchema, StrEnum): ...``; the values already say what they mean and
    the instructions say the rest.
    """

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        schema = handler.resolve_ref_schema(handler(core_schema))
        schema.pop("title", None)
        schema.pop("description", None)
        return schema
