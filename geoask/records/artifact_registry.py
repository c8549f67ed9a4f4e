"""The typed artifact registry: what every exported file and sandbox output of a run is.

Each file a step produces is registered as a :class:`RegistryEntry`: its kind (``features``,
``records``, ``scalar``, ``file``; rasters later), the CRS it is exported in (EPSG:4326 for
GeoJSON, RFC 7946, and GeoParquet) and the CRS its source column is stored in, its bounds in WGS 84
longitude/latitude, geometry types, feature/row count, column schema with units (from the
semantic catalog), the step and SQL or script that made it, and its run, conversation and
turn. The registry of a run is one JSON file beside the run's artifacts
(``<run folder>/registry.json``, through fsspec, so ``s3://`` roots work too); a
conversation keeps the entries of every turn (:mod:`geoask.run.conversation`).

Before a step runs its inputs are checked against these entries (:mod:`geoask.run.predispatch`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from geoask.base.formats import JSON
from geoask.base.storage import filesystem_for, write_atomic
from geoask.catalog.model import PLANAR
from geoask.errors import ArtifactWriteError
from geoask.vocabulary.artifacts import ArtifactRef

REGISTRY_FILE = "registry.json"
"""The registry's file name in a run folder."""
EXPORT_SRID = 4326
"""The CRS every vector export is in (GeoJSON, RFC 7946, and GeoParquet: WGS 84 lon/lat)."""


class ArtifactKind(StrEnum):
    """What an artifact holds."""

    FEATURES = "features"  # features with geometry (GeoJSON, GeoParquet)
    RECORDS = "records"  # rows without geometry (a JSON array of objects)
    SCALAR = "scalar"  # one object or value (a script's dict result)
    FILE = "file"  # any other file a script wrote (CSV, PNG, ...)


class ColumnInfo(BaseModel):
    """One column of an artifact: name, PostgreSQL or JSON type, unit from the catalog."""

    model_config = ConfigDict(frozen=True)

    name: str
    type: str = ""
    unit: str | None = None


class RegistryEntry(BaseModel):
    """One registered artifact.

    Attributes:
        ref: how plans name it: ``<step>.<name>`` inside a run (``sql-1.cells``); a later
            turn of a conversation names it ``turn-<n>.<step>.<name>`` (:func:`turn_ref`).
        name: artifact name (SQL statement name, ``result`` for a script's result).
        kind: :class:`ArtifactKind`.
        url: fsspec URL of the file.
        format: an export format's name or a media type (:mod:`geoask.base.formats`).
        srid: SRID of the coordinates in the file (4326 for features), None without geometry
            or for planar features (kept in their own coordinates).
        native_crs: the CRS the source column is stored in (``EPSG:2263``,
            ``spatial_ref_sys:900914``, ``planar``), when known.
        crs_wkt: the WKT of that CRS when the database defines it otherwise than by an EPSG
            code (:attr:`geoask.sql.crs.NativeCrs.crs_wkt`).
        bbox_wgs84: ``[min_lon, min_lat, max_lon, max_lat]`` of all geometries, or None.
        geometry_types: geometry types present (``["MultiPolygon"]``).
        row_count: features or rows, when known.
        columns: the column schema, with units where the catalog states them.
        step: the plan step that made it (``sql-1``, ``python-1``).
        made_by: ``sql`` or ``script``.
        source: the SQL statement, or the URL of the script.
        run_id: the question run.
        conversation: the conversation id, when the run was a conversation turn.
        turn: the turn number (1-based) in that conversation.

    """

    model_config = ConfigDict(frozen=True)

    ref: str
    name: str
    kind: ArtifactKind
    url: str
    format: str
    srid: int | None = None
    native_crs: str | None = None
    crs_wkt: str | None = None
    bbox_wgs84: list[float] | None = None
    geometry_types: list[str] = Field(default_factory=list)
    row_count: int | None = None
    columns: list[ColumnInfo] = Field(default_factory=list)
    step: str
    made_by: str
    source: str = ""
    run_id: str
    conversation: str | None = None
    turn: int | None = None
    preview: str = ""

    @property
    def planar(self) -> bool:
        """True for features kept in their own planar coordinates (SRID 0 declared planar).

        >>> RegistryEntry(ref="sql-1.trees", name="trees", kind=ArtifactKind.FEATURES,
        ...     url="x", format="geojson", native_crs="planar", step="sql-1", made_by="sql",
        ...     run_id="r").planar
        True
        """
        return self.kind is ArtifactKind.FEATURES and self.srid is None and \
            self.native_crs == PLANAR

    def to_text(self) -> str:
        """One compact line for a prompt (no data, only what the artifact is).

        >>> RegistryEntry(ref="sql-1.cells", name="cells", kind=ArtifactKind.FEATURES,
        ...     url="x", format="geojson", srid=4326, geometry_types=["Polygon"], row_count=3,
        ...     columns=[ColumnInfo(name="precip", unit="mm")], step="sql-1", made_by="sql",
        ...     run_id="r").to_text()
        'sql-1.cells: features, 3 rows, Polygon, EPSG:4326; columns precip [mm]; from sql-1 (sql)'
        """
        parts = [f"{self.ref}: {self.kind.value}"]
        if self.row_count is not None:
            parts.append(f"{self.row_count} row{'' if self.row_count == 1 else 's'}")
        if self.geometry_types:
            parts.append("/".join(self.geometry_types))
        if self.srid is not None:
            stored = f" (stored in {self.native_crs})" if (
                self.native_crs and self.native_crs != f"EPSG:{self.srid}") else ""
            parts.append(f"EPSG:{self.srid}{stored}")
        elif self.planar:
            parts.append("planar (own coordinates, not lon/lat)")
        if self.bbox_wgs84:
            parts.append("bbox " + ",".join(f"{v:.3f}" for v in self.bbox_wgs84))
        text = ", ".join(parts)
        if self.columns:
            text += "; columns " + ", ".join(
                c.name + (f" [{c.unit}]" if c.unit else "") for c in self.columns)
        return text + f"; from {self.step} ({self.made_by})"

    def to_artifact_ref(self) -> ArtifactRef:
        """The entry as the execution state's :class:`ArtifactRef` (a reused input)."""
        fields = [c.name for c in self.columns]
        if self.kind is ArtifactKind.FEATURES and "geometry" not in fields:
            fields.append("geometry")
        return ArtifactRef(name=self.name, url=self.url, format=self.format, fields=fields,
                           row_count=self.row_count, preview=self.preview,
                           sql=self.source if self.made_by == "sql" else None)


def turn_ref(turn: int, ref: str) -> str:
    """How a plan names the artifact ``ref`` (``<step>.<name>``) of conversation turn ``turn``.

    >>> turn_ref(2, "sql-1.cells")
    'turn-2.sql-1.cells'
    """
    return f"turn-{turn}.{ref}"


def preview_url(data_url: str) -> str:
    """The preview JSON written next to an exported SQL result (``<name>.preview.json``).

    >>> preview_url("/a/sql-1/cells.geojson")
    '/a/sql-1/cells.preview.json'
    """
    stem = data_url.rsplit(".", 1)[0] if "." in data_url.rsplit("/", 1)[-1] else data_url
    return f"{stem}.preview.json"


def entry_from_sql(artifact: ArtifactRef, preview: Mapping[str, Any], *, step: str, run_id: str,
                   units: Mapping[str, str]) -> RegistryEntry:
    """The entry of an exported SQL result from its preview (:class:`ResultPreview` as dict).

    ``units`` maps column names to units (:func:`column_units`).
    """
    geometry_column = preview.get("geometry_column")
    described = [crs for crs in preview.get("native_crs") or [] if crs.get("crs")]
    native = [crs["crs"] for crs in described]
    planar = bool(described) and described[0]["crs"] == PLANAR
    columns = [ColumnInfo(name=c["name"], type=c.get("type", ""), unit=units.get(c["name"]))
               for c in preview.get("columns", []) if c["name"] != geometry_column]
    return RegistryEntry(
        ref=f"{step}.{artifact.name}", name=artifact.name,
        kind=ArtifactKind.FEATURES if geometry_column else ArtifactKind.RECORDS,
        url=artifact.url, format=artifact.format,
        srid=EXPORT_SRID if geometry_column and not planar else None,
        native_crs=native[0] if len(native) == 1 else None,
        crs_wkt=described[0].get("crs_wkt") if len(described) == 1 else None,
        bbox_wgs84=preview.get("bbox_wgs84"),
        geometry_types=list(preview.get("geometry_types") or []),
        row_count=preview.get("row_count", artifact.row_count), columns=columns,
        step=step, made_by="sql", source=artifact.sql or "", run_id=run_id,
        preview=artifact.preview)


def entry_from_script(artifact: ArtifactRef, saved: Mapping[str, Any] | None, *, step: str,
                      run_id: str) -> RegistryEntry:
    """The entry of a script's output: its protocol result (``saved``) or a file it wrote."""
    if saved is None:
        return RegistryEntry(ref=f"{step}.{artifact.name}", name=artifact.name,
                             kind=ArtifactKind.FILE, url=artifact.url, format=artifact.format,
                             step=step, made_by="script", run_id=run_id)
    result = saved.get("result")
    rows = result if isinstance(result, list) else None
    kind = ArtifactKind.RECORDS if rows is not None else ArtifactKind.SCALAR
    names = (sorted({k for row in rows if isinstance(row, dict) for k in row}) if rows
             else sorted(result) if isinstance(result, dict) else [])
    return RegistryEntry(ref=f"{step}.{artifact.name}", name=artifact.name, kind=kind,
                         url=artifact.url, format=artifact.format,
                         row_count=len(rows) if rows is not None else None,
                         columns=[ColumnInfo(name=n, type=_json_type(rows, result, n))
                                  for n in names],
                         step=step, made_by="script", source=str(saved.get("script", "")),
                         run_id=run_id, preview=artifact.preview)


def _json_type(rows: list[Any] | None, result: Any, name: str) -> str:
    value = next((row.get(name) for row in rows if isinstance(row, dict)
                  and row.get(name) is not None), None) if rows else (
        result.get(name) if isinstance(result, dict) else None)
    return type(value).__name__ if value is not None else ""


def column_units(tables: Iterable[Any]) -> dict[str, str]:
    """Column name -> unit over catalog ``tables`` (:class:`geoask.catalog.model.Table`).

    The first table stating a unit for a name wins; columns without a unit are left out.
    """
    units: dict[str, str] = {}
    for table in tables:
        for column in table.columns:
            if column.unit and column.name not in units:
                units[column.name] = column.unit
    return units


def step_entries(read_text: Callable[[str], str], artifacts: Iterable[ArtifactRef], *,
                 step: str, run_id: str, units: Mapping[str, str]) -> list[RegistryEntry]:
    """The registry entries of one successful step's ``artifacts``.

    SQL results are described from their ``.preview.json``, a script's ``result`` from its
    saved protocol result, other files by name and media type. ``read_text`` reads a URL
    (:meth:`geoask.records.run_artifacts.RunArtifacts.read_text`).

    Raises:
        ArtifactWriteError: a preview or result file cannot be read.

    """
    entries = []
    for artifact in artifacts:
        if artifact.sql is not None:
            preview = json.loads(read_text(preview_url(artifact.url)))
            entries.append(entry_from_sql(artifact, preview, step=step, run_id=run_id,
                                          units=units))
        elif artifact.name == "result" and artifact.format == JSON.name:
            saved = json.loads(read_text(artifact.url))
            entries.append(entry_from_script(artifact, saved, step=step, run_id=run_id))
        else:
            entries.append(entry_from_script(artifact, None, step=step, run_id=run_id))
    return entries


class ArtifactRegistry:
    """The registry of one run: entries in registration order, saved as JSON through fsspec.

    Args:
        url: fsspec URL of the registry file (``<run folder>/registry.json``).
        conversation: the conversation id stamped on every entry, or None.
        turn: the turn number stamped on every entry, or None.

    """

    def __init__(self, url: str, conversation: str | None = None,
                 turn: int | None = None) -> None:
        self.url = url
        self.conversation = conversation
        self.turn = turn
        self.entries: list[RegistryEntry] = []

    def add(self, entries: Iterable[RegistryEntry]) -> None:
        """Register ``entries`` (stamped with the conversation and turn) and save the file.

        A step that ran again replaces its earlier entries of the same ref.

        Raises:
            ArtifactWriteError: the registry file could not be written.

        """
        stamped = [e.model_copy(update={"conversation": self.conversation, "turn": self.turn})
                   for e in entries]
        refs = {e.ref for e in stamped}
        self.entries = [e for e in self.entries if e.ref not in refs] + stamped
        self.save()

    def save(self) -> None:
        """Write the registry file (atomically).

        Raises:
            ArtifactWriteError: it could not be written.

        """
        payload = [e.model_dump(mode="json") for e in self.entries]
        write_atomic(self.url, json.dumps(payload, ensure_ascii=False, indent=2).encode())

    @classmethod
    def load(cls, url: str) -> list[RegistryEntry]:
        """The entries saved at ``url`` (empty when there is no file).

        Raises:
            ArtifactWriteError: the file exists but cannot be read or is not a registry.

        """
        fs, path = filesystem_for(url)
        if not fs.exists(path):
            return []
        try:
            with fs.open(path, "rt", encoding="utf-8") as handle:
                return [RegistryEntry.model_validate(item) for item in json.load(handle)]
        except (OSError, ValueError) as error:
            raise ArtifactWriteError(f"cannot read the artifact registry {url}: "
                                     f"{str(error).splitlines()[0]}") from None
