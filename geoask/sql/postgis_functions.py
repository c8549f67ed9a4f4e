"""Names of the PostGIS functions a ``postgis`` query may call, built from PostGIS's own catalog.

:data:`POSTGIS_CATALOG_FUNCTIONS` is read from ``postgis_functions.txt`` next to this module,
which ``scripts/build_postgis_functions.py`` writes from ``pg_proc`` of the installed PostGIS
(and, optionally, a newer release's install scripts): every function the extension declares
``IMMUTABLE`` or ``STABLE``, without internal helpers, pseudo-type signatures and the deny-list
:data:`geoask.sql.functions.REFUSED_FUNCTIONS`. So the list follows PostGIS releases
(``ST_HasZ``, ``ST_CoverageUnion``, ``postgis_srs_all``) without a hand edit, and works when
the database's own catalog is not read (tests, ``sql check`` offline, the setting
``sql_functions_from_catalog`` off).

:data:`POSTGIS_REVIEWED_FUNCTIONS` adds, by hand, the few PostGIS functions the filter leaves out
that only read their arguments and write nothing: declared ``VOLATILE`` because they draw random
numbers or were never marked, or taking a ``cstring`` (``ST_SwapOrdinates(geom, 'xy')``).

Used by the ``allowed_functions`` rule under the ``postgis`` policy (an allow-list, so a
user-defined ``st_something`` in the database is not callable).
"""

from __future__ import annotations

from pathlib import Path

CATALOG_FILE = Path(__file__).with_name("postgis_functions.txt")


def _read_names(path: Path) -> frozenset[str]:
    """One lower-case name a line; ``#`` lines are the header."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return frozenset(line.strip() for line in lines if line.strip() and not line.startswith("#"))


POSTGIS_CATALOG_FUNCTIONS: frozenset[str] = _read_names(CATALOG_FILE)
"""IMMUTABLE/STABLE PostGIS functions (geometry, geography and raster), from the built file."""

POSTGIS_REVIEWED_FUNCTIONS: frozenset[str] = frozenset({
    "st_clusterkmeans",  # VOLATILE: random initial centres
    "st_generatepoints",  # VOLATILE: random points (the two-argument form)
    "st_symmetricdifference", "st_rotation",  # VOLATILE: not marked in PostGIS 3.3
    "st_swapordinates",  # its second argument is a cstring ('xy')
})
"""PostGIS functions the catalog filter leaves out that only read (reviewed by hand)."""
