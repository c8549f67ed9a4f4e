"""Every layer of a run in one GeoPackage, each in its native CRS: a run opens in QGIS.

A run exports its features in WGS 84 lon/lat (GeoJSON, RFC 7946; GeoParquet); the artifact
registry (:mod:`geoask.records.artifact_registry`) records the CRS each source column is stored
in. :func:`write_geopackage` writes one GeoPackage layer per registered artifact:

- features: transformed back to their native CRS (``EPSG:<code>``, or the database's own WKT
  for a CRS it defines otherwise); planar SRID 0 data stay in their own coordinates with no CRS
  (never a guessed one); a column of mixed SRIDs stays in WGS 84, as exported;
- records (a JSON array, a Parquet table): an attribute table without geometry;
- scalars, rasters and other files are not layers of a GeoPackage here and are left out (the
  returned :class:`GeoPackage` names them).

Layer names are the registry refs with ``.`` as ``_`` (``sql-1.airports`` -> ``sql-1_airports``).
"""

from __future__ import annotations

import json
import tempfile
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import fsspec
import geopandas as gpd
import pandas as pd
import pyogrio
from pyproj import CRS

from geoask.base.formats import Content, format_of
from geoask.base.storage import write_atomic
from geoask.maps.answer_features import read_layers
from geoask.records.artifact_registry import ArtifactKind, RegistryEntry

GEOPACKAGE_FILE: Final = "layers.gpkg"
"""The run folder's GeoPackage of every layer (beside ``map.png``/``map.html``)."""
LAYER_KINDS: Final = frozenset({ArtifactKind.FEATURES, ArtifactKind.RECORDS})
"""The registered artifacts that become GeoPackage layers."""


@dataclass(frozen=True)
class GeoPackage:
    """What :func:`write_geopackage` wrote.

    Attributes:
        url: the GeoPackage's fsspec URL.
        layers: its layer names, in registry order.
        left_out: refs of registered artifacts that are no GeoPackage layer (scalars, rasters,
            other files).

    """

    url: str
    layers: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)


def layer_name(ref: str) -> str:
    """The GeoPackage layer name of registry ref ``ref``.

    >>> layer_name("turn-2.sql-1.airports")
    'turn-2_sql-1_airports'
    """
    return ref.replace(".", "_")


def native_frame(entry: RegistryEntry) -> gpd.GeoDataFrame | None:
    """A features entry's file in its native CRS (see the module docstring); None if empty."""
    frame = read_layers([(entry.ref, entry.url)]).get(entry.ref)
    if frame is None or frame.crs is None:  # empty, or planar: its own coordinates
        return frame
    if entry.crs_wkt:
        return frame.to_crs(CRS.from_wkt(entry.crs_wkt))
    if entry.native_crs and entry.native_crs.upper().startswith("EPSG:"):
        return frame.to_crs(entry.native_crs)
    return frame  # mixed SRIDs or not recorded: kept in WGS 84, as exported


def records_frame(entry: RegistryEntry) -> pd.DataFrame | None:
    """A records entry's rows as a table; None when its format has no records reader."""
    found = format_of(entry.format)
    if found is None or found.read_records is None or found.content is not Content.TABLE:
        return None
    with fsspec.open(entry.url, "rb") as handle:
        rows = found.read_records(handle.read())
    return pd.DataFrame([{key: _cell(value) for key, value in row.items()} for row in rows])


def _cell(value: Any) -> Any:
    """A value a GeoPackage column holds: nested JSON values as their JSON text."""
    return json.dumps(value, ensure_ascii=False) if isinstance(value, dict | list) else value


def write_geopackage(entries: Iterable[RegistryEntry], url: str) -> GeoPackage:
    """Write every layer of ``entries`` to the GeoPackage at ``url`` (any fsspec URL).

    Args:
        entries: a run's registry entries, in registration order.
        url: where the GeoPackage goes (replaced if it exists).

    Returns:
        What was written and what was left out.

    Raises:
        ArtifactWriteError: the file could not be stored at ``url``.

    """
    written: list[str] = []
    left_out: list[str] = []
    with tempfile.TemporaryDirectory(prefix="geoask-gpkg-") as folder:
        path = Path(folder) / GEOPACKAGE_FILE
        for entry in entries:
            frame = _frame(entry)
            if frame is None or not len(frame.columns):
                left_out.append(entry.ref)
                continue
            name = layer_name(entry.ref)
            with warnings.catch_warnings():  # planar data have no CRS on purpose
                warnings.filterwarnings("ignore", message="'crs' was not provided")
                pyogrio.write_dataframe(frame, path, layer=name, driver="GPKG")
            written.append(name)
        data = path.read_bytes() if written else b""
    if written:
        write_atomic(url, data)
    return GeoPackage(url if written else "", written, left_out)


def _frame(entry: RegistryEntry) -> pd.DataFrame | None:
    if entry.kind is ArtifactKind.FEATURES:
        return native_frame(entry)
    if entry.kind is ArtifactKind.RECORDS:
        return records_frame(entry)
    return None

