"""Rule: sqlglot could parse the text (the last rule: every rule that can judge tokens spoke first).

Empty text, text that does not tokenize and unbalanced or too deeply nested parentheses are
refused by :func:`~geoask.sql.parsing.parse_query` before any rule runs. What remains here is
text that tokenizes but that sqlglot cannot parse and that no token rule refused - for
PostgreSQL too it is almost always a syntax error (``SELECT NEXT VALUE FOR s``).
"""

from __future__ import annotations

from geoask.sql.context import GuardContext
from geoask.sql.parsing import ParsedQuery
from geoask.sql.pgview import PgView
from geoask.sql.violation import GuardViolation

RULE = "parses"


def parses(query: ParsedQuery, context: GuardContext) -> GuardViolation | None:
    """Report sqlglot's parse error, unless PostgreSQL's parser read the text.

    Text only PostgreSQL's grammar parses (``a &&& b``, ``a <@> b``) reaches this rule only
    after ``postgres_view`` judged the server's reading by every policy and ``parsers_agree``
    found sqlglot's tokens consistent with it; it is accepted.

    >>> from geoask.sql.parsing import parse_query
    >>> parses(parse_query("SELECT NEXT VALUE FOR s"), GuardContext()).rule
    'parses'
    >>> parses(parse_query("SELECT 1"), GuardContext()) is None
    True
    """
    return None if isinstance(query.pg, PgView) else query.parse_error
