"""What a query returns and reads, from its parse tree: output columns, tables, outer LIMIT.

sqlglot's tree answers; for text only PostgreSQL's grammar parses (``a &&& b``) PostgreSQL's
reading (:mod:`geoask.sql.pgview`) does. Each function returns None when neither parses (the
guard reports why).
"""

from __future__ import annotations

from sqlglot import exp

from geoask.errors import QueryRejectedError
from geoask.sql.parsing import parse_query
from geoask.sql.pgview import PgView
from geoask.sql.rules.query_only import query_root


def output_columns(sql: str) -> list[str] | None:
    """Names of the outermost query's output columns; None if the SQL does not parse.

    ``*`` stands for columns that cannot be known without the database.

    >>> output_columns("SELECT name, pop AS population, t.* FROM demo.t")
    ['name', 'population', '*']
    """
    try:
        query = parse_query(sql)
        if not query.parsed and isinstance(query.pg, PgView):
            return list(query.pg.output_names)
        tree = query_root(query.tree)
    except QueryRejectedError:
        return None
    return list(tree.named_selects) if isinstance(tree, exp.Query) else None


def tables_read(sql: str) -> list[str] | None:
    """Names of the tables ``sql`` reads, each once; None if it does not parse.

    Common table expressions and set-returning functions are not tables.

    >>> tables_read("WITH s AS (SELECT * FROM demo.us_states) SELECT * FROM s JOIN demo.airports a"
    ...             " ON a.state_abbr = s.abbr, generate_series(1, 2)")
    ['airports', 'us_states']
    """
    try:
        query = parse_query(sql)
        if not query.parsed and isinstance(query.pg, PgView):
            return sorted({name for _schema, name in query.pg.relations})
        tree = query.tree
    except QueryRejectedError:
        return None
    ctes = {cte.alias_or_name for cte in tree.find_all(exp.CTE)}
    names = (table.name for table in tree.find_all(exp.Table))
    return list(dict.fromkeys(n for n in names if n and n not in ctes))


def outer_limit(sql: str) -> int | None:
    """The outermost query's literal LIMIT / FETCH FIRST count; None if absent or not literal.

    >>> outer_limit("SELECT a FROM t ORDER BY a DESC LIMIT 5")
    5
    """
    try:
        query = parse_query(sql)
        if not query.parsed and isinstance(query.pg, PgView):
            return query.pg.outer_limit or None
        limit = query_root(query.tree).args.get("limit")
    except QueryRejectedError:
        return None
    count = limit.expression if isinstance(limit, exp.Limit) else (
        limit.args.get("count") if isinstance(limit, exp.Fetch) else None)
    if isinstance(count, exp.Literal) and not count.is_string and count.this.isdigit():
        return int(count.this)
    return None
