"""Find every function call in a parsed query, named as PostgreSQL would resolve it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from sqlglot import exp

from geoask.sql.parsing import ORIGINAL_NAME_KEY, ParsedQuery


@dataclass(frozen=True)
class FunctionCall:
    """One function call in the tree.

    Attributes:
        node: the sqlglot node of the call.
        name: the name the server resolves: unquoted names lower-cased, quoted ones exact;
            None when sqlglot built the node from syntax rather than a call by name (``CAST``,
            ``EXTRACT``, ``CASE``, operators such as ``~`` or ``->>``).
        schema: the schema qualifier as written (``pg_catalog``), or None.

    """

    node: exp.Func
    name: str | None
    schema: str | None


def function_calls(query: ParsedQuery) -> Iterator[FunctionCall]:
    """Yield every function call anywhere in the statement (sub-selects, CTEs, lateral joins).

    >>> from geoask.sql.parsing import parse_query
    >>> [c.name for c in function_calls(parse_query('SELECT count(*), "Lower"(x) FROM t'))]
    ['count', 'Lower']
    """
    for node in query.nodes:
        if isinstance(node, exp.Func):
            yield FunctionCall(node, _resolved_name(node, query.text), _schema(node))


def _resolved_name(node: exp.Func, text: str) -> str | None:
    if isinstance(node, exp.Anonymous):
        head = node.this
        if isinstance(head, exp.Identifier):
            return head.this if head.quoted else head.this.lower()
        return _fold(str(head), node, text)
    written = (node.meta or {}).get(ORIGINAL_NAME_KEY)
    if written is None:
        return None
    return _fold(str(written), node, text)


def _fold(written: str, node: exp.Func, text: str) -> str:
    start = (node.meta or {}).get("start")
    quoted = start is not None and text[start : start + 1] == '"'
    return written if quoted else written.lower()


def _schema(node: exp.Func) -> str | None:
    parent = node.parent
    if isinstance(parent, exp.Dot) and parent.expression is node:
        qualifier = parent.this
        if isinstance(qualifier, exp.Identifier) and not qualifier.quoted:
            return qualifier.this.lower()
        if isinstance(qualifier, exp.Identifier):
            return qualifier.this
        return qualifier.sql(dialect="postgres")
    return None
