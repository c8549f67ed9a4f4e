"""Candidate expansions of abbreviated column names (``pop8``, ``cmedv``, ``pct_ag``, ``medinc``).

``geoask catalog draft`` lists them as a column's ``abbreviation_candidates`` (token -> possible
expansions) for a person or the catalog agent (``--describe``) to confirm into
``abbreviations``; they are never written into a ``description``.

The heuristic, in full:

1. the name is split into tokens at ``_``, ``-``, spaces, digit runs and camelCase humps
   (``medInc80`` -> ``med``, ``inc``; digits are dropped);
2. a token found in :data:`ABBREVIATIONS` (common GIS, census and statistics abbreviations:
   ``rms``, ``bths``, ``sqft``, ``chg``, ``hh``, ``hu``, ``vac``, ``own``/``rent``...) gets its
   expansions;
3. a token that is a plain word of :data:`WORDS` gets nothing;
4. any other token is segmented into at most three pieces, each an abbreviation, a plain word
   or one of the few single letters of :data:`LETTERS`, with at most two single letters and at
   least one abbreviation of two or more letters (``medinc`` -> ``med`` + ``inc``; ``cmedv`` ->
   ``c`` + ``med`` + ``v``; ``trctcode`` -> ``trct`` + ``code``); of several segmentations the one
   with the fewest pieces wins. The abbreviation pieces get their expansions, keyed by piece;
5. a whole-name pattern of :data:`PATTERNS` (age bands: ``age_0_4``, ``a5_9``, ``age85plus``)
   adds the matched part with its expansion (``a5_9``: ``age 5 to 9 years``).

The tables live in the data file ``abbreviations.yaml`` beside this module (:data:`DATA_PATH`),
so a new abbreviation, plain word or pattern needs no code. A name that yields nothing
(``state_name``, ``precipitation_mm``) gets no candidates. No
well-kept library expands database column names (the PyPI packages found expand prose
abbreviations or extract "long form (SF)" pairs from text), hence this small data file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from geoask.base.capped_input import MAX_DOCUMENT_CHARS, read_capped_text
from geoask.base.yamlio import load_yaml
from geoask.errors import CatalogError

DATA_PATH = Path(__file__).with_name("abbreviations.yaml")
"""The data file: ``abbreviations``, ``words``, ``letters`` and ``patterns`` (extend it there)."""


@dataclass(frozen=True)
class NamePattern:
    r"""A regular expression on a whole lower-case column name and its expansion (``\1``...).

    >>> NamePattern(re.compile(r"a(\d+)_(\d+)"), r"age \1 to \2").match("pop_a5_9")
    ('a5_9', 'age 5 to 9')
    """

    regex: re.Pattern[str]
    expansion: str

    def match(self, name: str) -> tuple[str, str] | None:
        """(matched text without surrounding ``_``, expansion) of the first match, or None."""
        found = self.regex.search(name)
        if found is None:
            return None
        return found.group(0).strip("_"), found.expand(self.expansion)


def load_abbreviations(path: Path) -> dict[str, Any]:
    """The abbreviation data of ``path``; raises CatalogError naming the file if it is broken."""
    try:
        data = load_yaml(read_capped_text(path, MAX_DOCUMENT_CHARS,
                                           what=f"abbreviation file {path}"))
        return {
            "abbreviations": {str(k): tuple(map(str, v))
                              for k, v in data["abbreviations"].items()},
            "words": frozenset(map(str, data["words"])),
            "letters": {str(k): tuple(map(str, v)) for k, v in data["letters"].items()},
            "patterns": tuple(NamePattern(re.compile(p["pattern"]), str(p["expansion"]))
                              for p in data.get("patterns") or ()),
        }
    except (OSError, yaml.YAMLError, KeyError, TypeError, AttributeError, re.error) as error:
        raise CatalogError(f"abbreviation file {path} is invalid: "
                           f"{type(error).__name__}: {error}".splitlines()[0]) from None


_DATA = load_abbreviations(DATA_PATH)

ABBREVIATIONS: dict[str, tuple[str, ...]] = _DATA["abbreviations"]
"""Common abbreviations in GIS, census and statistics column names -> candidate expansions."""

WORDS: frozenset[str] = _DATA["words"]
"""Plain words that are not abbreviations but may be pieces of a run-together name."""

LETTERS: dict[str, tuple[str, ...]] = _DATA["letters"]
"""The single letters allowed as pieces of a run-together name (``cmedv``)."""

PATTERNS: tuple[NamePattern, ...] = _DATA["patterns"]
"""Whole-name patterns such as age bands (``age_0_4``, ``a5_9``, ``age85plus``)."""

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
    for pattern in PATTERNS:
        matched = pattern.match(name.lower())
        if matched is not None and matched[0] not in found:
            found[matched[0]] = [matched[1]]
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
