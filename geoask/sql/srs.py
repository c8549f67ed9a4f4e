"""CRS definitions a database holds in ``spatial_ref_sys``, and the pyproj CRS built from one.

PostGIS identifies a geometry's CRS by an SRID, a key of the database's ``spatial_ref_sys``
table; most rows are EPSG codes (``auth_name = 'EPSG'``, ``auth_srid = srid``), but a database
may define its own (national and municipal grids, e.g. SRID 900914 for a UTM grid in
kilometres). The executor reads the rows of the SRIDs a result holds
(:func:`geoask.sql.executor.PostgresSqlRunner.run_text`, :data:`SPATIAL_REF_SYS_QUERY`) and
hands them with the result; :func:`crs_from_definition` builds the CRS: from EPSG when the row
is an EPSG code pyproj knows, else from its WKT (``srtext``), else from its PROJ string
(``proj4text``). Its cache is keyed by the whole definition, never by the SRID alone, so two
databases defining one SRID differently never share a CRS.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import psycopg
from pyproj import CRS
from pyproj.exceptions import CRSError

from geoask.errors import CrsError

EPSG_AUTHORITY = "EPSG"
SPATIAL_REF_SYS_QUERY = ("SELECT srid, auth_name, auth_srid, srtext, proj4text"
                         " FROM spatial_ref_sys WHERE srid = ANY(%s)")
"""The one query reading the definitions of a result's SRIDs (parameter: the SRID list).

Unqualified, like the ``geometry`` type the executor's loaders look up: PostGIS's schema is on
the reader role's search path.
"""


@dataclass(frozen=True)
class SpatialRefSys:
    """One row of a database's ``spatial_ref_sys``: an SRID and how the database defines it.

    Attributes:
        srid: the key geometries carry.
        auth_name: the authority, e.g. ``EPSG``, ``ESRI``; None for a local definition.
        auth_srid: the authority's code, e.g. ``32618``; None for a local definition.
        srtext: the OGC WKT definition, or None.
        proj4text: the PROJ string definition, or None.

    """

    srid: int
    auth_name: str | None = None
    auth_srid: int | None = None
    srtext: str | None = None
    proj4text: str | None = None

    @property
    def is_epsg(self) -> bool:
        """True when the row names an EPSG code pyproj knows (built from EPSG, not the text).

        >>> SpatialRefSys(32618, "EPSG", 32618).is_epsg, SpatialRefSys(900914).is_epsg
        (True, False)
        """
        return (self.auth_name or "").upper() == EPSG_AUTHORITY and self.auth_srid is not None \
            and _epsg_known(self.auth_srid)

    @property
    def label(self) -> str:
        """How the CRS is named in the export: ``EPSG:<code>`` or ``spatial_ref_sys:<srid>``.

        A CRS built from the database's text is named by its ``spatial_ref_sys`` row (scripts
        cannot build it from a code); :attr:`authority` keeps any authority the row states.

        >>> SpatialRefSys(900914, "local", 1).label
        'spatial_ref_sys:900914'
        """
        return f"EPSG:{self.auth_srid}" if self.is_epsg else f"spatial_ref_sys:{self.srid}"

    @property
    def authority(self) -> str | None:
        """``auth_name:auth_srid`` as the row states it, or None without both."""
        if self.auth_name and self.auth_srid is not None:
            return f"{self.auth_name}:{self.auth_srid}"
        return None


def read_definitions(connection: psycopg.Connection[Any], srids: Sequence[int]
                     ) -> dict[int, SpatialRefSys]:
    """The ``spatial_ref_sys`` rows of ``srids`` (one query; none for no SRIDs).

    An SRID the table lacks is left out (the export then reads it as an EPSG code).
    """
    if not srids:
        return {}
    found = connection.execute(SPATIAL_REF_SYS_QUERY, [list(srids)]).fetchall()
    return {int(srid): SpatialRefSys(int(srid), auth_name, auth_srid, srtext, proj4text)
            for srid, auth_name, auth_srid, srtext, proj4text in found}


@lru_cache(maxsize=256)
def crs_from_definition(definition: SpatialRefSys) -> CRS:
    """The pyproj CRS of a ``spatial_ref_sys`` row: EPSG, else its WKT, else its PROJ string.

    Raises:
        CrsError: none of them gives a CRS pyproj can build.

    """
    if definition.is_epsg and definition.auth_srid is not None:
        return CRS.from_epsg(definition.auth_srid)
    for text in (definition.srtext, definition.proj4text):
        if text and text.strip():
            try:
                return CRS.from_user_input(text.strip())
            except CRSError:
                continue
    raise CrsError(f"SRID {definition.srid} of the database's spatial_ref_sys has no definition "
                   "pyproj can read (srtext WKT or proj4text); fix the row or transform the "
                   "geometry in SQL (ST_Transform)")


@lru_cache(maxsize=512)
def _epsg_known(code: int) -> bool:
    try:
        CRS.from_epsg(code)
    except CRSError:
        return False
    return True
