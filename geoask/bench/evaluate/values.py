"""Comparing one value, or the fields of one record, with the expected one: a :class:`Verdict`.

Numbers are compared after unit conversion within the case's tolerance (a miss by a unit slip
such as km/m or percent/ratio is told apart); ids and text exactly (``7`` is not ``"7"``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from geoask.bench.compare import numbers_match
from geoask.bench.evaluate.units import find_field, split_unit_suffix, unit_factor
from geoask.cases.model import Tolerance

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
