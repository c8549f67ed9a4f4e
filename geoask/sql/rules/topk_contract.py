"""Rule: a step whose answer contract is ordered Top-K has an outer ORDER BY and LIMIT."""

from __future__ import annotations

from sqlglot import exp

from geoask.sql.context import AnswerContract, GuardContext
from geoask.sql.parsing import ParsedQuery, violation_at
from geoask.sql.pgview import PgView
from geoask.sql.rules.query_only import query_root
from geoask.sql.violation import GuardViolation, PgViolation

RULE = "topk_contract"


def topk_contract(query: ParsedQuery, context: GuardContext) -> GuardViolation | None:
    """Require ``ORDER BY`` and ``LIMIT`` on the outermost query under the ``topk`` contract.

    >>> from geoask.sql.parsing import parse_query
    >>> topk = GuardContext(contract=AnswerContract.TOPK)
    >>> topk_contract(parse_query("SELECT a FROM t LIMIT 5"), topk).rule
    'topk_contract'
    """
    if context.contract != AnswerContract.TOPK:
        return None
    root = query_root(query.tree)
    missing = [
        clause
        for clause, key in (("ORDER BY", "order"), ("LIMIT", "limit"))
        if not root.args.get(key)
    ]
    if not missing and _positive_count(root.args["limit"]):
        return None
    what = (f"no {' and no '.join(missing)}" if missing else
            "a LIMIT that is not a positive whole number (LIMIT ALL, NULL, 0, an expression, "
            "WITH TIES)")
    return violation_at(
        RULE,
        f"the step promises an ordered Top-K answer but the outer query has {what}; add "
        "ORDER BY <ranking expression> [DESC] LIMIT <k> (k a positive whole number) to the "
        "outermost query",
        root,
        query,
        render=True,
    )


def topk_contract_pg(view: PgView, context: GuardContext) -> PgViolation | None:
    """Require ORDER BY and a positive constant LIMIT on PostgreSQL's outermost query.

    >>> from geoask.sql.pgview import postgres_view
    >>> topk = GuardContext(contract=AnswerContract.TOPK)
    >>> topk_contract_pg(postgres_view("SELECT a FROM t ORDER BY a LIMIT ALL"), topk).rule
    'topk_contract'
    >>> topk_contract_pg(postgres_view("SELECT a FROM t ORDER BY a LIMIT 3"), topk) is None
    True
    """
    if context.contract != AnswerContract.TOPK:
        return None
    if view.outer_sorted and view.outer_limit:
        return None
    what = "no ORDER BY" if not view.outer_sorted else (
        "no LIMIT" if view.outer_limit is None else
        "a LIMIT that is not a positive whole number (LIMIT ALL, NULL, an expression)")
    return PgViolation(RULE, f"the step promises an ordered Top-K answer but the outer query "
                       f"has {what}; add ORDER BY <ranking expression> [DESC] LIMIT <k> (k a "
                       "positive whole number) to the outermost query", "")


def _positive_count(limit: exp.Expr) -> bool:
    """True if ``LIMIT k`` / ``FETCH FIRST k ROWS`` has a literal positive whole ``k``.

    ``FETCH FIRST ROW ONLY`` (no count) is k = 1; ``WITH TIES`` is unbounded (every row tied
    with the k-th comes too).
    """
    if isinstance(limit, exp.Fetch):
        options = limit.args.get("limit_options")
        if options is not None and options.args.get("with_ties"):
            return False
        count = limit.args.get("count")
        if count is None:
            return True
    else:
        count = limit.expression
    return (isinstance(count, exp.Literal) and not count.is_string and count.this.isdigit()
            and int(count.this) > 0)
