"""The SSA rule of each answer type, and :func:`judge_answer` dispatching on the contract.

Only the structured payload counts (never the summary text); the answer type must be the
contracted one; extra explanatory fields are allowed.
"""

from __future__ import annotations

from typing import Any

from geoask.bench.compare import compare_answers
from geoask.bench.evaluate.entities import (
    entity_id,
    entity_ids,
    expected_entity_ids,
    list_in,
    ranked_items,
    record_key,
    set_verdict,
    tied,
)
from geoask.bench.evaluate.units import find_field, split_unit_suffix, unit_factor
from geoask.bench.evaluate.values import (
    CORRECT,
    Verdict,
    field_verdict,
    id_key,
    ids_exact,
    value_verdict,
)
from geoask.cases.model import BenchmarkCase
from geoask.cases.projection import ProjectionError, flat_bbox, geojson_geometry
from geoask.vocabulary.answers import AnswerType

_UNIT_KEYS = frozenset({"unit", "units"})


def extract_scalar(payload: Any, value_field: str | None) -> tuple[Any, str | None] | Verdict:
    """``(value, unit)`` of a scalar answer, or a failing :class:`Verdict`.

    Read from ``value``, else the contract's value field (or the same stem in another unit),
    else a single-valued payload (one value besides ``unit``/``units``, possibly wrapped in a
    one-element list). A scalar among several values does not count.

    >>> extract_scalar({"value": 3, "unit": "km"}, None)
    (3, 'km')
    >>> extract_scalar({"a": 3, "b": 4}, "n").kind
    'field'
    """
    unit: str | None = None
    current = payload
    for _ in range(4):
        if isinstance(current, list):
            if len(current) != 1:
                return Verdict(False, f"a scalar answer is one value, the payload holds a list "
                                      f"of {len(current)}", "field")
            current = current[0]
            continue
        if not isinstance(current, dict):
            return current, unit
        if isinstance(current.get("unit"), str):
            unit = current["unit"]
        if "value" in current:
            return current["value"], unit
        key = find_field(current, value_field) if value_field else None
        if key is None:
            rest = [k for k in current if k not in _UNIT_KEYS]
            if len(rest) != 1:
                return Verdict(False, f"the scalar is not in data_payload.value and the payload "
                                      f"holds {len(rest)} values {sorted(rest)[:8]}", "field")
            key = rest[0]
        unit = unit or split_unit_suffix(key)[1]
        if isinstance(current.get("units"), dict) and isinstance(current["units"].get(key), str):
            unit = current["units"][key]
        current = current[key]
    return Verdict(False, "the scalar is nested too deeply in the payload", "field")


def score_scalar(case: BenchmarkCase, payload: Any) -> Verdict:
    """Scalar rule: the value (read by :func:`extract_scalar`), unit-normalized, in tolerance."""
    projection = case.answer.projection
    extracted = extract_scalar(payload, projection.value_field)
    if isinstance(extracted, Verdict):
        return extracted
    value, unit = extracted
    expected_unit = projection.unit or split_unit_suffix(projection.value_field or "")[1]
    return value_verdict(case.expected.value, value, case.expected.tolerance,
                         factor=unit_factor(expected_unit, unit))


def score_entity_list(case: BenchmarkCase, payload: Any) -> Verdict:
    """Plain list rule: exactly the expected entities (ids exact), none missing, none extra."""
    ids = entity_ids(case, payload)
    if isinstance(ids, Verdict):
        return ids
    return set_verdict(expected_entity_ids(case), ids)


def score_ranked_list(case: BenchmarkCase, payload: Any) -> Verdict:
    """Ranked rule: same entities in the expected order, each with its own value.

    Entries whose expected values are equal (ties) may come in either order.
    """
    projection = case.answer.projection
    items = ranked_items(payload)
    if isinstance(items, Verdict):
        return items
    expected: list[dict[str, Any]] = list(case.expected.value or [])
    ids = [entity_id(item, projection.entity_field) for item in items]
    entities = set_verdict([want["id"] for want in expected], ids)
    if not entities.matches:
        return entities
    default_unit = payload.get("unit") if isinstance(payload.get("unit"), str) else None
    by_id = {id_key(want["id"]): want for want in expected}
    for rank, (want, item, got_id) in enumerate(zip(expected, items, ids, strict=True), 1):
        matched = by_id[id_key(got_id)]
        if not (ids_exact(want["id"], got_id) or tied(want, matched)):
            return Verdict(False, f"rank {rank}: expected {want['id']!r}, got {got_id!r}",
                           "order")
        if "value" not in matched:
            continue
        record = item if isinstance(item, dict) else {}
        value_key = "value" if "value" in record else (
            find_field(record, projection.value_field) if projection.value_field else None)
        if value_key is None:
            return Verdict(False, f"rank {rank} ({got_id!r}): the entry has no value", "field")
        actual_unit = record.get("unit") if isinstance(record.get("unit"), str) else None
        actual_unit = actual_unit or split_unit_suffix(value_key)[1] or default_unit
        expected_unit = projection.unit or split_unit_suffix(projection.value_field or "")[1]
        verdict = value_verdict(matched["value"], record[value_key], case.expected.tolerance,
                                factor=unit_factor(expected_unit, actual_unit),
                                where=f"rank {rank} ({got_id!r})")
        if not verdict.matches:
            return verdict
    return CORRECT


def score_records(case: BenchmarkCase, payload: Any) -> Verdict:
    """Records rule: one answer record per expected key (exact), fields checked per record."""
    projection = case.answer.projection
    records = list_in(payload, "records")
    if isinstance(records, Verdict):
        return records
    for record in records:
        if not isinstance(record, dict):
            return Verdict(False, f"records must be mappings, got {record!r}", "field")
        missing = [name for name in projection.key_fields if find_field(record, name) is None]
        if missing:
            return Verdict(False, f"a record has no key field {missing}", "field")
    entities = set_verdict(expected_entity_ids(case),
                           [record_key(record, projection.key_fields) for record in records])
    if not entities.matches:
        return entities
    units: dict[str, str] = payload["units"] if isinstance(payload.get("units"), dict) else {}
    default_unit = payload.get("unit") if isinstance(payload.get("unit"), str) else None
    by_key = {id_key(record_key(r, projection.key_fields)): r for r in records}
    for want in case.expected.value or []:
        key = record_key(want, projection.key_fields)
        got = by_key[id_key(key)]
        values = {name: want[name] for name in projection.value_fields}
        verdict = field_verdict(values, got, case.expected.tolerance,
                                case_unit=projection.unit, actual_units=units,
                                default_unit=default_unit, where=f"record {key!r}: ")
        if not verdict.matches:
            return verdict
    return CORRECT


def score_object(case: BenchmarkCase, payload: Any) -> Verdict:
    """Object rule: every expected field present and correct; extra fields allowed."""
    if not isinstance(payload, dict):
        return Verdict(False, f"an object answer is a mapping, got {type(payload).__name__}",
                       "field")
    units: dict[str, str] = payload["units"] if isinstance(payload.get("units"), dict) else {}
    default_unit = payload.get("unit") if isinstance(payload.get("unit"), str) else None
    return field_verdict(dict(case.expected.value or {}), payload, case.expected.tolerance,
                         case_unit=case.answer.projection.unit, actual_units=units,
                         default_unit=default_unit)


def _geo_value(payload: Any, key: str, value_field: str | None) -> Any:
    if isinstance(payload, dict):
        if key in payload:
            return payload[key]
        if value_field and value_field in payload:
            return payload[value_field]
    return payload


def score_bbox(case: BenchmarkCase, payload: Any) -> Verdict:
    """Bbox rule: flat or nested, the four bounds within tolerance (degrees, EPSG:4326)."""
    try:
        bbox = flat_bbox(_geo_value(payload, "bbox", case.answer.projection.value_field))
    except ProjectionError as error:
        return Verdict(False, str(error), "field")
    for index, (want, got) in enumerate(zip(case.expected.value, bbox, strict=True)):
        verdict = value_verdict(want, got, case.expected.tolerance, where=f"bbox[{index}]")
        if not verdict.matches:
            return verdict
    return CORRECT


def score_geometry(case: BenchmarkCase, payload: Any) -> Verdict:
    """Geometry rule: same geometry type, Hausdorff distance within ``tolerance.abs`` (°)."""
    try:
        geometry = geojson_geometry(
            _geo_value(payload, "geometry", case.answer.projection.value_field))
    except ProjectionError as error:
        return Verdict(False, str(error), "field")
    comparison = compare_answers(case.expected.value, geometry, AnswerType.GEOMETRY,
                                 case.expected.tolerance)
    return CORRECT if comparison.matches else Verdict(False, comparison.reason, "value")


_SCORERS = {
    AnswerType.SCALAR: score_scalar,
    AnswerType.ENTITY_LIST: score_entity_list,
    AnswerType.RANKED_LIST: score_ranked_list,
    AnswerType.RECORDS: score_records,
    AnswerType.OBJECT: score_object,
    AnswerType.BBOX: score_bbox,
    AnswerType.GEOMETRY: score_geometry,
}


def judge_answer(case: BenchmarkCase, answer_type: AnswerType | str | None,
                 payload: Any) -> Verdict:
    """SSA verdict of a final answer (type + payload) against the case; ``None`` = no answer."""
    if answer_type is None:
        return Verdict(False, "the pipeline produced no answer", "missing")
    contracted = case.answer.answer_type
    if str(answer_type) != contracted.value:
        return Verdict(False, f"answer_type {answer_type} but the contract is {contracted.value}",
                       "contract")
    return _SCORERS[contracted](case, payload)
