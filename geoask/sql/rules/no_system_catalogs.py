"""Rule: read data tables, not the server's system catalogs or statistics views."""

from __future__ import annotations

from sqlglot import exp

from geoask.sql.context import GuardContext
from geoask.sql.parsing import ParsedQuery, violation_at
from geoask.sql.violation import GuardViolation

RULE = "no_system_catalogs"

SYSTEM_SCHEMAS = frozenset({"pg_catalog", "information_schema", "pg_toast"})


def no_system_catalogs(query: ParsedQuery, context: GuardContext) -> GuardViolation | None:
    """Reject tables in system schemas and unqualified ``pg_*`` relations (pg_settings...).

    The catalog describes the data; the server's settings, sessions, roles and functions are
    not the model's business (and reveal more than a question needs).

    >>> from geoask.sql.parsing import parse_query
    >>> no_system_catalogs(parse_query("SELECT * FROM pg_settings"), GuardContext()).rule
    'no_system_catalogs'
    >>> no_system_catalogs(parse_query("SELECT * FROM demo.airports"), GuardContext()) is None
    True
    """
    ctes = {cte.alias_or_name.lower() for cte in query.tree.find_all(exp.CTE)}
    for table in query.tree.find_all(exp.Table):
        schema, name = table.db.lower(), table.name.lower()
        system = schema in SYSTEM_SCHEMAS or (not schema and name.startswith("pg_")
                                              and name not in ctes)
        if system:
            return violation_at(
                RULE,
                "system catalogs and statistics views are not available; query the data "
                "tables described in the schema",
                table,
                query,
            )
    return None
