"""Rule: read data tables, not the server's system catalogs or statistics views."""

from __future__ import annotations

from sqlglot import exp

from geoask.sql.context import GuardContext
from geoask.sql.parsing import ParsedQuery, cast_type_name, violation_at
from geoask.sql.pgview import PgView
from geoask.sql.violation import GuardViolation, PgViolation

RULE = "no_system_catalogs"

SYSTEM_SCHEMAS = frozenset({"pg_catalog", "information_schema", "pg_toast"})
#: PostGIS's metadata views and tables (in ``public`` or wherever PostGIS is installed): they
#: describe the server's tables, not the data.
POSTGIS_METADATA_RELATIONS = frozenset({
    "geometry_columns", "geography_columns", "spatial_ref_sys", "raster_columns",
    "raster_overviews", "topology", "layer",
})
#: Object-identifier types whose input and output look names up in the system catalogs
#: (``'pg_authid'::regclass``, ``oid::regrole``).
CATALOG_TYPES = frozenset({
    "regclass", "regcollation", "regconfig", "regdictionary", "regnamespace", "regoper",
    "regoperator", "regproc", "regprocedure", "regrole", "regtype",
})


def is_system_relation(schema: str | None, name: str) -> bool:
    """True if ``schema.name`` (names as the server resolves them) is a catalog or metadata view.

    >>> is_system_relation(None, "pg_settings"), is_system_relation("public", "spatial_ref_sys")
    (True, True)
    >>> is_system_relation("demo", "airports")
    False
    """
    lowered = name.lower()
    return (
        (schema or "").lower() in SYSTEM_SCHEMAS
        or (schema is None and lowered.startswith("pg_"))
        or lowered in POSTGIS_METADATA_RELATIONS
    )


def reads_catalog_type(type_name: str) -> bool:
    """True if a cast to ``type_name`` reads the system catalogs (``regclass``, ``regrole``...).

    >>> reads_catalog_type("REGROLE"), reads_catalog_type("int4")
    (True, False)
    """
    return type_name.lower().strip('"') in CATALOG_TYPES


def no_system_catalogs(query: ParsedQuery, context: GuardContext) -> GuardViolation | None:
    """Reject system schemas, unqualified ``pg_*`` relations, PostGIS metadata and ``reg*`` casts.

    The catalog describes the data; the server's settings, sessions, roles and functions are
    not the model's business (and reveal more than a question needs).

    >>> from geoask.sql.parsing import parse_query
    >>> no_system_catalogs(parse_query("SELECT * FROM pg_settings"), GuardContext()).rule
    'no_system_catalogs'
    >>> no_system_catalogs(parse_query("SELECT * FROM demo.airports"), GuardContext()) is None
    True
    """
    ctes: set[str] = set()
    tables: list[exp.Table] = []
    casts: list[exp.Cast] = []
    for node in query.nodes:  # one pass: CTE names, tables, casts
        if isinstance(node, exp.CTE):
            ctes.add(node.alias_or_name.lower())
        elif isinstance(node, exp.Table):
            tables.append(node)
        elif isinstance(node, exp.Cast):  # TryCast is a Cast
            casts.append(node)
    for table in tables:
        schema, name = table.db.lower(), table.name.lower()
        if is_system_relation(schema or None, name) and (schema or name not in ctes):
            return violation_at(
                RULE,
                "system catalogs, statistics views and PostGIS metadata views are not "
                "available; query the data tables described in the schema",
                table,
                query,
            )
    for cast in casts:
        target = cast_type_name(cast.to)
        if reads_catalog_type(target):
            return violation_at(
                RULE,
                f"a cast to {target} looks names up in the system catalogs; query the "
                "data tables described in the schema",
                cast,
                query,
            )
    return None


def no_system_catalogs_pg(view: PgView, context: GuardContext) -> PgViolation | None:
    """Reject system relations and ``reg*`` casts in PostgreSQL's reading.

    >>> from geoask.sql.pgview import postgres_view
    >>> no_system_catalogs_pg(postgres_view("SELECT oid::regrole FROM t"), GuardContext()).rule
    'no_system_catalogs'
    """
    for schema, name in sorted(view.relations, key=str):
        if is_system_relation(schema, name):
            return PgViolation(RULE, "system catalogs, statistics views and PostGIS metadata "
                               "views are not available; query the data tables described in "
                               "the schema", f"{schema}.{name}" if schema else name)
    for _schema, name in sorted(view.casts, key=str):
        if reads_catalog_type(name):
            return PgViolation(RULE, f"a cast to {name} looks names up in the system catalogs; "
                               "query the data tables described in the schema", f"::{name}")
    return None
