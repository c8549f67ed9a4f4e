"""The export formats: each declared once, with its name, suffix, media type and content.

A SQL step's result is exported in one of :data:`EXPORT_FORMATS`; the format's :attr:`name`
is what :class:`geoask.vocabulary.artifacts.ArtifactRef` and the artifact registry store
(``"geojson"``), its :attr:`suffix` ends the file name (``<name>.geojson``). Files a sandbox
script wrote are stored with their media type instead; :func:`format_of` accepts both.
Everything else - the export, the evidence, the maps, the compute agent's instructions, the
sandbox's media types, the CLI's clean-up - reads the formats from here.

Large vector results are exported as GeoParquet (:data:`GEOPARQUET`: WKB geometry, the CRS in
the file's ``geo`` metadata) instead of GeoJSON, large tables without geometry as Parquet
(:data:`PARQUET`) instead of JSON; which one a result gets is the export's choice
(:func:`geoask.sql.export.export_result`, ``GEOASK_SQL_COLUMNAR_ROWS``).

Adding a format touches exactly:

1. this module: one :class:`ExportFormat` entry in :data:`EXPORT_FORMATS` (name, suffix, media
   type, :class:`Content`, the compute agent's reading hint, a records reader of the file's
   bytes for the evidence);
2. ``geoask/sql/export.py``: the writer that picks the format and writes its bytes
   (:func:`geoask.sql.export.export_result`);
3. ``tests/test_formats.py``: its row in the table;
4. for features the maps draw: its reader in ``LAYER_READERS`` of
   ``geoask/maps/answer_features.py``.

>>> export_format("geojson").file_name("cells")
'cells.geojson'
>>> format_of("image/tiff").name
'geotiff'
>>> export_format("geoparquet").file_name("cells")
'cells.parquet'
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import Any

RecordsReader = Callable[[bytes], list[dict[str, Any]]]
"""Reads a file's bytes into records (JSON text is read from its UTF-8 bytes as well)."""


class Content(StrEnum):
    """What a format's file holds."""

    FEATURES = "features"  # vector features with geometry
    RASTER = "raster"  # a grid of pixels
    TABLE = "table"  # rows without geometry


class UnknownFormatError(ValueError):
    """A format name that no :class:`ExportFormat` declares."""


def json_records(text: str | bytes) -> list[dict[str, Any]]:
    """Records of JSON text: an array's objects, a FeatureCollection's feature properties.

    >>> json_records('[{"a": 1}, 2]')
    [{'a': 1}, {'value': 2}]
    """
    data = json.loads(text)
    if isinstance(data, dict) and data.get("type") == "FeatureCollection":
        return _properties(data)
    if isinstance(data, list):
        return [row if isinstance(row, dict) else {"value": row} for row in data]
    return [data] if isinstance(data, dict) else [{"value": data}]


def feature_records(text: str | bytes) -> list[dict[str, Any]]:
    """Records of a GeoJSON FeatureCollection: each feature's properties (geometry dropped).

    >>> feature_records('{"features": [{"properties": {"id": 7}}]}')
    [{'id': 7}]
    """
    return _properties(json.loads(text))


def parquet_records(data: bytes) -> list[dict[str, Any]]:
    """Records of a (Geo)Parquet file: its rows, the ``geo`` metadata's geometry columns dropped.

    Values read as JSON would read them: a ``decimal`` column's values as floats.
    """
    import pyarrow.parquet as pq  # start-up speed: pyarrow loads only when a Parquet is read

    table = pq.read_table(io.BytesIO(data))
    geo = json.loads((table.schema.metadata or {}).get(b"geo", b"{}"))
    table = table.drop_columns([c for c in geo.get("columns", {}) if c in table.column_names])
    return [{key: float(value) if isinstance(value, Decimal) else value
             for key, value in row.items()} for row in table.to_pylist()]


def _properties(collection: dict[str, Any]) -> list[dict[str, Any]]:
    return [dict(feature.get("properties") or {}) for feature in collection.get("features", [])]


@dataclass(frozen=True)
class ExportFormat:
    """One export format.

    Attributes:
        name: the value stored as an artifact's format (``"geojson"``).
        suffix: the file name's suffix, dot included (``".geojson"``).
        media_type: the IANA media type (``"application/geo+json"``).
        content: what the file holds (:class:`Content`).
        script_hint: how a sandbox script reads it, as the compute agent is told
            (``"GeoJSON: geopandas.read_file"``).
        read_records: the evidence's reader of the file's bytes into records, or None when the
            evidence describes the file otherwise (a raster: its preview's grid facts).

    """

    name: str
    suffix: str
    media_type: str
    content: Content
    script_hint: str
    read_records: RecordsReader | None = None

    def file_name(self, stem: str) -> str:
        """The file name of an export called ``stem`` (``cells`` -> ``cells.geojson``)."""
        return f"{stem}{self.suffix}"


GEOJSON = ExportFormat("geojson", ".geojson", "application/geo+json", Content.FEATURES,
                       "GeoJSON: geopandas.read_file", feature_records)
JSON = ExportFormat("json", ".json", "application/json", Content.TABLE,
                    "JSON: json or pandas", json_records)
GEOTIFF = ExportFormat("geotiff", ".tif", "image/tiff", Content.RASTER,
                       "GeoTIFF .tif: rasterio.open")
GEOPARQUET = ExportFormat("geoparquet", ".parquet", "application/vnd.apache.parquet",
                          Content.FEATURES, "GeoParquet .parquet: geopandas.read_parquet",
                          parquet_records)
PARQUET = ExportFormat("parquet", ".parquet", "application/vnd.apache.parquet", Content.TABLE,
                       "a table's .parquet (no geometry): pandas.read_parquet", parquet_records)

EXPORT_FORMATS: tuple[ExportFormat, ...] = (GEOJSON, JSON, GEOTIFF, GEOPARQUET, PARQUET)
"""Every export format, in the order the compute agent's instructions list them.

GeoParquet and a table's Parquet share the suffix and media type (a GeoParquet file is a
Parquet file with ``geo`` metadata): a suffix or media type resolves to the first format
declaring it (:data:`GEOPARQUET`), and a reader of features skips a Parquet file without
``geo`` metadata. The stored format name tells them apart.
"""

_BY_NAME = {f.name: f for f in EXPORT_FORMATS}
_BY_MEDIA_TYPE = {f.media_type: f for f in reversed(EXPORT_FORMATS)}
_BY_SUFFIX = {f.suffix: f for f in reversed(EXPORT_FORMATS)}


def export_format(name: str) -> ExportFormat:
    """The format stored as ``name``.

    Raises:
        UnknownFormatError: no export format is called ``name``.

    """
    try:
        return _BY_NAME[name]
    except KeyError:
        known = ", ".join(_BY_NAME)
        raise UnknownFormatError(f"unknown export format {name!r} (known: {known})") from None


def stored_format(name: str) -> ExportFormat | None:
    """The export format stored as ``name``, or None (a script's file stores a media type)."""
    return _BY_NAME.get(name)


def format_of(value: str) -> ExportFormat | None:
    """The format an artifact's ``format`` value names: a format name or a media type.

    >>> format_of("application/geo+json") is GEOJSON, format_of("text/csv")
    (True, None)
    """
    return _BY_NAME.get(value) or _BY_MEDIA_TYPE.get(value)


def format_of_file(path: str) -> ExportFormat | None:
    """The format a file's name says by its suffix (any URL or path), or None.

    >>> format_of_file("s3://b/run/sql-1/cells.parquet").name, format_of_file("/a/notes.txt")
    ('geoparquet', None)
    """
    name = path.rsplit("/", 1)[-1]
    return _BY_SUFFIX.get(f".{name.rsplit('.', 1)[-1]}") if "." in name else None


def formats_holding(content: Content) -> tuple[ExportFormat, ...]:
    """The export formats whose files hold ``content``, in :data:`EXPORT_FORMATS` order.

    >>> [f.name for f in formats_holding(Content.FEATURES)]
    ['geojson', 'geoparquet']
    """
    return tuple(f for f in EXPORT_FORMATS if f.content is content)


def holds(value: str, content: Content) -> bool:
    """Whether the artifact format ``value`` (name or media type) holds ``content``."""
    found = format_of(value)
    return found is not None and found.content is content
