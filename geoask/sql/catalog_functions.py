"""The PostGIS functions a ``postgis`` query may call, read from the connected database's catalog.

A list kept by hand cannot follow PostGIS releases (``ST_HasZ``, ``ST_CurveN`` and the legacy
``GeomFromEWKT`` come and go), so under the ``postgis`` policy the allow-list is extended with
what the server itself says about its extension functions (``pg_proc``):

* owned by a PostGIS extension (``postgis``, ``postgis_raster``, ``postgis_sfcgal``) through
  ``pg_depend`` - never user-defined or other extensions' functions;
* ``IMMUTABLE`` or ``STABLE`` (a volatile function may change state) and a plain function,
  aggregate or window function (no procedures);
* no argument or result of a pseudo-type the SQL level never needs (``internal``, ``cstring``,
  ``trigger``...): index support, type input/output and planner functions are left out, and
  so are names PostgreSQL's built-ins share (``text(geometry)``, ``box(geometry)``: casts);
* not internal (a leading ``_``, ``pgis_`` aggregate support), no PostGIS version or
  administration function (``postgis_*`` but the ``postgis_srs*`` lookups and transforms) and
  not on :data:`geoask.sql.functions.REFUSED_FUNCTIONS`, the explicit deny-list of
  management, metadata and dynamic-SQL functions (some have a ``STABLE`` overload).

The same filter (:func:`is_derivable`) builds the list kept in the repository
(``scripts/build_postgis_functions.py`` -> :mod:`geoask.sql.postgis_functions`), which is the
whole PostGIS allow-list without a database (tests, ``sql check`` offline): the catalog read
here adds what a differently built server offers.
"""

from __future__ import annotations

import psycopg

from geoask.db.urls import reader_url
from geoask.settings import Settings
from geoask.sql.functions import REFUSED_FUNCTIONS

#: PostGIS extensions whose functions may be derived.
POSTGIS_EXTENSIONS = ("postgis", "postgis_raster", "postgis_sfcgal")
#: Name prefixes refused: internal helpers (``_st_*``, ``pgis_*`` aggregate support, ``pg_*``)
#: and PostGIS's version, build and administration functions (``postgis_full_version``)...
REFUSED_PREFIXES = ("_", "pgis_", "pg_", "postgis_")
#: ... but for its spatial reference lookups and transforms (``postgis_srs_all()``).
READ_POSTGIS_PREFIXES = ("postgis_srs", "postgis_transform_")
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
  AND rtrim(p.prorettype::regtype::text, '[]') <> ALL(%(refused_types)s)
  AND NOT EXISTS (
    SELECT 1 FROM pg_catalog.pg_proc AS b
    WHERE b.pronamespace = 'pg_catalog'::regnamespace AND b.proname = p.proname)
  AND NOT EXISTS (
    SELECT 1 FROM unnest(p.proargtypes) AS t(oid)
    WHERE rtrim(t.oid::regtype::text, '[]') = ANY(%(refused_types)s))
"""


def read_only_extension_functions(connection: psycopg.Connection) -> frozenset[str]:
    """Names of the PostGIS functions the ``postgis`` policy may call, from ``pg_proc``.

    Raises:
        psycopg.Error: the catalog could not be read.

    """
    rows = connection.execute(DERIVE_SQL, {
        "extensions": list(POSTGIS_EXTENSIONS), "refused_types": list(REFUSED_TYPES),
    }).fetchall()
    return frozenset(name for (name,) in rows if is_derivable(name))


def is_derivable(name: str) -> bool:
    """True unless ``name`` is an internal helper or on the deny-list (``REFUSED_FUNCTIONS``).

    The one filter of the names read from a catalog, at run time (this module) and at build
    time (``scripts/build_postgis_functions.py``).

    >>> is_derivable("st_hasz"), is_derivable("_st_intersects"), is_derivable("st_bandpath")
    (True, False, False)
    >>> is_derivable("postgis_srs_all"), is_derivable("postgis_full_version")
    (True, False)
    """
    if name in REFUSED_FUNCTIONS:
        return False
    return name.startswith(READ_POSTGIS_PREFIXES) or not name.startswith(REFUSED_PREFIXES)


def refuses_type(type_name: str) -> bool:
    """True for a pseudo-type (or an array of one) no analytical call passes or returns.

    >>> refuses_type("cstring[]"), refuses_type("geometry")
    (True, False)
    """
    return type_name.removesuffix("[]") in REFUSED_TYPES


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
