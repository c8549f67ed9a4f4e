"""A file a step produced, by reference: what SQL exports and scripts hand to later steps."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ArtifactRef(BaseModel):
    """A file a step produced, by reference, with its compact preview.

    Attributes:
        name: artifact name (``<statement name>`` for SQL, ``result`` for Python).
        url: fsspec URL of the file under the run's artifact folder.
        format: an export format's name (``geojson``, ``json``, ``geotiff``:
            :data:`geoask.base.formats.EXPORT_FORMATS`), or the media type of a file a script
            wrote (:func:`geoask.base.formats.format_of` reads both).
        fields: column/property names the file holds (``geometry`` for GeoJSON geometry).
        row_count: rows or features, when known.
        preview: a few lines describing the file (columns, row count, first rows, bbox).
        sql: the statement that produced it (SQL artifacts).

    """

    model_config = ConfigDict(frozen=True)

    name: str
    url: str
    format: str
    fields: list[str] = Field(default_factory=list)
    row_count: int | None = None
    preview: str = ""
    sql: str | None = None
