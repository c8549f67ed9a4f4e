"""Candidate expansions of abbreviated column names (``pop8``, ``cmedv``, ``pct_ag``, ``medinc``).

``geoask catalog draft`` lists them as a column's ``abbreviation_candidates`` (token -> possible
expansions) for a person or the catalog agent (``--describe``) to confirm into
``abbreviations``; they are never written into a ``description``.

The heuristic, in full:

1. the name is split into tokens at ``_``, ``-``, spaces, digit runs and camelCase humps
   (``medInc80`` -> ``med``, ``inc``; digits are dropped);
2. a token found in :data:`ABBREVIATIONS` (common GIS, census and statistics abbreviations)
   gets its expansions;
3. a token that is a plain word of :data:`WORDS` gets nothing;
4. any other token is segmented into at most three pieces, each an abbreviation, a plain word
   or one of the few single letters of :data:`LETTERS`, with at most two single letters and at
   least one abbreviation of two or more letters (``medinc`` -> ``med`` + ``inc``; ``cmedv`` ->
   ``c`` + ``med`` + ``v``; ``trctcode`` -> ``trct`` + ``code``); of several segmentations the one
   with the fewest pieces wins. The abbreviation pieces get their expansions, keyed by piece.

A name that yields nothing (``state_name``, ``precipitation_mm``) gets no candidates. No
well-kept library expands database column names (the PyPI packages found expand prose
abbreviations or extract "long form (SF)" pairs from text), hence this small table.
"""

from __future__ import annotations

import re
from functools import lru_cache

ABBREVIATIONS: dict[str, tuple[str, ...]] = {
    "abbr": ("abbreviation",), "ag": ("agriculture", "agricultural"),
    "addr": ("address",), "alt": ("altitude", "alternative"), "amt": ("amount",),
    "avg": ("average",), "bldg": ("building",), "blk": ("block",), "bg": ("block group",),
    "cap": ("capita", "capacity"), "cat": ("category",), "cnt": ("count",),
    "cnty": ("county",), "co": ("county", "company"), "cty": ("county", "city"),
    "ctry": ("country",), "cum": ("cumulative",), "dens": ("density",),
    "dept": ("department",), "desc": ("description",), "dist": ("distance", "district"),
    "div": ("division",), "dt": ("date",), "edu": ("education",), "elev": ("elevation",),
    "emp": ("employment", "employees"), "exp": ("expectancy", "expenditure"),
    "fam": ("family", "families"), "fips": ("Federal Information Processing Standards code",),
    "fem": ("female",), "fid": ("feature id",), "gdp": ("gross domestic product",),
    "geoid": ("geographic identifier",), "gid": ("geometry id",), "hh": ("household",),
    "hhld": ("household",), "hisp": ("Hispanic",), "ht": ("height",), "hu": ("housing units",),
    "inc": ("income", "incidence"), "ind": ("index", "industry"), "iso": ("ISO code",),
    "lat": ("latitude",), "lon": ("longitude",), "lng": ("longitude",), "long": ("longitude",),
    "max": ("maximum",), "med": ("median",), "min": ("minimum",), "mun": ("municipality",),
    "muni": ("municipality",), "nbr": ("number", "neighbour"), "no": ("number",),
    "num": ("number",), "occ": ("occupied", "occupation"), "pct": ("percent",),
    "perc": ("percent",), "pop": ("population",), "prcp": ("precipitation",),
    "precip": ("precipitation",), "prop": ("proportion", "property"), "pt": ("point",),
    "pov": ("poverty",), "rd": ("road",), "reg": ("region",), "rt": ("rate", "route"),
    "sq": ("square",), "st": ("state", "street"), "std": ("standard deviation", "standard"),
    "tmp": ("temperature",), "temp": ("temperature",), "tot": ("total",),
    "trct": ("tract",), "tr": ("tract",), "twp": ("township",), "unemp": ("unemployment",),
    "val": ("value",), "veh": ("vehicle",), "yr": ("year",), "zip": ("ZIP code",),
}
"""Common abbreviations in GIS, census and statistics column names -> candidate expansions."""

WORDS = frozenset((
    "age", "area", "bike", "bikes", "birth", "births", "black", "capacity", "case", "cases",
    "city", "class", "code", "count", "county", "crime", "date", "death", "deaths", "empty",
    "exposure", "family", "female", "geog", "geom", "geometry", "home", "id", "income", "index",
    "key", "land", "length", "level", "male", "males", "median", "name", "non", "own", "owner",
    "percent", "person", "population", "rate", "ratio", "road", "shape", "state", "station",
    "status", "total", "town", "tract", "type", "value", "water", "white", "year", "zone",
))
"""Plain words that are not abbreviations but may be pieces of a run-together name."""

LETTERS: dict[str, tuple[str, ...]] = {
    "c": ("corrected", "count"), "n": ("number",), "p": ("percent", "proportion"),
    "v": ("value",),
}
"""The single letters allowed as pieces of a run-together name (``cmedv``)."""

_SPLIT = re.compile(r"[_\-\s]+|\d+|(?<=[a-z])(?=[A-Z])")


def tokens(name: str) -> list[str]:
    """Lower-case tokens of a column name (split at ``_``, digits, camelCase; digits dropped).

    >>> tokens("pop8"), tokens("PCT_AG"), tokens("medInc80")
    (['pop'], ['pct', 'ag'], ['med', 'inc'])
    """
    return [t.lower() for t in _SPLIT.split(name) if t and t.isalpha()]


def candidates(name: str) -> dict[str, list[str]]:
    """Abbreviated pieces of column ``name`` -> candidate expansions (see the module).

    >>> candidates("pct_ag")
    {'pct': ['percent'], 'ag': ['agriculture', 'agricultural']}
    >>> candidates("cmedv")
    {'c': ['corrected', 'count'], 'med': ['median'], 'v': ['value']}
    >>> candidates("trctcode"), candidates("state_name")
    ({'trct': ['tract']}, {})
    """
    found: dict[str, list[str]] = {}
    for token in tokens(name):
        for piece in _pieces(token):
            expansions = ABBREVIATIONS.get(piece) or LETTERS.get(piece)
            if expansions and piece not in found:
                found[piece] = list(expansions)
    return found


def _pieces(token: str) -> tuple[str, ...]:
    """The token itself if it is a known abbreviation or word, else its best segmentation."""
    if token in ABBREVIATIONS or token in WORDS:
        return (token,)
    best = _segment(token, 3)
    if best is None:
        return ()
    letters = sum(len(p) == 1 for p in best)
    has_abbreviation = any(len(p) > 1 and p in ABBREVIATIONS for p in best)
    return best if letters <= 2 and has_abbreviation else ()


@lru_cache(maxsize=4096)
def _segment(text: str, pieces: int) -> tuple[str, ...] | None:
    """Fewest pieces (at most ``pieces``) from abbreviations, words and letters covering text."""
    if not text:
        return ()
    if pieces == 0:
        return None
    best: tuple[str, ...] | None = None
    for end in range(len(text), 0, -1):
        head = text[:end]
        if head not in ABBREVIATIONS and head not in WORDS and head not in LETTERS:
            continue
        rest = _segment(text[end:], pieces - 1)
        if rest is not None and (best is None or len(rest) + 1 < len(best)):
            best = (head, *rest)
    return best
