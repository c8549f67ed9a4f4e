"""Rule: sqlglot and PostgreSQL's own parser read the same functions, operators, casts, tables.

A guard that reads text differently from the server can be walked around (sqlglot#1268 read
``<@`` as ``<``; a NUL byte or a no-break space is whitespace to one reader and not the other).
``postgres_view`` already checks every policy on the server's reading; this rule refuses the
statement when the two readings differ, so no rule ever judged something the server does not run:

* every function PostgreSQL calls by name appears as ``name(`` in sqlglot's tokens, and every
  call sqlglot's tree names is one PostgreSQL makes (or SQL syntax it builds: ``COALESCE``);
* every operator PostgreSQL applies is one run of operator characters in sqlglot's tokens and,
  where sqlglot has a node for it, a node of that kind in sqlglot's tree;
* both read the same relations, and the same casts to spatial and ``reg*`` types.

Text sqlglot cannot parse is compared on the tokens only (the first two points).
"""

from __future__ import annotations

import re

from sqlglot import exp
from sqlglot.tokens import Token, TokenType

from geoask.sql.calls import function_calls
from geoask.sql.context import GuardContext
from geoask.sql.functions import SPATIAL_TYPE_NAMES
from geoask.sql.parsing import ParsedQuery, cast_type_name
from geoask.sql.pgview import PgView
from geoask.sql.rules.allowed_functions import NOT_CALL_BEFORE
from geoask.sql.rules.no_system_catalogs import CATALOG_TYPES
from geoask.sql.violation import GuardViolation

RULE = "parsers_agree"
# A word as PostgreSQL lexes an unquoted name (keywords such as LEFT/RIGHT are call names too).
_WORD = re.compile(r"[^\W\d][\w$]*")
#: Names sqlglot's tree gives calls that PostgreSQL's grammar builds as syntax, not FuncCall.
SYNTAX_CALL_NAMES = frozenset({
    "coalesce", "nullif", "greatest", "least", "row", "array", "any", "all", "some", "grouping",
    "exists", "cast", "extract", "substring", "position", "overlay", "trim", "current_date",
    "current_time", "current_timestamp", "localtime", "localtimestamp", "values", "in",
    "filter", "over", "within", "group", "lateral", "repeatable",
})
#: Calls PostgreSQL's grammar makes by name for syntax with no name in the text
#: (``a LIKE b ESCAPE c``, ``a SIMILAR TO b``).
IMPLICIT_CALLS = frozenset({"like_escape", "similar_to_escape"})
#: Characters PostgreSQL's lexer puts in operators.
OPERATOR_CHARS = frozenset("+-*/<>=~!@#%^&|`?")
#: sqlglot tree nodes for an operator PostgreSQL applies (others are checked on tokens only).
OPERATOR_NODES: dict[str, tuple[type[exp.Expr], ...]] = {
    "=": (exp.EQ,), "<>": (exp.NEQ,), "<": (exp.LT,), ">": (exp.GT,), "<=": (exp.LTE,),
    ">=": (exp.GTE,), "+": (exp.Add,), "-": (exp.Sub, exp.Neg), "*": (exp.Mul,),
    "/": (exp.Div,), "%": (exp.Mod,), "^": (exp.Pow,), "||": (exp.DPipe, exp.ArrayConcat),
    "<->": (exp.Distance,), "&&": (exp.ArrayOverlaps,), "@>": (exp.ArrayContainsAll,),
    "<@": (exp.ArrayContainedBy,), "->": (exp.JSONExtract, exp.JSONBExtract),
    "->>": (exp.JSONExtractScalar, exp.JSONBExtractScalar),
}
#: Operators PostgreSQL's grammar makes of the keywords ``[NOT] LIKE``/``ILIKE`` before ``ANY``,
#: ``SOME`` or ``ALL`` (``a NOT ILIKE ANY (...)`` is ``a !~~* ANY (...)``; plain ``a LIKE b``
#: is no operator in its reading): no operator characters in the text, but those keyword tokens
#: and, where sqlglot parses, the keyword's node (with its negation) over ``ANY``/``ALL``.
KEYWORD_LIKE_OPERATORS: dict[str, tuple[TokenType, type[exp.Expr], bool]] = {
    "~~": (TokenType.LIKE, exp.Like, False), "~~*": (TokenType.ILIKE, exp.ILike, False),
    "!~~": (TokenType.LIKE, exp.Like, True), "!~~*": (TokenType.ILIKE, exp.ILike, True),
}
QUANTIFIER_TOKENS = frozenset({TokenType.ANY, TokenType.SOME, TokenType.ALL})


def parsers_agree(query: ParsedQuery, context: GuardContext) -> GuardViolation | None:
    """Refuse a statement that sqlglot and PostgreSQL's parser read differently.

    >>> from geoask.sql.parsing import parse_query
    >>> parsers_agree(parse_query("SELECT a <@ b FROM t"), GuardContext()) is None
    True
    >>> parsers_agree(parse_query("SELECT count(*) FROM demo.airports"), GuardContext()) is None
    True
    """
    view = query.pg
    if not isinstance(view, PgView):
        return None
    difference = _call_difference(query, view) or _operator_difference(query, view)
    if difference is None and query.parsed:
        difference = _tree_difference(query, view)
    if difference is None:
        return None
    return GuardViolation(
        RULE,
        f"the guard's parser and PostgreSQL's read the statement differently ({difference}); "
        "write it in plain, unambiguous SELECT syntax (spaces around operators, ASCII "
        "whitespace, no unusual quoting)",
        difference,
    )


def token_call_names(tokens: tuple[Token, ...]) -> frozenset[str]:
    """Names written as calls (``name(``) in sqlglot's tokens, folded as the server folds them.

    Any word before ``(`` counts (keywords such as ``LEFT`` are function names to
    PostgreSQL), except after ``AS`` (alias column lists ``AS g(n)``) and TABLESAMPLE.

    >>> from sqlglot.dialects.postgres import Postgres
    >>> sorted(token_call_names(tuple(Postgres().tokenize('SELECT count(*), "Lower"(x)'))))
    ['Lower', 'count']
    """
    names: set[str] = set()
    for index, token in enumerate(tokens[:-1]):
        if tokens[index + 1].token_type != TokenType.L_PAREN:
            continue
        quoted = token.token_type == TokenType.IDENTIFIER
        if not quoted and not _WORD.fullmatch(token.text):
            continue
        if index and tokens[index - 1].token_type in NOT_CALL_BEFORE:
            continue
        names.add(token.text if quoted else token.text.lower())
    return frozenset(names)


def operator_runs(text: str, tokens: tuple[Token, ...]) -> frozenset[str]:
    """Runs of adjacent operator-character tokens (``<@``, ``&&&``) as sqlglot lexed them."""
    runs: set[str] = set()
    current = ""
    previous_end = -2
    for token in tokens:
        written = text[token.start : token.end + 1]
        if written and all(char in OPERATOR_CHARS for char in written):
            current = current + written if token.start == previous_end + 1 else written
            runs.add(current)
            previous_end = token.end
        else:
            current, previous_end = "", -2
    return frozenset(runs)


def _call_difference(query: ParsedQuery, view: PgView) -> str | None:
    missing = sorted(view.named_calls - token_call_names(query.tokens) - IMPLICIT_CALLS)
    if missing:
        return f"PostgreSQL calls {missing[0]}() where the guard sees no such call"
    return None


def _operator_difference(query: ParsedQuery, view: PgView) -> str | None:
    runs = operator_runs(query.text, query.tokens)
    for operator in sorted(view.operators):
        symbol = operator.rsplit(".", 1)[-1]
        if operator == symbol and _written_as_keyword(query, symbol):
            continue
        if not any(symbol in run for run in runs):
            return f"PostgreSQL applies the operator {symbol} where the guard sees none"
        nodes = OPERATOR_NODES.get(symbol)
        if query.parsed and nodes and query.find(*nodes) is None:
            return f"PostgreSQL applies {symbol} where the guard reads another operator"
    return None


def _written_as_keyword(query: ParsedQuery, symbol: str) -> bool:
    """True if ``symbol`` is written ``[NOT] LIKE/ILIKE ANY|SOME|ALL`` (KEYWORD_LIKE_OPERATORS).

    >>> from geoask.sql.parsing import parse_query
    >>> _written_as_keyword(parse_query("SELECT 1 FROM t WHERE a NOT ILIKE ALL (b)"), "!~~*")
    True
    >>> _written_as_keyword(parse_query("SELECT 1 FROM t WHERE a ILIKE ALL (b)"), "!~~*")
    False
    """
    keyword, node_type, negated = KEYWORD_LIKE_OPERATORS.get(symbol, (None, exp.Like, False))
    if keyword is None or not _keyword_tokens(query.tokens, keyword, negated):
        return False
    return not query.parsed or any(
        bool(node.args.get("negate")) is negated and isinstance(node.expression, exp.Any | exp.All)
        for node in query.find_all(node_type))


def _keyword_tokens(tokens: tuple[Token, ...], keyword: TokenType, negated: bool) -> bool:
    """True if ``[NOT] keyword`` followed by a quantifier is among the tokens."""
    for index in range(1, len(tokens) - 1):
        if tokens[index].token_type != keyword:
            continue
        if tokens[index + 1].token_type not in QUANTIFIER_TOKENS:
            continue
        if (tokens[index - 1].token_type == TokenType.NOT) is negated:
            return True
    return False


def _tree_difference(query: ParsedQuery, view: PgView) -> str | None:
    pg_names = view.named_calls | {call.name for call in view.calls if call.syntax}
    for call in function_calls(query):
        if call.name is not None and call.name not in pg_names | SYNTAX_CALL_NAMES:
            return f"the guard sees a call {call.name}() that PostgreSQL does not make"
    tables, glot_casts = _relations_and_casts(query.nodes)
    if tables != view.relations:
        extra = sorted(map(str, tables ^ view.relations))
        return f"the two read different tables ({extra[0]})"
    pg_casts = {name.lower() for _schema, name in view.casts} & SENSITIVE_TYPES
    if glot_casts != pg_casts:
        return f"the two read different casts ({sorted(pg_casts ^ glot_casts)})"
    return None


SENSITIVE_TYPES = SPATIAL_TYPE_NAMES | CATALOG_TYPES


def _relations_and_casts(
    nodes: tuple[exp.Expr, ...],
) -> tuple[frozenset[tuple[str | None, str]], set[str]]:
    """Sqlglot's relations (CTE names left out) and sensitive cast targets, in one walk."""
    ctes: set[str] = set()
    tables: list[exp.Table] = []
    casts: set[str] = set()
    for node in nodes:
        if isinstance(node, exp.CTE):
            ctes.add(node.alias_or_name.lower())
        elif isinstance(node, exp.Table):
            tables.append(node)
        elif isinstance(node, exp.Cast):
            name = cast_type_name(node.to)
            if name in SENSITIVE_TYPES:
                casts.add(name)
    found: set[tuple[str | None, str]] = set()
    for table in tables:
        name = table.this
        if not isinstance(name, exp.Identifier):
            continue
        db = table.args.get("db")
        schema = _folded(db) if isinstance(db, exp.Identifier) else None
        folded = _folded(name)
        if schema is None and folded in ctes:
            continue
        found.add((schema, folded))
    return frozenset(found), casts


def _folded(identifier: exp.Identifier) -> str:
    return identifier.this if identifier.quoted else identifier.this.lower()
