"""Rule: the policies hold on PostgreSQL's own reading of the statement too.

sqlglot's rules judge sqlglot's tree; this rule judges the tree the server's grammar builds
(:mod:`geoask.sql.pgview`, libpg_query through pglast) by the same policies. It holds no policy
of its own: it is the shared driver that runs each rule's check on PostgreSQL's reading (the
``<rule>_pg`` function of its module) in the order of :data:`geoask.sql.policies.POLICY_RULES`.
Each failure is reported under the name of that rule, so a verdict names the policy, not the parser;
text PostgreSQL's parser refuses is reported under ``parses``.
"""

from __future__ import annotations

from collections.abc import Iterator

from geoask.sql.context import GuardContext
from geoask.sql.parsing import ParsedQuery
from geoask.sql.pgview import PgParseFailure, PgView
from geoask.sql.policies import POLICY_RULES
from geoask.sql.rule import PostgresCheck
from geoask.sql.violation import GuardViolation, PgViolation

RULE = "postgres_view"


def postgres_view(query: ParsedQuery, context: GuardContext) -> GuardViolation | None:
    """Judge PostgreSQL's parse of ``query`` by every rule's check on it; the first failure.

    >>> from geoask.sql.parsing import parse_query
    >>> postgres_view(parse_query("SELECT a.st_asgeojson FROM demo.airports a"),
    ...               GuardContext()).rule
    'allowed_functions'
    >>> postgres_view(parse_query("SELECT oid::regrole FROM t"), GuardContext()).rule
    'no_system_catalogs'
    >>> postgres_view(parse_query("SELECT name FROM demo.airports"), GuardContext()) is None
    True
    """
    view = query.pg
    if isinstance(view, PgParseFailure):
        return _at(query, "parses", f"PostgreSQL's parser refuses the statement "
                   f"({view.message}); write one plain SELECT query", view.location)
    return _first_failure(query, view, context)


def _first_failure(
    query: ParsedQuery, view: PgView, context: GuardContext
) -> GuardViolation | None:
    """The first rule check on ``view`` that fails, placed in ``query``'s text; or None."""
    for check in _postgres_checks():
        found = check(view, context)
        if found is not None:
            return _placed(query, found)
    return None


def _postgres_checks() -> Iterator[PostgresCheck]:
    """The policy rules' checks on PostgreSQL's reading, in the order of the rule tuple."""
    return (rule.check_pg for rule in POLICY_RULES if rule.check_pg is not None)


def _placed(query: ParsedQuery, found: PgViolation) -> GuardViolation:
    """``found`` with its line and column in the submitted text (its own fragment kept)."""
    located = _at(query, found.rule, found.description, found.location)
    return GuardViolation(found.rule, found.description, found.fragment, located.line, located.col)


def _at(query: ParsedQuery, rule: str, description: str, location: int) -> GuardViolation:
    """A violation at PostgreSQL's ``location`` (a byte offset into the UTF-8 text)."""
    if location < 0:
        return GuardViolation(rule, description)
    offset = len(query.text.encode()[:location].decode(errors="ignore"))
    line = query.text.count("\n", 0, offset) + 1
    col = offset - (query.text.rfind("\n", 0, offset) + 1) + 1
    fragment = " ".join(query.text[offset : offset + 60].split())
    return GuardViolation(rule, description, fragment, line, col)
