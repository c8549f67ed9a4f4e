"""A table's label column: the name people read beside the codes that identify its rows.

A catalog table may declare ``labels: {name: state_name, codes: [state_fips, state_abbr]}``:
``name`` is the column that names a row for people, ``codes`` the columns whose values answers
carry as identifiers (FIPS codes, postal abbreviations, IATA codes). The answer's terminal table
shows the name beside a code and the answer map draws the coded features
(:mod:`geoask.maps.key_lookup`); a code naming two different names is left unnamed, never
guessed. Kept apart from :mod:`geoask.catalog.model` (which re-exports :class:`Labels`) so each
module stays small.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Final

from pydantic import BaseModel, ConfigDict, Field

TEXT_TYPE: Final = re.compile(r"^\s*(text|character varying|varchar|character|char|bpchar|citext)"
                              r"\b", re.IGNORECASE)
INTEGER_TYPE: Final = re.compile(r"^\s*(smallint|integer|int|int2|int4|int8|bigint)\b",
                                 re.IGNORECASE)


class Labels(BaseModel):
    """The column naming a table's rows and the code columns it names (module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="The column that names a row for people, e.g. 'state_name'.")
    codes: list[str] = Field(min_length=1, description="Columns whose values identify a row in "
                             "answers, e.g. ['state_fips', 'state_abbr'].")

    @property
    def columns(self) -> set[str]:
        """Every column the labels name."""
        return {self.name, *self.codes}


def code_kind(type_name: str) -> type | None:
    """The Python type of the values a code column of ``type_name`` matches (None: neither).

    >>> code_kind("char(2)"), code_kind("bigint"), code_kind("double precision")
    (<class 'str'>, <class 'int'>, None)
    """
    if TEXT_TYPE.match(type_name):
        return str
    if INTEGER_TYPE.match(type_name):
        return int
    return None


def propose_labels(table: str, primary_key: Sequence[str], codes: Sequence[str],
                   columns: Mapping[str, str]) -> Labels | None:
    """The labels a catalog draft proposes for ``table``, or None when the columns do not say.

    Proposed only for a table whose rows one column identifies (a one-column primary key,
    holding text or integers) and exactly one text column names the row: ``name`` (also
    ``name_2``, ``NAME``), or ``<stem>_name``/``<stem>name`` whose stem is the key's
    (``canton_id``, ``areakey``), the last word of the table's name in the singular
    (``lux_cantons``; not ``field`` of ``sports_field_history``) or one of
    :data:`NAME_WORDS` (``full_name``) - not ``file_name`` or ``field_name``, which name
    something else. ``codes`` are the table's other one-column
    keys, listed after the primary key when they hold text or integers. Anything else is
    left to a person; and the lookup shows a name beside a code only when the code has one.

    >>> cols = {"canton_id": "integer", "canton_name": "text", "district_name": "text"}
    >>> propose_labels("lux_cantons", ["canton_id"], ["canton_id"], cols)
    Labels(name='canton_name', codes=['canton_id'])
    >>> propose_labels("eire_counties", ["name"], ["name"], {"name": "text"}) is None
    True
    >>> propose_labels("hydrant_attachments", ["attachment_id"], ["attachment_id"],
    ...                {"attachment_id": "bigint", "file_name": "text"}) is None
    True
    >>> propose_labels("sports_field_history", ["event_id"], ["event_id"],
    ...                {"event_id": "bigint", "field_name": "text"}) is None
    True
    """
    if len(primary_key) != 1 or code_kind(columns.get(primary_key[0], "")) is None:
        return None
    key = primary_key[0]
    stems = {KEY_WORD.sub("", key.lower()), _singular(table.lower().rpartition("_")[2]),
             *NAME_WORDS}
    names = [column for column, kind in columns.items()
             if column != key and code_kind(kind) is str
             and NAME_WORD.sub("", column.lower()) in stems | {""}
             and NAME_WORD.search(column.lower())]
    if len(names) != 1:
        return None
    others = [c for c in codes if c not in (key, names[0]) and code_kind(columns.get(c, ""))]
    return Labels(name=names[0], codes=[key, *others])


NAME_WORDS: Final = frozenset({"full", "common", "official", "display", "place", "feature"})
"""Stems of a column that names its own row whatever the table (``full_name``)."""
NAME_WORD: Final = re.compile(r"_?name(_?\d+|_[a-z]{2})?$")
"""``name`` at the end of a column's name, with a level or language suffix (``name_2``)."""
KEY_WORD: Final = re.compile(r"_?(id|key|code|fips|no|num|uid|gid)(_?\d+)?$")
"""A key column's ending (``canton_id`` -> ``canton``, ``areakey`` -> ``area``, ``id_2``)."""


def _singular(word: str) -> str:
    """``counties`` -> ``county``, ``cantons`` -> ``canton`` (English plurals, roughly)."""
    if word.endswith("ies"):
        return word[:-3] + "y"
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word
