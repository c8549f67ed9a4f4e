"""What the typed answer says of each of its features: its value, unit and label on the map.

:func:`annotate` joins the payload's rows onto the answer's features once
:func:`geoask.maps.answer_features.pick_answer` has matched them (the row's other fields: rank,
value, ...) and adds two columns: :data:`VALUE_COLUMN` (the row's number: a ranked list's
``value``, a record's first numeric field other than its key, an object's first number) and
:data:`LABEL_COLUMN` (rank, name or id, and the value with its unit: ``"1. Clervaux 452 m"``).
Both maps draw the labels and, with two or more values, a graduated map
(:mod:`geoask.maps.graduated`). :func:`headline` is the one line a scalar or object answer gets
in the legend.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Final, TypeGuard

import geopandas as gpd

from geoask.vocabulary.answers import AnswerType, FinalAnswer

VALUE_COLUMN: Final = "answer value"
LABEL_COLUMN: Final = "answer label"
NAME_COLUMN: Final = "name_column"
"""``attrs`` key of a layer naming its column of feature names (labels show the name, not the
code it was matched by: :mod:`geoask.maps.key_lookup`)."""
MAX_LABELS: Final = 25
"""Labels drawn on a map at most (more answer features: popups and legend only)."""


@dataclass(frozen=True)
class ValueField:
    """The payload field graduated on the map, and its unit (``""`` if none)."""

    name: str
    unit: str


def payload_rows(answer: FinalAnswer) -> list[dict[str, Any]]:
    """The payload's rows: entities, ranked items, records, or an object as one row.

    >>> payload_rows(FinalAnswer(answer_type="object", summary="",
    ...                          data_payload={"iata": "LGA", "km": 17.2}))
    [{'iata': 'LGA', 'km': 17.2}]
    """
    payload = answer.data_payload if isinstance(answer.data_payload, dict) else {}
    member = {AnswerType.ENTITY_LIST: "entities", AnswerType.RANKED_LIST: "items",
              AnswerType.RECORDS: "records"}.get(answer.answer_type)
    if answer.answer_type is AnswerType.OBJECT:
        return [payload]
    rows = payload.get(member) if member else None
    return [row for row in rows or [] if isinstance(row, dict)]


def is_number(value: Any) -> TypeGuard[float]:
    """True for a finite real number that is not a boolean."""
    return (isinstance(value, numbers.Real) and not isinstance(value, bool)
            and math.isfinite(float(value)))


def value_field(answer: FinalAnswer, key_field: str) -> ValueField | None:
    """The numeric field of the payload's rows the map graduates (None when there is none).

    >>> value_field(FinalAnswer(answer_type="records", summary="", data_payload={
    ...     "records": [{"canton": "A", "mean_m": 300.5}], "units": {"mean_m": "m"}}), "canton")
    ValueField(name='mean_m', unit='m')
    """
    payload = answer.data_payload if isinstance(answer.data_payload, dict) else {}
    rows = payload_rows(answer)
    if answer.answer_type is AnswerType.RANKED_LIST:
        return ValueField("value", str(payload.get("unit") or ""))
    names = dict.fromkeys(k for row in rows for k in row if k not in (key_field, "rank"))
    for name in names:
        if rows and all(is_number(row.get(name)) for row in rows):
            units = payload.get("units") if isinstance(payload.get("units"), dict) else {}
            unit = (units or {}).get(name) or (payload.get("unit")
                                               if answer.answer_type is AnswerType.OBJECT else "")
            return ValueField(name, str(unit or ""))
    return None


def value_key(value: Any) -> str | None:
    """A value as a comparable key: integers and integral floats as digits, text casefolded.

    >>> value_key(" RDU "), value_key(37063), value_key(37063.0), value_key(0.5), value_key(True)
    ('rdu', '37063', '37063', None, None)
    """
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        number = float(value)
        return str(int(number)) if number.is_integer() else None
    if isinstance(value, str) and value.strip():
        return value.strip().casefold()
    return None


def number_text(value: float) -> str:
    """A value as a map shows it: three significant digits, thousands separated.

    >>> number_text(452.33), number_text(17.198), number_text(38542.0), number_text(0.01234)
    ('452', '17.2', '38,542', '0.0123')
    """
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def annotate(frame: gpd.GeoDataFrame, column: str, answer: FinalAnswer,
             key_field: str) -> tuple[gpd.GeoDataFrame, ValueField | None]:
    """``frame`` (the answer's features) with its value and label columns (module docstring).

    Args:
        frame: the answer's features.
        column: the layer column that matched the payload's ``key_field``.
        answer: the typed answer.
        key_field: the payload field whose values matched ``column`` (by :func:`value_key`).

    """
    rows = {value_key(row.get(key_field)): row for row in payload_rows(answer)}
    field = value_field(answer, key_field)
    matched = [rows.get(value_key(value), {}) for value in frame[column]]
    annotated = frame.copy()
    values = [row.get(field.name) if field else None for row in matched]
    annotated[VALUE_COLUMN] = [float(v) if is_number(v) else None for v in values]
    named = frame.attrs.get(NAME_COLUMN)  # a layer that carries its features' names
    owns = frame[named] if named in frame.columns else frame[column]
    annotated[LABEL_COLUMN] = [_label(row, own, field) for row, own in
                               zip(matched, owns, strict=True)]
    for name in dict.fromkeys(k for row in matched for k in row):
        if name != key_field and name not in annotated.columns:  # the row's other fields
            annotated[name] = [row.get(name) for row in matched]
    return annotated, field if any(v is not None for v in annotated[VALUE_COLUMN]) else None


def _label(row: dict[str, Any], own: Any, field: ValueField | None) -> str:
    name = row.get("name") or own
    rank = f"{row['rank']}. " if isinstance(row.get("rank"), int) else ""
    value = row.get(field.name) if field else None
    shown = f" {number_text(float(value))}{f' {field.unit}' if field.unit else ''}" \
        if field and is_number(value) else ""
    return f"{rank}{name}{shown}"


def headline(answer: FinalAnswer | None) -> str | None:
    """The one legend line of a scalar or object answer (None for other answer types).

    >>> headline(FinalAnswer(answer_type="scalar", summary="",
    ...                      data_payload={"value": 4, "unit": "count"}))
    'answer: 4 count'
    """
    if answer is None or not isinstance(answer.data_payload, dict):
        return None
    payload = answer.data_payload
    if answer.answer_type is AnswerType.SCALAR:
        value = payload.get("value")
        shown = number_text(float(value)) if is_number(value) else str(value)
        unit = f" {payload['unit']}" if payload.get("unit") else ""
        return f"answer: {shown}{unit}"
    if answer.answer_type is AnswerType.OBJECT:
        parts = [f"{k} {number_text(float(v)) if is_number(v) else v}"
                 for k, v in payload.items() if k != "unit" and not isinstance(v, dict | list)]
        return "answer: " + ", ".join(parts[:4])
    return None
