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
