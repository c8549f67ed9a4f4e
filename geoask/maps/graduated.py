"""Graduated answer maps: a choropleth for zones, proportional symbols for points.

A ranked list or records with a numeric value (:mod:`geoask.maps.answer_values`) is drawn by
value, the same way in both maps: zones (and lines) coloured by class on matplotlib's
sequential ``YlOrRd`` colour map - one class per value up to :data:`MAX_CLASSES` distinct
values, else :data:`MAX_CLASSES` quantile classes - and points as circles whose **area** is
proportional to the value (values >= 0; negative values get class colours at a fixed size).
The legend lists every class with its value range and unit, or three symbol sizes.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

import numpy as np

from geoask.maps.answer_features import AnswerFeatures
from geoask.maps.answer_values import VALUE_COLUMN, number_text

MAX_CLASSES: Final = 5
COLOUR_MAP: Final = "YlOrRd"
MIN_RADIUS: Final = 4.0
MAX_RADIUS: Final = 18.0
FIXED_RADIUS: Final = 7.0
SYMBOL_COLOUR: Final = "#d62728"


@dataclass(frozen=True)
class ValueClass:
    """One legend row: a value range, its colour and its symbol radius (points, px)."""

    low: float
    high: float
    colour: str
    radius: float
    label: str


@dataclass(frozen=True)
class Graduation:
    """How values are drawn: choropleth classes or proportional symbols, with the legend rows.

    Attributes:
        kind: ``choropleth`` (colour by class) or ``symbols`` (circle area by value).
        classes: the legend rows, lowest values first.
        unit: the values' unit (``""`` if none).
        largest: the largest absolute value (sizes symbols).

    """

    kind: Literal["choropleth", "symbols"]
    classes: tuple[ValueClass, ...]
    unit: str
    largest: float

    def colour(self, value: float | None) -> str:
        """The fill of a feature with ``value`` (grey when it has none)."""
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return "#bdbdbd"
        if self.kind == "symbols":
            return SYMBOL_COLOUR
        return next((c.colour for c in self.classes if value <= c.high), self.classes[-1].colour)

    def radius(self, value: float | None) -> float:
        """A point's circle radius in pixels: area proportional to ``value`` (symbols)."""
        if self.kind != "symbols" or value is None or math.isnan(value) or self.largest <= 0:
            return FIXED_RADIUS
        return max(MIN_RADIUS, MAX_RADIUS * math.sqrt(max(value, 0.0) / self.largest))


def graduation(values: Sequence[float], unit: str, points: bool) -> Graduation:
    """The graduation of ``values`` (two or more; see the module docstring).

    >>> g = graduation([100.0, 200.0, 400.0], "m", points=False)
    >>> [c.label for c in g.classes], g.colour(200.0) == g.classes[1].colour
    (['100 m', '200 m', '400 m'], True)
    >>> s = graduation([100.0, 400.0], "", points=True)
    >>> s.kind, s.radius(400.0), s.radius(100.0)
    ('symbols', 18.0, 9.0)

    Raises:
        ValueError: fewer than two values.

    """
    finite = np.array([v for v in values if v is not None and math.isfinite(v)], dtype=float)
    if len(finite) < 2:
        raise ValueError(f"a graduated map needs two or more values, got {len(finite)}")
    suffix = f" {unit}" if unit else ""
    if points and finite.min() >= 0:
        shown = sorted({float(finite.min()), float(np.median(finite)), float(finite.max())})
        sizing = Graduation("symbols", (), unit, float(finite.max()))
        return Graduation("symbols", tuple(
            ValueClass(v, v, SYMBOL_COLOUR, sizing.radius(v), f"{number_text(v)}{suffix}")
            for v in shown), unit, sizing.largest)
    distinct = np.unique(finite)
    edges = distinct if len(distinct) <= MAX_CLASSES else np.unique(
        np.quantile(finite, np.linspace(0, 1, MAX_CLASSES + 1)))
    ranges = [(float(v), float(v)) for v in edges] if len(distinct) <= MAX_CLASSES else \
        [(float(lo), float(hi)) for lo, hi in itertools.pairwise(edges)]
    colours = _colours(len(ranges))
    classes = tuple(ValueClass(lo, hi, colour, FIXED_RADIUS,
                               f"{number_text(lo)}{suffix}" if lo == hi else
                               f"{number_text(lo)} to {number_text(hi)}{suffix}")
                    for (lo, hi), colour in zip(ranges, colours, strict=True))
    largest = float(np.abs(finite).max())
    return Graduation("choropleth", classes, unit, largest)


def answer_graduation(features: AnswerFeatures) -> Graduation | None:
    """The graduation of the answer's values (two or more), else None."""
    answer, field = features.answer, features.values
    if answer is None or field is None or VALUE_COLUMN not in answer:
        return None
    values = [float(v) for v in answer[VALUE_COLUMN] if v is not None and v == v]
    if len(values) < 2:
        return None
    points = bool(answer.geom_type.str.contains("Point").all())
    return graduation(values, field.unit, points)


def _colours(count: int) -> list[str]:
    from matplotlib import colormaps
    from matplotlib.colors import to_hex

    ramp = colormaps[COLOUR_MAP]
    return [to_hex(ramp(x)) for x in np.linspace(0.2, 0.95, count)]
