"""The shape of a guard rule: one policy, checked on each parser's reading of the statement.

A rule module in :mod:`geoask.sql.rules` exports its check on sqlglot's reading - a function
named like the module - and, where the policy can be read on PostgreSQL's parse tree too, its
check on :class:`~geoask.sql.pgview.PgView`, named like the module with ``_pg``.
:class:`GuardRule` binds the two (and whether the rule can judge text sqlglot cannot parse) for
the ordered tuple :data:`geoask.sql.rules.RULES`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from geoask.sql.context import GuardContext
from geoask.sql.parsing import ParsedQuery
from geoask.sql.pgview import PgView
from geoask.sql.violation import GuardViolation, PgViolation

SqlglotCheck = Callable[[ParsedQuery, GuardContext], GuardViolation | None]
"""A rule's check on sqlglot's reading (tree and tokens) of a parsed query."""
PostgresCheck = Callable[[PgView, GuardContext], PgViolation | None]
"""A rule's check on PostgreSQL's reading (:class:`~geoask.sql.pgview.PgView`)."""


@dataclass(frozen=True)
class GuardRule:
    """One guard rule: its check on each reading, called like its sqlglot check.

    >>> from geoask.sql.parsing import parse_query
    >>> from geoask.sql.rules.no_row_locks import no_row_locks, no_row_locks_pg
    >>> rule = GuardRule(no_row_locks, no_row_locks_pg)
    >>> rule.__name__, rule(parse_query("SELECT 1 FOR UPDATE"), GuardContext()).rule
    ('no_row_locks', 'no_row_locks')

    Attributes:
        check: the check on sqlglot's reading; its name is the rule's name.
        check_pg: the check on PostgreSQL's reading, run by rule ``postgres_view``, or None.
        tokens: True if ``check`` also judges text sqlglot cannot parse (on its tokens);
            other checks are skipped for such text.

    """

    check: SqlglotCheck
    check_pg: PostgresCheck | None = None
    tokens: bool = False

    @property
    def __name__(self) -> str:
        """The rule's name: its module's and its sqlglot check's."""
        return self.check.__name__

    def __call__(self, query: ParsedQuery, context: GuardContext) -> GuardViolation | None:
        """Run the check on sqlglot's reading of ``query``."""
        return self.check(query, context)
