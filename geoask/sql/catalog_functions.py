"""The PostGIS functions a ``postgis`` query may call, read from the connected database's catalog.

A hand-kept list cannot follow PostGIS releases (``ST_HasZ``, ``ST_CurveN`` and the legacy
``GeomFromEWKT`` come and go), so under the ``postgis`` policy the allow-list is extended with
what the server itself says about its extension functions (``pg_proc``):

* owned by a PostGIS extension (``postgis``, ``postgis_raster``, ``postgis_sfcgal``) through
  ``pg_depend`` - never user-defined or other extensions' functions;
* ``IMMUTABLE`` or ``STABLE`` (a volatile function may change state) and a plain function,
  aggregate or window function (no procedures);
* no argument or result of a pseudo-type the SQL level never needs (``internal``, ``cstring``,
  ``trigger``...): index support, type input/output and planner functions are left out;
* not internal (a leading ``_``) and not on :data:`geoask.sql.functions.REFUSED_FUNCTIONS`,
  the explicit deny-list of management, metadata and dynamic-SQL functions (some have a
  ``STABLE`` overload).

Without a database (tests, ``sql check`` offline) the hand list
(:data:`geoask.sql.functions.POSTGIS_READ_FUNCTIONS`) is the whole PostGIS allow-list.
"""

from __future__ import annotations

import psycopg

from geoask.db.urls import reader_url
from geoask.settings import Settings
from geoask.sql.functions import REFUSED_FUNCTIONS

#: PostGIS extensions whose functions may be derived.
POSTGIS_EXTENSIONS = ("postgis", "postgis_raster", "postgis_sfcgal")
#: Name prefixes refused: internal helpers and version/constraint/administration functions.
REFUSED_PREFIXES = ("_", "postgis_", "pg_")
#: Pseudo-types no analytical call passes or returns.
REFUSED_TYPES = ("internal", "cstring", "trigger", "event_trigger", "language_handler",
                 "fdw_handler", "index_am_handler", "tsm_handler", "table_am_handler")

DERIVE_SQL = """
SELECT DISTINCT p.proname
FROM pg_catalog.pg_proc AS p
JOIN pg_catalog.pg_depend AS d
  ON d.classid = 'pg_catalog.pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
JOIN pg_catalog.pg_extension AS e ON e.oid = d.refobjid
WHERE e.extname = ANY(%(extensions)s)
  AND p.provolatile IN ('i', 's')
  AND p.prokind IN ('f', 'a', 'w')
  AND p.prorettype::regtype::text <> ALL(%(refused_types)s)
  AND NOT EXISTS (
    SELECT 1 FROM unnest(p.proargtypes) AS t(oid)
    WHERE t.oid::regtype::text = ANY(%(refused_types)s))
"""


def read_only_extension_functions(connection: psycopg.Connection) -> frozenset[str]:
    """Names of the PostGIS functions the ``postgis`` policy may call, from ``pg_proc``.

    Raises:
        psycopg.Error: the catalog could not be read.

    """
    rows = connection.execute(DERIVE_SQL, {
        "extensions": list(POSTGIS_EXTENSIONS), "refused_types": list(REFUSED_TYPES),
    }).fetchall()
    return frozenset(
        name for (name,) in rows
        if not name.startswith(REFUSED_PREFIXES) and name not in REFUSED_FUNCTIONS
    )


def catalog_postgis_functions(settings: Settings) -> frozenset[str]:
    """:func:`read_only_extension_functions` of the configured database, once per process.

    Empty (the hand list alone applies) when ``sql_functions_from_catalog`` is off or the
    database cannot be reached; never raises.
    """
    if not settings.sql_functions_from_catalog:
        return frozenset()

    try:
        url = reader_url(settings)
    except Exception:
        return frozenset()
    if url not in _DERIVED:
        try:
            with psycopg.connect(url, connect_timeout=3) as connection:
                _DERIVED[url] = read_only_extension_functions(connection)
        except psycopg.Error:
            return frozenset()  # not remembered: the database may be up next time
    return _DERIVED[url]


_DERIVED: dict[str, frozenset[str]] = {}
