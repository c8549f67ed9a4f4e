"""A failed guard rule: which rule, what is wrong, and where."""

from __future__ import annotations

from dataclasses import dataclass

from geoask.errors import QueryRejectedError


@dataclass(frozen=True)
class GuardViolation:
    """One rule failure, phrased so that an agent can act on it.

    Attributes:
        rule: the rule's name (its module and function name).
        description: what is wrong and what to write instead.
        fragment: the offending text, quoted from the submitted SQL where positions are known.
        line: 1-based line in the submitted SQL, or None.
        col: 1-based column in the submitted SQL, or None.

    """

    rule: str
    description: str
    fragment: str = ""
    line: int | None = None
    col: int | None = None

    def to_error(self) -> QueryRejectedError:
        """The violation as the user-facing :class:`~geoask.errors.QueryRejectedError`."""
        return QueryRejectedError(self.rule, self.description, self.fragment, self.line, self.col)


@dataclass(frozen=True)
class PgViolation:
    """One rule failure on PostgreSQL's reading, before it is placed in the submitted text.

    Attributes:
        rule: the rule's name (its module and function name).
        description: what is wrong and what to write instead.
        fragment: the offending construct as PostgreSQL named it (``pg_sleep(...)``).
        location: PostgreSQL's byte offset into the UTF-8 text, or -1 when unknown.

    """

    rule: str
    description: str
    fragment: str
    location: int = -1
