"""JSON-ready values of a query result, shared by every export format.

:func:`json_value` turns one database value into JSON-ready data (the GeoJSON/JSON exports and
the GeoParquet's non-geometry columns hold the same values); :func:`unique_names` makes column
names unique; :func:`dumps_exact` writes JSON with exact ``numeric`` literals.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

import shapely
from shapely.geometry.base import BaseGeometry

from geoask.sql.crs import to_wgs84


def json_value(value: Any) -> Any:
    """Convert one database value to JSON-ready data.

    Dates, times and timestamps become ISO 8601 text; intervals ISO 8601 durations
    (``P1DT3600S``); bytes hex. JSON has no NaN or Infinity (RFC 8259), and a value is never
    silently changed (to null, say): a non-finite ``double precision``, ``real`` or
    ``numeric`` becomes the text ``"NaN"``, ``"Infinity"`` or ``"-Infinity"``
    (:func:`non_finite_text`: PostgreSQL's own spelling, as its ``to_json`` writes them), so a
    script summing the column fails loudly instead of skipping it; GeoParquet keeps them as
    IEEE doubles (:mod:`geoask.sql.parquet_export`). Decimals (``numeric``) stay exact numbers:
    an integer when integral, a float when a double holds the value exactly (``2.50`` ->
    ``2.5``: the value is kept, not the trailing zeros), and otherwise the ``Decimal`` itself,
    which :func:`dumps_exact` writes as the exact JSON number literal (JSON numbers have no
    precision limit, RFC 8259 section 6) - never a string, so scripts and answers still read
    a number (a plain ``json.load`` reads a double; ``parse_float=Decimal`` the exact value).

    >>> json_value(Decimal("2.50")), json_value(dt.date(2020, 1, 2)), json_value(float("nan"))
    (2.5, '2020-01-02', 'NaN')
    >>> json_value(Decimal("12345678901234567890.123456789"))
    Decimal('12345678901234567890.123456789')
    >>> json_value(Decimal("12345678901234567890"))
    12345678901234567890
    """
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else non_finite_text(value)
    if isinstance(value, Decimal):
        if not value.is_finite():
            return non_finite_text(float(value))
        if value == value.to_integral_value():
            return int(value)
        approximate = float(value)  # a double when it holds the value exactly
        return approximate if Decimal(repr(approximate)) == value else value
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        seconds = value.seconds + value.microseconds / 1e6
        return f"P{value.days}DT{seconds:g}S"
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    if isinstance(value, BaseGeometry):
        return wkt(to_wgs84(value))
    if isinstance(value, dict):
        return {str(key): json_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_value(item) for item in value]
    return str(value)


NON_FINITE_TEXTS = frozenset({"NaN", "Infinity", "-Infinity"})
"""How the JSON exports write non-finite numbers (:func:`non_finite_text`)."""


def non_finite_text(value: float) -> str:
    """The JSON text of a non-finite number: ``NaN``, ``Infinity`` or ``-Infinity``.

    >>> non_finite_text(float("-inf")), non_finite_text(float("nan"))
    ('-Infinity', 'NaN')
    """
    if math.isnan(value):
        return "NaN"
    return "Infinity" if value > 0 else "-Infinity"


def unique_names(names: Sequence[str]) -> list[str]:
    """Column names made unique for JSON keys: the second ``id`` becomes ``id_2``.

    >>> unique_names(["id", "id", "name"])
    ['id', 'id_2', 'name']
    """
    seen: dict[str, int] = {}
    result = []
    for name in names:
        count = seen.get(name, 0) + 1
        seen[name] = count
        result.append(name if count == 1 else f"{name}_{count}")
    return result


def dumps_exact(payload: Any) -> str:
    """JSON text of ``payload`` with each ``Decimal`` written as its exact number literal.

    The standard library writes no Decimal; each one is written as a placeholder string
    (NUL-delimited: database text never holds NUL) and then replaced by its digits.

    >>> dumps_exact({"share": Decimal("75.9216463079124023"), "name": "Robeson"})
    '{"share": 75.9216463079124023, "name": "Robeson"}'
    """
    exact: list[str] = []

    def placeholder(value: Any) -> str:
        if not isinstance(value, Decimal) or not value.is_finite():
            raise TypeError(f"{type(value).__name__} is not JSON serialisable")
        exact.append(str(value))
        return f"\x00{len(exact) - 1}\x00"

    # allow_nan=False: json_value already wrote NaN/Infinity as text; fail loudly otherwise.
    text = json.dumps(payload, ensure_ascii=False, allow_nan=False, default=placeholder)
    if not exact:
        return text
    return _PLACEHOLDER.sub(lambda match: exact[int(match.group(1))], text)


_PLACEHOLDER = re.compile(r'"\\u0000(\d+)\\u0000"')


def wkt(geometry: BaseGeometry | None) -> str | None:
    """WKT of ``geometry`` at full double precision, or None."""
    return None if geometry is None else shapely.to_wkt(geometry, rounding_precision=-1)
