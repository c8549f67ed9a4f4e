"""The final-answer contract: answer types and the JSON Schema of each ``data_payload``.

A final answer is ``{answer_type, data_payload, summary}``. The payload's shape depends on the
answer type; :func:`payload_errors` checks it against the type's JSON Schema (Draft 2020-12).
Numbers carry their unit in the record (``unit``: "m", "km", "km2", "m2", "mm", "degC", "USD",
"percent", "count", ...); coordinates are WGS 84 longitude/latitude (EPSG:4326).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from jsonschema import Draft202012Validator
from pydantic import BaseModel, Field

from geoask.base.compact_schema import COMPACT_SCHEMA
from geoask.vocabulary.text import Sentence


class AnswerType(StrEnum):
    """What kind of answer a question asks for."""

    SCALAR = "scalar"
    ENTITY_LIST = "entity_list"
    RANKED_LIST = "ranked_list"
    RECORDS = "records"
    OBJECT = "object"
    BBOX = "bbox"
    GEOMETRY = "geometry"


class FinalAnswer(BaseModel):
    """The typed final answer."""

    model_config = COMPACT_SCHEMA

    answer_type: AnswerType
    data_payload: Any = Field(description="Valid under the payload JSON Schema.")
    summary: str


class AnswerRefusal(BaseModel):
    """No answer can be given from the evidence."""

    model_config = COMPACT_SCHEMA

    reason: Sentence


AnswerOutput = FinalAnswer | AnswerRefusal


_NUMBER_OR_NULL = {"type": ["number", "null"]}
_ENTITY = {
    "type": "object",
    "required": ["id"],
    "properties": {
        "id": {"type": ["string", "integer"], "description": "Key of the entity (FIPS, IATA...)."},
        "name": {"type": "string"},
    },
}

PAYLOAD_SCHEMAS: dict[AnswerType, dict[str, Any]] = {
    AnswerType.SCALAR: {
        "type": "object",
        "required": ["value"],
        "properties": {
            "value": {"type": ["number", "string", "boolean", "null"]},
            "unit": {"type": "string"},
        },
    },
    AnswerType.ENTITY_LIST: {
        "type": "object",
        "required": ["entities"],
        "properties": {"entities": {"type": "array", "items": _ENTITY}},
    },
    AnswerType.RANKED_LIST: {
        "type": "object",
        "required": ["items"],
        "properties": {
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["rank", "id", "value"],
                    "properties": {
                        "rank": {"type": "integer", "minimum": 1},
                        "id": {"type": ["string", "integer"]},
                        "name": {"type": "string"},
                        "value": _NUMBER_OR_NULL,
                    },
                },
            },
            "unit": {"type": "string"},
            "order": {"enum": ["ascending", "descending"]},
        },
    },
    AnswerType.RECORDS: {
        "type": "object",
        "required": ["records"],
        "properties": {
            "records": {"type": "array", "items": {"type": "object"}},
            "units": {"type": "object", "additionalProperties": {"type": "string"}},
        },
    },
    AnswerType.OBJECT: {"type": "object", "minProperties": 1},
    AnswerType.BBOX: {
        "type": "object",
        "required": ["bbox"],
        "properties": {
            "bbox": {
                "type": "array", "items": {"type": "number"}, "minItems": 4, "maxItems": 4,
                "description": "[min_lon, min_lat, max_lon, max_lat], EPSG:4326.",
            }
        },
    },
    AnswerType.GEOMETRY: {
        "type": "object",
        "required": ["geometry"],
        "properties": {
            "geometry": {
                "type": "object",
                "required": ["type"],
                "properties": {"type": {"enum": [
                    "Point", "MultiPoint", "LineString", "MultiLineString", "Polygon",
                    "MultiPolygon", "GeometryCollection"]}},
                "description": "RFC 7946 GeoJSON geometry, EPSG:4326.",
            },
            "properties": {"type": "object"},
        },
    },
}


def contract_text(answer_type: AnswerType, answer_fields: list[str]) -> str:
    """The answer contract as one prompt line (reviewer and answer agents).

    >>> contract_text(AnswerType.SCALAR, ["n"])
    'Answer contract: answer_type=scalar; answer fields: n'
    """
    fields = ", ".join(answer_fields) or "(not fixed)"
    return f"Answer contract: answer_type={answer_type.value}; answer fields: {fields}"


def payload_errors(answer_type: AnswerType, payload: Any) -> list[str]:
    """Return every way ``payload`` violates the schema of ``answer_type`` (empty when valid).

    Also checks what a schema cannot: a bbox has min <= max, a ranked list's ranks are 1..n.
    """
    validator = Draft202012Validator(PAYLOAD_SCHEMAS[answer_type])
    errors = [f"{'/'.join(map(str, e.path)) or 'payload'}: {e.message}"
              for e in validator.iter_errors(payload)]
    if errors:
        return errors
    if answer_type is AnswerType.BBOX:
        x0, y0, x1, y1 = payload["bbox"]
        if x0 > x1 or y0 > y1:
            errors.append("bbox: expected [min_lon, min_lat, max_lon, max_lat] with min <= max")
    if answer_type is AnswerType.RANKED_LIST:
        ranks = [item["rank"] for item in payload["items"]]
        if ranks != sorted(ranks) or (ranks and ranks[0] != 1):
            errors.append("items: ranks must start at 1 and be in order")
    return errors
