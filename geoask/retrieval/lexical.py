"""Lexical matching: exact table/column names, abbreviations, catalog values and years.

Embeddings miss exact identifiers ("FIPS", "SIDS", "gdpPercap", a place name, a year); this
module finds them. Terms are normalised (lower case, words split on non-alphanumerics) and
matched as whole word n-grams; short all-caps codes ("NC", "TX") and values read from the data
(place names) match case-sensitively, so that "in", "or" and "me" never match Indiana, Oregon
or Maine, nor "per person" Person County.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date

from geoask.catalog.model import Catalog, TemporalGranularity
from geoask.retrieval.filters import coverage_bounds, period_bounds

_WORD = re.compile(r"[A-Za-z0-9]+")
_YEAR = re.compile(r"\b(1[6-9]\d\d|20\d\d)\b")
_MONTHS = {m: i for i, m in enumerate(
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], 1)}
_MONTH_YEAR = re.compile(
    r"\b((?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?)\s+(1[6-9]\d\d|20\d\d)\b",
    re.IGNORECASE,
)
MAX_NGRAM = 5
_STOP = frozenset({"the", "and", "for", "per", "with", "from", "name", "year", "code", "type",
                   "value", "data", "total", "number", "count", "id", "geom", "yes", "no"})
STOP_WORDS = _STOP
"""Words too common in questions and schema text to match on."""


def stem(word: str) -> str:
    """Crude English singular of a lower-case word: 'counties' -> 'county'.

    Words of up to 3 letters and words ending in -ss, -us or -is are kept.
    """
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def normalise(text: str) -> str:
    """Lower-case singular words joined by spaces: 'US_states' -> 'us state'."""
    return " ".join(stem(w.lower()) for w in _WORD.findall(text))


def _ngrams(words: Sequence[str], n_max: int = MAX_NGRAM) -> set[str]:
    return {" ".join(words[i:i + n]) for n in range(1, n_max + 1)
            for i in range(len(words) - n + 1)}


@dataclass(frozen=True)
class LexicalHit:
    """A term of the question found in the catalog: the table, column (or None) and weight."""

    term: str
    table: str
    column: str | None
    weight: float


@dataclass
class Lexicon:
    """Exact terms of a catalog → the (table, column) they name; build with :func:`build_lexicon`.

    ``weight`` of a hit is 1 / number of tables the term names (a term in every table is no
    evidence for any), 0.5 / n for a year inside n tables' coverage, and 0.5 / n for a month
    ('September 1999') inside the coverage of n monthly or daily tables.
    """

    terms: dict[str, set[tuple[str, str | None]]] = field(default_factory=dict)
    exact_case: dict[str, set[tuple[str, str | None]]] = field(default_factory=dict)
    coverage: dict[str, tuple[int, int]] = field(default_factory=dict)
    month_coverage: dict[str, tuple[date, date]] = field(default_factory=dict)

    def match(self, question: str) -> list[LexicalHit]:
        """All lexical hits of ``question``, in a stable order."""
        words = normalise(question).split()
        found: dict[str, set[tuple[str, str | None]]] = {}
        for gram in sorted(_ngrams(words)):
            if gram in self.terms:
                found[gram] = self.terms[gram]
        for gram in sorted(_ngrams(_WORD.findall(question))):
            if gram in self.exact_case:
                found[gram] = self.exact_case[gram]
        hits: list[LexicalHit] = []
        for term, targets in sorted(found.items()):
            n_tables = len({t for t, _ in targets})
            hits += [LexicalHit(term, t, c, 1.0 / n_tables) for t, c in sorted(targets, key=str)]
        for year in sorted({int(y) for y in _YEAR.findall(question)}):
            tables = sorted(t for t, (lo, hi) in self.coverage.items() if lo <= year <= hi)
            hits += [LexicalHit(str(year), t, None, 0.5 / len(tables)) for t in tables]
        for month_name, year_text in _MONTH_YEAR.findall(question):
            first, last = period_bounds(f"{year_text}-{_MONTHS[month_name[:3].lower()]:02d}")
            tables = sorted(t for t, (lo, hi) in self.month_coverage.items()
                            if lo <= last and first <= hi)
            term = f"{month_name} {year_text}"
            hits += [LexicalHit(term, t, None, 0.5 / len(tables)) for t in tables]
        return hits


def _terms_of(value: str, proper_noun: bool = False) -> Iterable[tuple[str, bool]]:
    """(term, exact_case) pairs for one catalog or data string.

    Codes of 2-3 capitals and values read from the data (``proper_noun``: place names such as
    'Union' or 'Person' county) match only with their capitalisation; one-letter codes never.
    """
    value = value.strip()
    if len(value) < 2 or value.replace(".", "").replace("-", "").isdigit():
        return
    if proper_noun or (len(value) <= 3 and value.isupper()):
        words = _WORD.findall(value)
        if words and len(words) <= MAX_NGRAM:
            yield " ".join(words), True
        return
    term = normalise(value)
    if len(term) >= 3 and term not in _STOP:
        yield term, False


_SUB_ANNUAL = (TemporalGranularity.HOURLY, TemporalGranularity.DAILY, TemporalGranularity.WEEKLY,
               TemporalGranularity.MONTHLY)


def build_lexicon(
    catalog: Catalog, extra_values: Mapping[str, Iterable[str]] | None = None
) -> Lexicon:
    """Collect exact terms from ``catalog``: names, abbreviations, values, examples, coverage.

    ``extra_values`` maps 'table.column' to values read from the data (place names, categories;
    see :mod:`geoask.retrieval.values`); they match case-sensitively. Optional.
    """
    terms: dict[str, set[tuple[str, str | None]]] = defaultdict(set)
    exact: dict[str, set[tuple[str, str | None]]] = defaultdict(set)

    def add(value: str, table: str, column: str | None, proper_noun: bool = False) -> None:
        for term, exact_case in _terms_of(value, proper_noun):
            (exact if exact_case else terms)[term].add((table, column))

    coverage: dict[str, tuple[int, int]] = {}
    month_coverage: dict[str, tuple[date, date]] = {}
    for table in catalog.tables:
        add(table.name, table.name, None)
        if table.temporal_coverage is not None:
            first, last = coverage_bounds(table.temporal_coverage)
            coverage[table.name] = (first.year, last.year)
            if table.temporal_granularity in _SUB_ANNUAL:
                month_coverage[table.name] = (first, last)
        for column in table.columns:
            if "_" in column.name:  # one-word names ('city', 'month') are ordinary words
                add(column.name, table.name, column.name)
            for key, meaning in column.abbreviations.items():
                add(key, table.name, column.name)
                add(meaning, table.name, column.name)
            for value in column.values or []:
                if isinstance(value, str):
                    add(value, table.name, column.name)
            if column.example:
                for piece in re.split(r"[,;]", column.example):
                    add(piece.strip(" '\""), table.name, column.name)
    for key, values in (extra_values or {}).items():
        table_name, _, column_name = key.partition(".")
        for value in values:
            add(value, table_name, column_name or None, proper_noun=True)
    return Lexicon(terms=dict(terms), exact_case=dict(exact), coverage=coverage,
                   month_coverage=month_coverage)
