"""Score one benchmark question: Strict Structured Accuracy (SSA) and the per-case measures.

:func:`score_case` compares the pipeline's final answer (``{answer_type, data_payload,
summary}``, :mod:`geoask.answers`) with the case's verified expected value (canonical shapes of
:mod:`geoask.bench.projection`) and reads routing, recovery, time and tokens from the
execution log. The rules, each a small pure function below:

- the answer type must be the contracted one; only the structured payload counts (never the
  summary text);
- a scalar is read from ``value``, the contract's value field, or a single-valued payload; a
  scalar hidden among several values does not count;
- field semantics before numbers: every expected field must be present (same name, or the same
  stem with another unit suffix such as ``distance_m`` for ``distance_km``) and its unit must
  measure the same thing; then values are normalized (lengths via metres, areas via m²,
  percent vs ratio) and compared within the case's tolerance;
- an entity and its value must sit in the same record; plain lists (entity lists, records) may
  have no missing or extra member; ranked lists are compared in order (entries with equal
  expected values may swap);
- entity ids are exact: same type and text (``7`` is not ``"7"`` nor ``7.0``, ``"06075"`` is not
  ``"6075"``);
- flat ``[min_lon, min_lat, max_lon, max_lat]`` and nested ``[[min_lon, min_lat], [max_lon,
  max_lat]]`` bboxes are the same;
- extra explanatory fields are allowed.

List questions (entity list, ranked list, records) also get Exact Set Match, Ranking Exact
Match (ranked lists only) and entity precision/recall/F1. A failure gets a primary root cause
(:class:`RootCause`) from the execution trace where one can be told.

>>> unit_factor("km", "m"), ids_exact(7, "7")
(0.001, False)
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal

from geoask.answers import AnswerType, FinalAnswer, payload_errors
from geoask.bench.compare import compare_answers, numbers_match
from geoask.bench.model import BenchmarkCase, Tolerance
from geoask.bench.projection import (
    ProjectionError,
    flat_bbox,
    geojson_geometry,
    project_answer,
)

if TYPE_CHECKING:
    from geoask.execution_log import ExecutionLog


class RootCause(StrEnum):
    """Primary cause of a failed case: the earliest stage where the run left a valid path."""

    INTENT = "intent"
    SCHEMA_GROUNDING = "schema_grounding"
    PLANNING_ROUTING = "planning_routing"
    SQL_LOGIC = "sql_logic"
    ARTIFACT_SPATIAL = "artifact_spatial_semantics"
    COMPUTATION = "computation"
    ANSWER_PROJECTION = "answer_projection"


FailureKind = Literal[
    "", "missing", "contract", "field", "unit", "scale", "percent", "entities", "order", "value"]


@dataclass(frozen=True)
class Verdict:
    """Outcome of comparing an answer payload with the expected value.

    Attributes:
        matches: True when the payload is strictly correct.
        reason: the first difference found (empty when it matches).
        kind: what kind of difference: ``contract`` (answer type), ``field`` (a field is
            missing or the payload shape hides the answer), ``unit`` (a unit measuring
            something else, e.g. degrees for a distance), ``scale`` (a number right but for a
            factor 1000 or 10^6: a length or area unit slip), ``percent`` (right but for a
            factor 100: percent vs ratio), ``entities`` (missing/extra entities), ``order``
            (right entities, wrong order), ``value`` (a number or text outside tolerance),
            ``missing`` (no answer).

    """

    matches: bool
    reason: str = ""
    kind: FailureKind = ""


CORRECT = Verdict(True)


@dataclass(frozen=True)
class ListMatch:
    """Entity-level measures of a list question (entity ids compared exactly).

    Attributes:
        exact_set: predicted and expected entity sets are identical.
        ranking_exact: the predicted sequence is the expected one (ranked lists; None else).
        precision: ``|P ∩ G| / |P|`` (0 when nothing was predicted).
        recall: ``|P ∩ G| / |G|`` (1 when nothing is expected and nothing predicted).
        f1: harmonic mean of precision and recall (0 when both are 0).

    """

    exact_set: bool
    ranking_exact: bool | None
    precision: float
    recall: float
    f1: float


@dataclass(frozen=True)
class CaseScore:
    """Everything measured for one question run; JSON-serialisable via :meth:`to_dict`.

    Attributes:
        case_id: the benchmark case id.
        variant: the architecture variant (FULL, POSTGIS, NO_STCA, NO_PLANNER, BASE).
        repeat: 0-based repeat index of the run.
        difficulty: ``easy``, ``medium`` or ``hard``.
        category: the case's category.
        answer_type: the contracted answer type.
        outcome: ``answered``, ``rejected``, ``failed``, ``error`` (the log's outcome) or
            ``no_answer`` when there is neither an answer nor a log.
        answered: the pipeline produced a final answer.
        answer_type_ok: the answer has the contracted answer type.
        schema_valid: the payload validates against the answer type's JSON Schema.
        ssa: Strict Structured Accuracy of this case (correct or not).
        reason: why it is not correct (empty when correct).
        exact_set: list questions: Exact Set Match; None for other answer types.
        ranking_exact: ranked lists: Ranking Exact Match; None otherwise.
        entity_precision: list questions: entity precision; None otherwise.
        entity_recall: list questions: entity recall; None otherwise.
        entity_f1: list questions: entity F1; None otherwise.
        requires_sandbox: ground truth: the reference program runs Python.
        routed_to_sandbox: the run invoked the Python sandbox (from its trace).
        failed_calls: failed model calls and tool uses of the run.
        guardrail_retries: framework-level recovery transitions (revise, repair, replan).
        first_path_success: correct with no failed call and no guardrail retry (FEPSR term).
        time_s: end-to-end time of the run (s).
        prompt_tokens: prompt tokens over all model calls.
        completion_tokens: completion tokens over all model calls.
        total_tokens: prompt + completion tokens.
        root_cause: a :class:`RootCause` value for a failure where one can be told, else None.

    """

    case_id: str
    variant: str
    repeat: int
    difficulty: str
    category: str
    answer_type: str
    outcome: str
    answered: bool
    answer_type_ok: bool
    schema_valid: bool
    ssa: bool
    reason: str
    exact_set: bool | None
    ranking_exact: bool | None
    entity_precision: float | None
    entity_recall: float | None
    entity_f1: float | None
    requires_sandbox: bool
    routed_to_sandbox: bool
    failed_calls: int
    guardrail_retries: int
    first_path_success: bool
    time_s: float
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    root_cause: str | None

    def to_dict(self) -> dict[str, Any]:
        """The score as plain JSON data (for resume files and the report)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CaseScore:
        """A score from :meth:`to_dict` output.

        Raises:
            ValueError: a field is missing (the file is from another version).

        """
        names = [field.name for field in dataclasses.fields(cls)]
        missing = [name for name in names if name not in data]
        if missing:
            raise ValueError(f"a case score needs {missing}")
        return cls(**{name: data[name] for name in names})


# --- units -----------------------------------------------------------------------------------

_M2_PER_MI2 = 1609.344**2

#: unit alias -> (dimension, factor to the dimension's base unit: m, m², ratio, degree).
UNITS: dict[str, tuple[str, float]] = {
    **dict.fromkeys(("m", "metre", "metres", "meter", "meters"), ("length", 1.0)),
    **dict.fromkeys(("km", "kilometre", "kilometres", "kilometer", "kilometers"),
                    ("length", 1000.0)),
    **dict.fromkeys(("cm", "centimetre", "centimetres", "centimeter", "centimeters"),
                    ("length", 0.01)),
    **dict.fromkeys(("mm", "millimetre", "millimetres", "millimeter", "millimeters"),
                    ("length", 0.001)),
    **dict.fromkeys(("mi", "mile", "miles"), ("length", 1609.344)),
    **dict.fromkeys(("ft", "foot", "feet"), ("length", 0.3048)),
    **dict.fromkeys(("m2", "sq m", "square metre", "square metres", "square meter",
                     "square meters"), ("area", 1.0)),
    **dict.fromkeys(("km2", "sq km", "sqkm", "square kilometre", "square kilometres",
                     "square kilometer", "square kilometers"), ("area", 1e6)),
    **dict.fromkeys(("ha", "hectare", "hectares"), ("area", 1e4)),
    **dict.fromkeys(("mi2", "sq mi", "sqmi", "square mile", "square miles"),
                    ("area", _M2_PER_MI2)),
    **dict.fromkeys(("ratio", "fraction", "proportion", "share"), ("fraction", 1.0)),
    **dict.fromkeys(("%", "percent", "percentage", "pct"), ("fraction", 0.01)),
    **dict.fromkeys(("degree", "degrees", "deg", "°", "decimal degrees"), ("angle", 1.0)),
}

#: Field-name suffixes that state a unit (``distance_km``, ``area_m2``, ``change_pct``).
NAME_SUFFIX_UNITS = {
    "m": "m", "km": "km", "mm": "mm", "mi": "mi", "ft": "ft",
    "m2": "m2", "km2": "km2", "sqkm": "km2", "ha": "ha", "sqmi": "mi2",
    "pct": "%", "percent": "%",
}


def unit_of(text: str | None) -> tuple[str, float] | None:
    """``(dimension, factor to base)`` of a unit name, or None when it is not convertible.

    >>> unit_of("km²"), unit_of("Percent"), unit_of("count")
    (('area', 1000000.0), ('fraction', 0.01), None)
    """
    if not text:
        return None
    key = text.strip().lower().replace("²", "2").replace("^2", "2")
    return UNITS.get(key)


def unit_factor(expected_unit: str | None, actual_unit: str | None) -> float | None:
    """Factor turning a value in ``actual_unit`` into ``expected_unit``.

    1.0 when either unit is unstated or not a convertible one (counts, USD, rates: compared
    as given); None when both are known but measure different things (degrees for metres).

    >>> unit_factor("km", "m"), unit_factor("%", "ratio"), unit_factor("m", "degrees")
    (0.001, 100.0, None)
    """
    expected, actual = unit_of(expected_unit), unit_of(actual_unit)
    if expected is None or actual is None:
        return 1.0
    if expected[0] != actual[0]:
        return None
    return actual[1] / expected[1]


def split_unit_suffix(name: str) -> tuple[str, str | None]:
    """``(stem, unit)`` of a field name ending in a unit suffix, else ``(name, None)``.

    A rate (``density_per_km2``, ``per_10k_km2``) states no unit of its own.

    >>> split_unit_suffix("distance_km"), split_unit_suffix("density_per_km2")
    (('distance', 'km'), ('density_per_km2', None))
    """
    stem, _, suffix = name.rpartition("_")
    is_rate = stem.lower() == "per" or "per_" in stem.lower() or stem.lower().endswith("_per")
    if stem and not is_rate and suffix.lower() in NAME_SUFFIX_UNITS:
        return stem, NAME_SUFFIX_UNITS[suffix.lower()]
    return name, None


def find_field(record: Mapping[str, Any], name: str) -> str | None:
    """The key of ``record`` holding the expected field ``name``, or None.

    Same name, then the same name in other letter case, then the same stem with another unit
    suffix of the same dimension (``distance_m`` for ``distance_km``).

    >>> find_field({"Distance_M": 5}, "distance_km")
    'Distance_M'
    """
    if name in record:
        return name
    lowered = {key.lower(): key for key in record}
    if name.lower() in lowered:
        return lowered[name.lower()]
    stem, unit = split_unit_suffix(name.lower())
    wanted = unit_of(unit)
    if wanted is None:
        return None
    for key in record:
        other_stem, other_unit = split_unit_suffix(key.lower())
        other = unit_of(other_unit)
        if other_stem == stem and other is not None and other[0] == wanted[0]:
            return key
    return None


# --- values and ids --------------------------------------------------------------------------

def is_number(value: Any) -> bool:
    """True for int/float values that are not booleans."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def ids_exact(expected: Any, actual: Any) -> bool:
    """Entity ids match exactly: same type (text or integer) and same value.

    >>> ids_exact(7, 7), ids_exact(7, "7"), ids_exact("06075", "6075"), ids_exact(7, 7.0)
    (True, False, False, False)
    """
    return id_key(expected) == id_key(actual)


def id_key(value: Any) -> tuple[str, Any]:
    """A hashable key of an id that keeps its type (``7`` and ``"7"`` differ)."""
    if isinstance(value, tuple):
        return ("tuple", tuple(id_key(item) for item in value))
    if isinstance(value, list | dict):
        return (type(value).__name__, repr(value))
    return (type(value).__name__, value)


def is_id_field(name: str) -> bool:
    """True for fields holding identifiers (compared exactly, never within tolerance).

    >>> is_id_field("cell_id"), is_id_field("county_fips"), is_id_field("population")
    (True, True, False)
    """
    lowered = name.lower()
    return (lowered in {"id", "iata", "iso_a3", "gid", "fid"} or lowered.endswith("_id")
            or "fips" in lowered)


def value_verdict(
    expected: Any, actual: Any, tolerance: Tolerance, *, factor: float | None = 1.0,
    where: str = "value",
) -> Verdict:
    """Compare one value: numbers after unit conversion within tolerance, the rest exactly.

    ``factor`` converts ``actual`` into the expected unit (see :func:`unit_factor`); None
    means the units measure different things, a field-semantics failure before any number.

    >>> value_verdict(20.2, 20200.0, Tolerance(abs=0.1), factor=0.001).matches
    True
    >>> value_verdict(20.2, 20200.0, Tolerance(abs=0.1)).kind
    'scale'
    >>> value_verdict(20.2, 21.0, Tolerance(abs=0.1)).kind
    'value'
    """
    if factor is None:
        return Verdict(False, f"{where}: its unit measures something else than expected", "unit")
    if is_number(expected):
        if not is_number(actual):
            return Verdict(False, f"{where}: expected the number {expected!r}, got {actual!r}",
                           "value")
        converted = float(actual) * factor
        if numbers_match(float(expected), converted, tolerance):
            return CORRECT
        shown = f"{actual!r}" if factor == 1.0 else f"{actual!r} (= {converted:.6g} normalized)"
        reason = (f"{where}: expected {expected!r}, got {shown} "
                  f"(tolerance abs {tolerance.abs}, rel {tolerance.rel})")
        slip = unit_slip(float(expected), converted, tolerance)
        if slip is not None:
            kind: FailureKind = "percent" if slip in (100.0, 0.01) else "scale"
            return Verdict(False, f"{reason}; off by a factor {slip:g}: a unit slip", kind)
        return Verdict(False, reason, "value")
    if type(expected) is not type(actual) or expected != actual:
        return Verdict(False, f"{where}: expected {expected!r}, got {actual!r}", "value")
    return CORRECT


#: Factors that turn a right number into a wrong one by a unit slip (km/m, km²/m², %/ratio).
UNIT_SLIPS = (1e3, 1e-3, 1e6, 1e-6, 100.0, 0.01)


def unit_slip(expected: float, actual: float, tolerance: Tolerance) -> float | None:
    """The factor ``f`` of :data:`UNIT_SLIPS` with ``actual / f`` matching ``expected``, if any.

    >>> unit_slip(0.25, 25.0, Tolerance(abs=1e-6)), unit_slip(1.0, 3.0, Tolerance())
    (100.0, None)
    """
    if expected == 0 or actual == 0:
        return None
    for factor in UNIT_SLIPS:
        if numbers_match(expected, actual / factor, tolerance):
            return factor
    return None


def field_verdict(
    expected_record: Mapping[str, Any], actual_record: Mapping[str, Any], tolerance: Tolerance,
    *, case_unit: str | None, actual_units: Mapping[str, str], default_unit: str | None,
    where: str = "",
) -> Verdict:
    """Every expected field is in ``actual_record`` with a matching value (extras allowed).

    Semantics first: a missing field or a unit of another dimension fails before numbers are
    looked at. The expected unit of a field is its name suffix, else ``case_unit``; the
    answer's unit is ``actual_units[key]``, else its key's suffix, else ``default_unit``.
    Id fields (:func:`is_id_field`) are compared exactly.
    """
    for name, want in expected_record.items():
        key = find_field(actual_record, name)
        if key is None:
            return Verdict(False, f"{where}field {name!r} missing; the answer has "
                                  f"{sorted(actual_record)[:12]}", "field")
        got = actual_record[key]
        if is_id_field(name):
            if not ids_exact(want, got):
                return Verdict(False, f"{where}{name}: id {want!r} given as {got!r}", "value")
            continue
        expected_unit = split_unit_suffix(name)[1] or case_unit
        actual_unit = actual_units.get(key) or split_unit_suffix(key)[1] or default_unit
        verdict = value_verdict(want, got, tolerance,
                                factor=unit_factor(expected_unit, actual_unit),
                                where=f"{where}{name}")
        if not verdict.matches:
            return verdict
    return CORRECT


# --- per answer type -------------------------------------------------------------------------

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


def _list_in(payload: Any, key: str) -> list[Any] | Verdict:
    if isinstance(payload, dict) and isinstance(payload.get(key), list):
        return list(payload[key])
    return Verdict(False, f"a list answer needs data_payload.{key} (a list)", "field")


def _entity_id(item: Any, entity_field: str | None) -> Any:
    """The id of a list entry: a bare id, or ``id`` / the contract's entity field of a record."""
    if not isinstance(item, dict):
        return item
    if "id" in item:
        return item["id"]
    key = find_field(item, entity_field) if entity_field else None
    return item[key] if key is not None else None


def entity_ids(case: BenchmarkCase, payload: Any) -> list[Any] | Verdict:
    """The predicted entity ids of a list answer, in the answer's order."""
    answer_type = case.answer.answer_type
    projection = case.answer.projection
    if answer_type is AnswerType.ENTITY_LIST:
        items = _list_in(payload, "entities")
        if isinstance(items, Verdict):
            return items
        return [_entity_id(item, projection.entity_field) for item in items]
    if answer_type is AnswerType.RANKED_LIST:
        ranked = ranked_items(payload)
        if isinstance(ranked, Verdict):
            return ranked
        return [_entity_id(item, projection.entity_field) for item in ranked]
    records = _list_in(payload, "records")
    if isinstance(records, Verdict):
        return records
    return [record_key(record, projection.key_fields) for record in records]


def expected_entity_ids(case: BenchmarkCase) -> list[Any]:
    """The verified entity ids of a list case, in the expected order."""
    value = case.expected.value or []
    answer_type = case.answer.answer_type
    if answer_type is AnswerType.ENTITY_LIST:
        return list(value)
    if answer_type is AnswerType.RANKED_LIST:
        return [item["id"] for item in value]
    return [record_key(record, case.answer.projection.key_fields) for record in value]


def record_key(record: Any, key_fields: Sequence[str]) -> Any:
    """The identity of a record: its key fields' values (one value, or a tuple of several)."""
    if not isinstance(record, dict):
        return None
    values = []
    for name in key_fields:
        key = find_field(record, name)
        values.append(record[key] if key is not None else None)
    return values[0] if len(values) == 1 else tuple(values)


def score_entity_list(case: BenchmarkCase, payload: Any) -> Verdict:
    """Plain list rule: exactly the expected entities (ids exact), none missing, none extra."""
    ids = entity_ids(case, payload)
    if isinstance(ids, Verdict):
        return ids
    return set_verdict(expected_entity_ids(case), ids)


def set_verdict(expected: Sequence[Any], actual: Sequence[Any]) -> Verdict:
    """No missing, extra or repeated entity (ids compared by :func:`id_key`).

    >>> set_verdict(["A", "B"], ["A", "B", "C"]).reason
    "extra ['C']"
    """
    keys = [id_key(value) for value in actual]
    if len(set(keys)) != len(keys):
        return Verdict(False, "the answer lists an entity more than once", "entities")
    wanted = {id_key(value): value for value in expected}
    given = dict(zip(keys, actual, strict=True))
    missing = [wanted[key] for key in wanted if key not in given]
    extra = [given[key] for key in given if key not in wanted]
    if missing or extra:
        parts = ([f"missing {missing[:10]!r}"] if missing else []) + (
            [f"extra {extra[:10]!r}"] if extra else [])
        return Verdict(False, ", ".join(parts), "entities")
    return CORRECT


def ranked_items(payload: Any) -> list[Any] | Verdict:
    """The entries of a ranked answer ordered by ``rank`` (list order when ranks are absent)."""
    items = _list_in(payload, "items")
    if isinstance(items, Verdict):
        return items
    if items and all(isinstance(i, dict) and is_number(i.get("rank")) for i in items):
        return sorted(items, key=lambda item: item["rank"])
    return items


def score_ranked_list(case: BenchmarkCase, payload: Any) -> Verdict:
    """Ranked rule: same entities in the expected order, each with its own value.

    Entries whose expected values are equal (ties) may come in either order.
    """
    projection = case.answer.projection
    items = ranked_items(payload)
    if isinstance(items, Verdict):
        return items
    expected: list[dict[str, Any]] = list(case.expected.value or [])
    ids = [_entity_id(item, projection.entity_field) for item in items]
    entities = set_verdict([want["id"] for want in expected], ids)
    if not entities.matches:
        return entities
    default_unit = payload.get("unit") if isinstance(payload.get("unit"), str) else None
    by_id = {id_key(want["id"]): want for want in expected}
    for rank, (want, item, got_id) in enumerate(zip(expected, items, ids, strict=True), 1):
        matched = by_id[id_key(got_id)]
        if not (ids_exact(want["id"], got_id) or _tied(want, matched)):
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


def _tied(want: Mapping[str, Any], other: Mapping[str, Any]) -> bool:
    return "value" in want and "value" in other and want["value"] == other["value"]


def score_records(case: BenchmarkCase, payload: Any) -> Verdict:
    """Records rule: one answer record per expected key (exact), fields checked per record."""
    projection = case.answer.projection
    records = _list_in(payload, "records")
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

LIST_TYPES = frozenset({AnswerType.ENTITY_LIST, AnswerType.RANKED_LIST, AnswerType.RECORDS})


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


def list_match(case: BenchmarkCase, payload: Any) -> ListMatch | None:
    """Exact Set, Ranking Exact and entity P/R/F1 of a list case (None for other types).

    A payload without a readable list counts as predicting no entity.
    """
    if case.answer.answer_type not in LIST_TYPES:
        return None
    expected = expected_entity_ids(case)
    predicted = entity_ids(case, payload)
    if isinstance(predicted, Verdict):
        predicted = []
    wanted = {id_key(value) for value in expected}
    given = {id_key(value) for value in predicted}
    hits = len(wanted & given)
    precision = hits / len(given) if given else (1.0 if not wanted else 0.0)
    recall = hits / len(wanted) if wanted else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    ranking = None
    if case.answer.answer_type is AnswerType.RANKED_LIST:
        ranking = given == wanted and len(predicted) == len(expected) and \
            _order_verdict(case, predicted).matches
    return ListMatch(exact_set=given == wanted and len(predicted) == len(given),
                     ranking_exact=ranking, precision=precision, recall=recall, f1=f1)


def _order_verdict(case: BenchmarkCase, predicted: Sequence[Any]) -> Verdict:
    expected: list[dict[str, Any]] = list(case.expected.value or [])
    by_id = {id_key(want["id"]): want for want in expected}
    for rank, (want, got) in enumerate(zip(expected, predicted, strict=True), 1):
        matched = by_id.get(id_key(got))
        if matched is None or not (ids_exact(want["id"], got) or _tied(want, matched)):
            return Verdict(False, f"rank {rank}: expected {want['id']!r}, got {got!r}", "order")
    return CORRECT


# --- trace -----------------------------------------------------------------------------------

def routed_to_sandbox(log: ExecutionLog | None) -> bool:
    """The run invoked the Python sandbox: a sandbox tool use or a Python route in its log."""
    if log is None:
        return False
    return log.route == "sql_then_python" or any(e.tool == "sandbox" for e in log.tool_trace)


def run_seconds(log: ExecutionLog | None) -> float:
    """End-to-end time of the run from its stage timings (s; 0 without a log)."""
    if log is None:
        return 0.0
    return sum(stage.duration_ms for stage in log.stages) / 1000.0


_ROLE_CAUSES = {
    "intent": RootCause.INTENT, "planner": RootCause.PLANNING_ROUTING,
    "sql": RootCause.SQL_LOGIC, "compute": RootCause.COMPUTATION,
    "reviewer": RootCause.SQL_LOGIC, "answer": RootCause.ANSWER_PROJECTION,
}
_STAGE_CAUSES = (
    ("intent", RootCause.INTENT), ("schema", RootCause.SCHEMA_GROUNDING),
    ("plan", RootCause.PLANNING_ROUTING), ("sql", RootCause.SQL_LOGIC),
    ("python", RootCause.COMPUTATION), ("review", RootCause.SQL_LOGIC),
    ("answer", RootCause.ANSWER_PROJECTION),
)
_ARTIFACT_SANDBOX_KINDS = ("missing_field", "protocol")


def tool_failure_cause(tool: str, detail: str) -> RootCause:
    """Root cause of a failed tool use, from its tool name and detail text.

    >>> tool_failure_cause("executor", "undefined_column error at line 1, col 8: ...").value
    'schema_grounding'
    >>> tool_failure_cause("sandbox", "missing_field: KeyError 'pop'").value
    'artifact_spatial_semantics'
    """
    if tool == "executor":
        if detail.startswith(("undefined_column", "undefined_table")):
            return RootCause.SCHEMA_GROUNDING
        return RootCause.SQL_LOGIC
    if tool == "guard":
        return (RootCause.PLANNING_ROUTING if "spatial_policy" in detail
                else RootCause.SQL_LOGIC)
    if tool == "sandbox":
        return (RootCause.ARTIFACT_SPATIAL if detail.startswith(_ARTIFACT_SANDBOX_KINDS)
                else RootCause.COMPUTATION)
    if tool == "export":
        return RootCause.ARTIFACT_SPATIAL
    if tool == "retriever":
        return RootCause.SCHEMA_GROUNDING
    return RootCause.ANSWER_PROJECTION


def trace_failure_cause(log: ExecutionLog) -> RootCause | None:
    """Cause of a run that ended without an answer, else None.

    Read from its last failed tool use, model call or stage: the failure recovery could not
    get past.
    """
    failures = [e for e in log.tool_trace if e.status != "ok"]
    if failures:
        return tool_failure_cause(failures[-1].tool, failures[-1].detail)
    calls = [c for c in log.model_calls if c.status != "ok"]
    if calls and calls[-1].role in _ROLE_CAUSES:
        return _ROLE_CAUSES[calls[-1].role]
    stages = [s.stage for s in log.stages if s.status != "ok"] or [s.stage for s in log.stages]
    for prefix, cause in _STAGE_CAUSES:
        if stages and stages[-1].startswith(prefix):
            return cause
    return None


def wrong_answer_cause(verdict: Verdict, log: ExecutionLog | None) -> RootCause:
    """Cause of a wrong final answer, from the kind of difference and the route taken.

    Shape, field and type problems and a percent/ratio slip are answer projection; a unit of
    another dimension (a distance in degrees) or a length/area unit slip is an
    artifact/spatial-semantics error; wrong entities or order come from SQL logic; other wrong
    numbers from the last stage that produced them (Python: computation).
    """
    if verdict.kind in ("contract", "field", "percent"):
        return RootCause.ANSWER_PROJECTION
    if verdict.kind in ("unit", "scale"):
        return RootCause.ARTIFACT_SPATIAL
    if verdict.kind == "value" and routed_to_sandbox(log):
        return RootCause.COMPUTATION
    return RootCause.SQL_LOGIC


def root_cause(
    case: BenchmarkCase, verdict: Verdict, log: ExecutionLog | None,
    evidence_matches: bool | None = None,
) -> RootCause | None:
    """Primary root cause of a failed case (None when correct or when it cannot be told).

    In trace order: an answerable question rejected as out of scope is an intent error; a run
    that chose the wrong channel (sandbox or not) is a planning/routing error; a run without
    an answer is blamed on its last failure; a wrong answer whose evidence was right
    (``evidence_matches``, when the caller could check it) is an answer-projection error;
    otherwise :func:`wrong_answer_cause`.
    """
    if verdict.matches:
        return None
    if log is None:
        return None if verdict.kind == "missing" else wrong_answer_cause(verdict, None)
    if log.outcome == "rejected":
        return RootCause.INTENT
    if routed_to_sandbox(log) != case.requires_sandbox:
        return RootCause.PLANNING_ROUTING
    if verdict.kind == "missing":
        return trace_failure_cause(log)
    if evidence_matches:
        return RootCause.ANSWER_PROJECTION
    return wrong_answer_cause(verdict, log)


def evidence_agrees(case: BenchmarkCase, output: Any) -> bool:
    """True when the run's evidence held the answer (for ``score_case(evidence_matches=...)``).

    ``output`` is the last step's output (records or object); it is projected by the case's
    answer contract and compared with the expected value within tolerance.

    >>> from geoask.bench.loader import DEFAULT_CASES_DIR, load_cases
    >>> evidence_agrees(load_cases(DEFAULT_CASES_DIR, ["airports-001"])[0].case,
    ...                 [{"airport_count": 209}])
    True
    """
    try:
        projected = project_answer(output, case.answer.answer_type, case.answer.projection)
    except ProjectionError:
        return False
    return compare_answers(case.expected.value, projected, case.answer.answer_type,
                           case.expected.tolerance).matches


# --- the case score --------------------------------------------------------------------------

def score_case(
    case: BenchmarkCase,
    answer: FinalAnswer | None,
    log: ExecutionLog | None,
    *,
    variant: str | None = None,
    repeat: int = 0,
    time_s: float | None = None,
    evidence_matches: bool | None = None,
) -> CaseScore:
    """Score one question run.

    Args:
        case: the verified case.
        answer: the pipeline's final answer; None when it produced none.
        log: the run's execution log (route, tool trace, tokens...); None when there is none.
        variant: the architecture variant (default: the log's variant, else ``FULL``).
        repeat: 0-based repeat index.
        time_s: the end-to-end wall time the caller measured (s); default: the log's stages.
        evidence_matches: whether the run's last-step output, projected with the case's
            contract, equals the expected value (lets a wrong answer over right evidence be
            blamed on answer projection); None when unknown.

    """
    payload = answer.data_payload if answer is not None else None
    answer_type = answer.answer_type if answer is not None else None
    verdict = judge_answer(case, answer_type, payload)
    lists = list_match(case, payload) if answer is not None else _empty_list_match(case)
    calls = log.model_calls if log is not None else []
    prompt = sum(call.prompt_tokens for call in calls)
    completion = sum(call.completion_tokens for call in calls)
    failed = log.failed_calls if log is not None else 0
    retries = log.guardrail_retries if log is not None else 0
    cause = root_cause(case, verdict, log, evidence_matches)
    return CaseScore(
        case_id=case.id,
        variant=variant or (log.variant if log is not None else "FULL"),
        repeat=repeat,
        difficulty=case.difficulty.value,
        category=case.category.value,
        answer_type=case.answer.answer_type.value,
        outcome=log.outcome if log is not None else ("answered" if answer else "no_answer"),
        answered=answer is not None,
        answer_type_ok=answer is not None and verdict.kind != "contract",
        schema_valid=answer is not None and not payload_errors(answer.answer_type, payload),
        ssa=verdict.matches,
        reason=verdict.reason,
        exact_set=lists.exact_set if lists else None,
        ranking_exact=lists.ranking_exact if lists else None,
        entity_precision=lists.precision if lists else None,
        entity_recall=lists.recall if lists else None,
        entity_f1=lists.f1 if lists else None,
        requires_sandbox=case.requires_sandbox,
        routed_to_sandbox=routed_to_sandbox(log),
        failed_calls=failed,
        guardrail_retries=retries,
        first_path_success=verdict.matches and failed == 0 and retries == 0,
        time_s=float(time_s) if time_s is not None and math.isfinite(time_s)
        else run_seconds(log),
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=prompt + completion,
        root_cause=cause.value if cause is not None else None,
    )


def _empty_list_match(case: BenchmarkCase) -> ListMatch | None:
    if case.answer.answer_type not in LIST_TYPES:
        return None
    ranking = False if case.answer.answer_type is AnswerType.RANKED_LIST else None
    empty = not case.expected.value
    return ListMatch(exact_set=False, ranking_exact=ranking, precision=0.0,
                     recall=1.0 if empty else 0.0, f1=0.0)
