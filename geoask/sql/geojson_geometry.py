"""GeoJSON geometry objects of a whole column of shapely geometries, built in vectorised calls.

The GeoJSON export (:func:`geoask.sql.export.result_to_geojson`) wrote each feature's geometry
with ``shapely.geometry.mapping``: a Python walk of every coordinate sequence of every geometry,
which took more time than the JSON encoding of the file itself for a screened result of a few
thousand road segments. :func:`geojson_geometries` reads all coordinates of a column in one
``shapely.get_coordinates`` call and cuts that list by the counts of rings and parts
(``get_rings``, ``get_parts``, ``get_num_coordinates``), giving the same objects ``mapping``
gives (lists where it gives tuples: the same JSON text). Geometry collections keep ``mapping``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import shapely
from shapely.geometry import mapping

_POINT, _LINESTRING, _LINEARRING, _POLYGON = 0, 1, 2, 3
_MULTIPOINT, _MULTILINESTRING, _MULTIPOLYGON = 4, 5, 6
_NAMES = {_POINT: "Point", _LINESTRING: "LineString", _LINEARRING: "LinearRing",
          _POLYGON: "Polygon", _MULTIPOINT: "MultiPoint", _MULTILINESTRING: "MultiLineString",
          _MULTIPOLYGON: "MultiPolygon"}
"""shapely type id -> GeoJSON ``type`` (what ``mapping`` writes) for the types built here."""
_PART_TYPE = {_MULTIPOINT: _POINT, _MULTILINESTRING: _LINESTRING, _MULTIPOLYGON: _POLYGON}


def geojson_geometries(geometries: np.ndarray) -> list[dict[str, Any] | None]:
    """The GeoJSON geometry object of each of ``geometries`` (None: None or empty).

    Coordinates keep their dimension (x, y or x, y, z) at full double precision, as
    ``shapely.geometry.mapping`` writes them.

    >>> geojson_geometries(np.array([shapely.Point(1, 2), None, shapely.LineString([(0, 0),
    ...                              (3, 4)]), shapely.Polygon()], dtype=object))
    [{'type': 'Point', 'coordinates': [1.0, 2.0]}, None, {'type': 'LineString', \
'coordinates': [[0.0, 0.0], [3.0, 4.0]]}, None]
    """
    out: list[dict[str, Any] | None] = [None] * len(geometries)
    present = shapely.is_geometry(geometries)
    present[present] = ~shapely.is_empty(geometries[present])
    indexes = np.flatnonzero(present)
    kept = geometries[indexes]
    type_ids = shapely.get_type_id(kept)
    has_z = shapely.has_z(kept)
    for type_id, z in {(int(t), bool(h)) for t, h in zip(type_ids, has_z, strict=True)}:
        chosen = (type_ids == type_id) & (has_z == z)
        group = kept[chosen]
        if type_id not in _NAMES:  # a geometry collection: rare in a result, kept as it was
            objects: list[Any] = [mapping(geometry) for geometry in group]
        else:
            objects = [{"type": _NAMES[type_id], "coordinates": coordinates}
                       for coordinates in _coordinates(group, type_id, z)]
        for index, item in zip(indexes[chosen], objects, strict=True):
            out[index] = item
    return out


def _coordinates(geometries: np.ndarray, type_id: int, z: bool) -> list[Any]:
    """The GeoJSON ``coordinates`` member of each of ``geometries`` (all of ``type_id``)."""
    if type_id == _POINT:
        points = shapely.get_coordinates(geometries, include_z=z).tolist()
        if len(points) == len(geometries):
            return points
        # an empty point among a multipoint's parts: mapping's own reading of them
        return [mapping(geometry)["coordinates"] for geometry in geometries]
    if type_id in (_LINESTRING, _LINEARRING):
        flat = shapely.get_coordinates(geometries, include_z=z).tolist()
        return _split(flat, shapely.get_num_coordinates(geometries))
    if type_id == _POLYGON:
        rings, owner = shapely.get_rings(geometries, return_index=True)
        return _split(_coordinates(rings, _LINEARRING, z),
                      np.bincount(owner, minlength=len(geometries)))
    parts, owner = shapely.get_parts(geometries, return_index=True)
    return _split(_coordinates(parts, _PART_TYPE[type_id], z),
                  np.bincount(owner, minlength=len(geometries)))


def _split(items: list[Any], counts: np.ndarray) -> list[list[Any]]:
    """``items`` cut into consecutive lists of ``counts`` items each."""
    ends = np.cumsum(counts).tolist()
    starts = [0, *ends[:-1]]
    return [items[start:end] for start, end in zip(starts, ends, strict=True)]
