"""The SQL guard: parse twice, run the rules in order, then prepare the text that will run.

Design - two parsers, one verdict:

1. **Caps first.** Text longer than ``sql_max_chars``, empty, unlexable or nested too deeply is
   refused before any parser builds a tree (:func:`~geoask.sql.parsing.parse_query`).
2. **sqlglot** (PostgreSQL dialect) tokenizes and parses; its ordered rule pipeline
   (:data:`~geoask.sql.rules.RULES`, one rule per module, fixtures per rule) judges its tree,
   and the token rules judge text it cannot parse.
3. **PostgreSQL's own parser** (libpg_query 15 through ``pglast``: the grammar of the server
   that runs the query) parses the same text; :mod:`geoask.sql.pgview` reduces its tree to
   statements, calls, operators, casts, relations, attribute references and the outer LIMIT.
4. Rule ``postgres_view`` checks every policy again on that reading - one plain SELECT, no
   writes, no INTO/locks/placeholders/OPERATOR(), no system catalogs or ``reg*`` casts, the
   spatial policy, the function allow-list, no calls hidden in attribute notation, Top-K -
   reporting under the mirrored rule's name. Each rule module carries both of its checks
   (``<rule>`` and ``<rule>_pg``); ``postgres_view`` only runs the second ones in order.
5. Rule ``parsers_agree`` refuses the statement when the two readings differ in the functions
   called, operators applied, relations read or sensitive casts: a parser differential (a NUL
   byte, a no-break space, ``<@`` read as ``<``) can then only make the guard refuse, never
   let something through that a rule did not see.
6. Text that sqlglot cannot parse but PostgreSQL can (PostGIS operators such as ``&&&``,
   ``|=|``, ``<@>``) is accepted when the token rules, ``postgres_view`` and the token-level
   agreement all pass: the server's grammar decides syntax, the policies decide the rest.

The text that runs is always the submitted text - with identifiers quoted where the catalog
needs it and, without an outer LIMIT within the row cap, wrapped as
``SELECT * FROM (<submitted>) AS q LIMIT <row_cap + 1>``. Neither parser's regenerated SQL is
ever executed: it can change the meaning of PostGIS code.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp
from sqlglot.tokens import TokenType

from geoask.errors import QueryRejectedError
from geoask.sql.context import GuardContext
from geoask.sql.parsing import TOO_DEEP_DESCRIPTION, ParsedQuery, parse_query
from geoask.sql.pgview import PgView
from geoask.sql.rules import RULES
from geoask.sql.rules.query_only import query_root
from geoask.sql.violation import GuardViolation

WRAP_PREFIX = "SELECT * FROM (\n"


@dataclass(frozen=True)
class CheckedQuery:
    """A statement that passed every rule, ready for the executor.

    Attributes:
        submitted_sql: the SQL as submitted.
        sql: the SQL to execute (submitted text, identifiers quoted, maybe wrapped).
        row_limit_added: True if the wrapper ``SELECT * FROM (...) AS q LIMIT n`` was added.
        row_cap: most rows a result may have; the wrapper asks for one more, so a larger result
            is refused (never cut).
        quoted_identifiers: catalog names that were quoted, in order of appearance.
        body_offset: characters before the submitted text inside ``sql`` (to map server
            error positions back to the submitted text).

    """

    submitted_sql: str
    sql: str
    row_limit_added: bool
    row_cap: int
    quoted_identifiers: tuple[str, ...] = ()
    body_offset: int = 0


# sqlglot walks trees recursively; a tree deeper than Python's recursion limit allows is refused
# rather than half-checked (parse_query already refuses nesting past MAX_PAREN_DEPTH).
TOO_DEEP = GuardViolation("parses", TOO_DEEP_DESCRIPTION)


def find_violation(sql: str, context: GuardContext) -> GuardViolation | None:
    """Run the rules on ``sql`` and return the first failure, or None if it passes.

    >>> find_violation("SELECT 1; DROP TABLE t", GuardContext()).rule
    'single_statement'
    """
    try:
        query = parse_query(sql, context.max_sql_chars)
        return first_violation(query, context)
    except QueryRejectedError as error:
        return GuardViolation(error.rule, error.description, error.fragment, error.line, error.col)
    except RecursionError:
        return TOO_DEEP


def check_sql(sql: str, context: GuardContext) -> CheckedQuery:
    """Check ``sql`` and return what to execute.

    >>> check_sql("SELECT name FROM demo.airports", GuardContext(row_cap=10)).sql.splitlines()[-1]
    ') AS q LIMIT 11'

    Raises:
        QueryRejectedError: a rule failed (``rule``, ``description``, ``fragment``, ``line``,
            ``col`` say which and where).

    """
    try:
        query = parse_query(sql, context.max_sql_chars)
        violation = first_violation(query, context)
    except RecursionError:
        violation = TOO_DEEP
    if violation is not None:
        raise violation.to_error()
    body, quoted = normalized_body(query, context.case_sensitive_names)
    if has_outer_limit_within(query, context.row_cap):
        return CheckedQuery(sql, body, False, context.row_cap, quoted, 0)
    wrapped = f"{WRAP_PREFIX}{body}\n) AS q LIMIT {context.row_cap + 1}"
    return CheckedQuery(sql, wrapped, True, context.row_cap, quoted, len(WRAP_PREFIX))


def first_violation(query: ParsedQuery, context: GuardContext) -> GuardViolation | None:
    """The first rule of :data:`~geoask.sql.rules.RULES` that ``query`` fails, or None.

    Text sqlglot could not parse is judged by :data:`~geoask.sql.rules.TOKEN_RULES` only
    (``parses`` among them, last).
    """
    for rule in RULES:
        if not query.parsed and not rule.tokens:
            continue
        violation = rule.check(query, context)
        if violation is not None:
            return violation
    return None


def has_outer_limit_within(query: ParsedQuery, row_cap: int) -> bool:
    """True if the outermost query has ``LIMIT n`` / ``FETCH FIRST n ROWS`` with ``n <= row_cap``.

    Decided on PostgreSQL's reading when there is one (it is what runs), else on sqlglot's.

    >>> from geoask.sql.parsing import parse_query
    >>> has_outer_limit_within(parse_query("SELECT a FROM t LIMIT 5"), 100)
    True
    >>> has_outer_limit_within(parse_query("SELECT a FROM t LIMIT ALL"), 100)
    False
    """
    if isinstance(query.pg, PgView):
        return query.pg.outer_limit is not None and 0 < query.pg.outer_limit <= row_cap
    limit = query_root(query.tree).args.get("limit")
    if isinstance(limit, exp.Limit):
        count = limit.expression
    elif isinstance(limit, exp.Fetch):
        count = limit.args.get("count")
    else:
        return False
    return (
        isinstance(count, exp.Literal)
        and not count.is_string
        and count.this.isdigit()
        and int(count.this) <= row_cap
    )


def normalized_body(
    query: ParsedQuery, case_sensitive_names: frozenset[str]
) -> tuple[str, tuple[str, ...]]:
    """The submitted text without trailing ``;`` and with case-sensitive catalog names quoted.

    An unquoted identifier whose lower-case form matches exactly one catalog name that has
    upper-case letters (``PopTotal``) is replaced by that name in double quotes; every other
    character of the submitted text is kept.
    """
    body_end = _body_end(query)
    by_folded: dict[str, list[str]] = {}
    for name in case_sensitive_names:
        if name != name.lower():
            by_folded.setdefault(name.lower(), []).append(name)
    replacements: list[tuple[int, int, str]] = []
    identifiers = [n for n in query.nodes if isinstance(n, exp.Identifier)] if query.parsed else []
    for identifier in identifiers:
        meta = identifier.meta or {}
        if identifier.quoted or "start" not in meta:
            continue
        start, end = meta["start"], meta["end"]
        written = query.text[start : end + 1]
        candidates = by_folded.get(written.lower(), [])
        if len(candidates) == 1 and end < body_end:
            replacements.append((start, end, candidates[0]))
    text = query.text[:body_end]
    quoted: list[str] = []
    for start, end, name in sorted(replacements, reverse=True):
        text = text[:start] + '"' + name.replace('"', '""') + '"' + text[end + 1 :]
        quoted.append(name)
    return text.rstrip(), tuple(reversed(quoted))


def _body_end(query: ParsedQuery) -> int:
    """Offset just past the statement: before its trailing semicolons (comments before kept)."""
    tokens = list(query.tokens)
    end = len(query.text)
    while tokens and tokens[-1].token_type == TokenType.SEMICOLON:
        end = tokens.pop().start
    return end
