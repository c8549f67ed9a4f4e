"""What an answer map centres on, carried from the intent: the reference, relation, distance.

The intent (:class:`geoask.vocabulary.plan.Intent`) names the features a question measures
from (``topology.reference``: "JFK", "I-95"), the places it is about (``scope.places``: "Wake
County"), the spatial relation and its distance. :class:`MapFocus` is that part of the intent in
the form the answer maps (:mod:`geoask.maps`) use: the values that identify the reference
features in the run's layers, the predicate, and the distance in metres for the ring. The
question text is never read again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from geoask.vocabulary.plan import Intent, SpatialPredicate

_PARENTHESISED = re.compile(r"\(([^()]+)\)")
DISTANCE_PREDICATES = frozenset({SpatialPredicate.WITHIN_DISTANCE,
                                 SpatialPredicate.BEYOND_DISTANCE})
ZONE_PREDICATES = frozenset({SpatialPredicate.WITHIN, SpatialPredicate.CONTAINS,
                             SpatialPredicate.INTERSECTS, SpatialPredicate.TOUCHES})


@dataclass(frozen=True)
class MapFocus:
    """The reference features, relation and distance an answer map shows.

    Attributes:
        reference: values that may identify the reference features in a layer column (codes
            or names, as the intent states them), most specific first.
        predicate: the spatial relation between the answer and the reference.
        distance_m: the relation's distance in metres (the ring), if any.
        distance_label: the distance as stated ("50 km"), if any.

    """

    reference: tuple[str, ...] = ()
    predicate: SpatialPredicate = SpatialPredicate.NONE
    distance_m: float | None = None
    distance_label: str | None = None

    @property
    def ring(self) -> bool:
        """True when the map draws a distance ring around the reference."""
        return self.predicate in DISTANCE_PREDICATES and self.distance_m is not None

    @property
    def zone(self) -> bool:
        """True when the reference is a zone the answer lies in, contains or meets."""
        return self.predicate in ZONE_PREDICATES


def reference_keys(text: str | None) -> list[str]:
    """The values that may identify a named feature: the text, its parenthesised code, its name.

    >>> reference_keys("John F Kennedy International (JFK)")
    ['JFK', 'John F Kennedy International (JFK)', 'John F Kennedy International']
    >>> reference_keys("  ")
    []
    """
    if text is None or not text.strip():
        return []
    text = text.strip()
    codes = [m.strip() for m in _PARENTHESISED.findall(text) if m.strip()]
    bare = _PARENTHESISED.sub("", text).strip()
    return list(dict.fromkeys(k for k in [*codes, text, bare] if k))


def map_focus(intent: Intent | None) -> MapFocus:
    """The :class:`MapFocus` of ``intent`` (an empty focus without one).

    The reference values come from ``topology.reference``, then the places of the scope (as
    written and as resolved).
    """
    if intent is None:
        return MapFocus()
    topology = intent.topology
    keys = reference_keys(topology.reference)
    for place in intent.scope.places:
        keys += reference_keys(place.resolved_to) + reference_keys(place.mentioned)
    distance = topology.distance
    return MapFocus(
        reference=tuple(dict.fromkeys(keys)), predicate=topology.predicate,
        distance_m=distance.metres if distance is not None else None,
        distance_label=f"{distance.value:g} {distance.unit}" if distance is not None else None)
