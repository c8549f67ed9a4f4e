"""Units and field names: what a unit measures and which answer field holds an expected one.

Field semantics come before numbers: an expected field is found under the same name, or the
same stem with another unit suffix of the same dimension (``distance_m`` for ``distance_km``),
and a value is converted into the expected unit (lengths via metres, areas via m², percent vs
ratio) only when both units measure the same thing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

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
