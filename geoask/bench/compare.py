"""Compare a projected answer with the expected one, within the case's tolerance.

Numbers match when ``|actual - expected| <= max(tol.abs, tol.rel * |expected|)`` (plus a
1e-9 relative slack for the 10 significant digits stored); entity ids,
strings and booleans must be equal (an integer id 7 and the text "7" are the same id, an id
7.0 is not); lists of entities must have no missing or extra member; ranked lists must keep the
order. Each comparison returns :class:`Comparison` with a reason for the first difference.

>>> compare_answers(10.0, 10.04, AnswerType.SCALAR, Tolerance(abs=0.05)).matches
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from geoask.cases.model import Tolerance
from geoask.vocabulary.answers import AnswerType


@dataclass(frozen=True)
class Comparison:
    """Outcome of one comparison.

    Attributes:
        matches: True when the answer agrees with the expected value.
        reason: the first difference found (empty when it matches).

    """

    matches: bool
    reason: str = ""


AGREES = Comparison(True)

#: Expected values are stored with 10 significant digits; this relative slack absorbs that.
STORED_DIGITS_REL = 1e-9


def numbers_match(expected: float, actual: float, tolerance: Tolerance) -> bool:
    """True when ``actual`` is within ``max(abs, rel * |expected|)`` of ``expected``.

    >>> numbers_match(100.0, 100.9, Tolerance(rel=0.01))
    True
    >>> numbers_match(100.0, 101.1, Tolerance(rel=0.01))
    False
    """
    if not (math.isfinite(expected) and math.isfinite(actual)):
        return False
    allowed = max(tolerance.abs, tolerance.rel * abs(expected), STORED_DIGITS_REL * abs(expected))
    return abs(actual - expected) <= allowed


def values_match(expected: Any, actual: Any, tolerance: Tolerance) -> Comparison:
    """Compare two field values: numbers within tolerance, anything else exactly.

    >>> values_match("NC", "nc", Tolerance()).matches
    False
    """
    if _is_number(expected):
        if not _is_number(actual):
            return Comparison(False, f"expected the number {expected!r}, got {actual!r}")
        if numbers_match(float(expected), float(actual), tolerance):
            return AGREES
        return Comparison(
            False, f"expected {expected!r}, got {actual!r} (tolerance {_tol(tolerance)})"
        )
    if expected != actual or type(expected) is not type(actual):
        return Comparison(False, f"expected {expected!r}, got {actual!r}")
    return AGREES


def ids_equal(expected: Any, actual: Any) -> bool:
    """Entity ids match exactly: same text, an integer may match its decimal text.

    >>> ids_equal(7, "7"), ids_equal(7, 7.0), ids_equal("NC", "NC ")
    (True, False, False)
    """
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected is actual
    if isinstance(expected, float) or isinstance(actual, float):
        return type(expected) is type(actual) and expected == actual
    return str(expected) == str(actual)


def compare_answers(
    expected: Any, actual: Any, answer_type: AnswerType, tolerance: Tolerance
) -> Comparison:
    """Compare projected answers of ``answer_type`` (canonical shapes, see projection)."""
    if answer_type is AnswerType.SCALAR:
        return values_match(expected, actual, tolerance)
    if answer_type is AnswerType.ENTITY_LIST:
        return _compare_entities(expected, actual)
    if answer_type is AnswerType.RANKED_LIST:
        return _compare_ranked(expected, actual, tolerance)
    if answer_type is AnswerType.RECORDS:
        return _compare_records(expected, actual, tolerance)
    if answer_type is AnswerType.OBJECT:
        return _compare_mapping(expected, actual, tolerance, "")
    if answer_type is AnswerType.BBOX:
        return _compare_sequence(expected, actual, tolerance, "bbox")
    return _compare_geometry(expected, actual, tolerance)


def _compare_entities(expected: list[Any], actual: list[Any]) -> Comparison:
    if not isinstance(actual, list):
        return Comparison(False, f"expected a list of entities, got {actual!r}")
    expected_ids = [str(v) for v in expected]
    actual_ids = [str(v) for v in actual]
    if len(set(actual_ids)) != len(actual_ids):
        return Comparison(False, "the answer lists an entity more than once")
    missing = sorted(set(expected_ids) - set(actual_ids))
    extra = sorted(set(actual_ids) - set(expected_ids))
    if missing or extra:
        return Comparison(False, f"missing {missing[:10]}, extra {extra[:10]}")
    for want in expected:
        got = next(a for a in actual if str(a) == str(want))
        if not ids_equal(want, got):
            return Comparison(False, f"id {want!r} given as {got!r}")
    return AGREES


def _compare_ranked(expected: list[Any], actual: list[Any], tolerance: Tolerance) -> Comparison:
    if not isinstance(actual, list) or len(actual) != len(expected):
        count = len(actual) if isinstance(actual, list) else "no list"
        return Comparison(False, f"expected {len(expected)} ranked entries, got {count}")
    for rank, (want, got) in enumerate(zip(expected, actual, strict=True), start=1):
        if not ids_equal(want["id"], got.get("id")):
            return Comparison(False, f"rank {rank}: expected {want['id']!r}, got {got.get('id')!r}")
        if "value" in want:
            verdict = values_match(want["value"], got.get("value"), tolerance)
            if not verdict.matches:
                return Comparison(False, f"rank {rank} ({want['id']}): {verdict.reason}")
    return AGREES


def _compare_records(
    expected: list[dict[str, Any]], actual: list[dict[str, Any]], tolerance: Tolerance
) -> Comparison:
    if not isinstance(actual, list) or len(actual) != len(expected):
        count = len(actual) if isinstance(actual, list) else "no list"
        return Comparison(False, f"expected {len(expected)} records, got {count}")
    for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
        verdict = _compare_mapping(want, got, tolerance, f"record {index + 1}: ")
        if not verdict.matches:
            return verdict
    return AGREES


def _compare_mapping(
    expected: dict[str, Any], actual: Any, tolerance: Tolerance, where: str
) -> Comparison:
    if not isinstance(actual, dict):
        return Comparison(False, f"{where}expected a record, got {actual!r}")
    for name, want in expected.items():
        if name not in actual:
            return Comparison(False, f"{where}field {name!r} missing")
        verdict = values_match(want, actual[name], tolerance)
        if not verdict.matches:
            return Comparison(False, f"{where}{name}: {verdict.reason}")
    return AGREES


def _compare_sequence(
    expected: list[Any], actual: Any, tolerance: Tolerance, what: str
) -> Comparison:
    if not isinstance(actual, list) or len(actual) != len(expected):
        return Comparison(False, f"expected a {what} of {len(expected)} numbers, got {actual!r}")
    for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
        verdict = values_match(want, got, tolerance)
        if not verdict.matches:
            return Comparison(False, f"{what}[{index}]: {verdict.reason}")
    return AGREES


def _compare_geometry(expected: Any, actual: Any, tolerance: Tolerance) -> Comparison:
    """Geometries match when their Hausdorff distance is at most ``tolerance.abs`` (degrees)."""
    from shapely.geometry import shape

    try:
        want, got = shape(expected), shape(actual)
    except Exception as error:
        return Comparison(False, f"not a GeoJSON geometry: {error}")
    if want.geom_type != got.geom_type:
        return Comparison(False, f"expected a {want.geom_type}, got a {got.geom_type}")
    distance = want.hausdorff_distance(got)
    if distance > tolerance.abs:
        return Comparison(False, f"Hausdorff distance {distance:.3g}° exceeds {tolerance.abs}°")
    return AGREES


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _tol(tolerance: Tolerance) -> str:
    return f"abs {tolerance.abs}, rel {tolerance.rel}"
