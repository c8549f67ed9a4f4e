"""What :func:`geoask.ask` returns: the run's result, with the run's data to carry on with.

:class:`AskResult` is the flow's :class:`geoask.vocabulary.question_result.QuestionResult`
(status, answer, message, evidence, maps, ...) plus what an analyst picks up next, read from
the run's artifact folder (its ``registry.json``):

- :attr:`AskResult.gdf`: the answer's features as a GeoDataFrame in WGS 84 (EPSG:4326), with
  the answer's values joined on (rank, value, ... of a ranked list); planar SRID 0 data in their
  own coordinates with no CRS (never a guessed one);
- :attr:`AskResult.df`: the answer's payload as a table;
- :attr:`AskResult.sql` / :attr:`AskResult.scripts`: the SQL statements and Python scripts
  the run executed, in step order;
- :meth:`AskResult.open_map`: ``map.html`` in the browser;
- :meth:`AskResult.to_geopackage`: every layer of the run, native CRS kept (opens in QGIS).

geopandas is imported on the first use of these, not with the result.
"""

from __future__ import annotations

import webbrowser
from typing import TYPE_CHECKING

from geoask.base.answer_text import answer_rows
from geoask.base.storage import filesystem_for
from geoask.errors import ConfigurationError
from geoask.vocabulary.question_result import QuestionResult

if TYPE_CHECKING:
    import geopandas as gpd
    import pandas as pd

    from geoask.maps.geopackage import GeoPackage
    from geoask.records.artifact_registry import RegistryEntry


class AskResult(QuestionResult):
    """A question run's result with its data (see the module docstring)."""

    @classmethod
    def of(cls, result: QuestionResult) -> AskResult:
        """``result`` (as the flow, the server or the warm worker returned it) as an AskResult."""
        return cls.model_validate(result.model_dump())

    def registry(self) -> list[RegistryEntry]:
        """The run's registry entries (every exported file and script output), in order."""
        from geoask.records.artifact_registry import REGISTRY_FILE, ArtifactRegistry

        return ArtifactRegistry.load(f"{self.artifact_folder.rstrip('/')}/{REGISTRY_FILE}")

    @property
    def gdf(self) -> gpd.GeoDataFrame | None:
        """The answer's features with its values; None when the run exported no features.

        In WGS 84 (EPSG:4326); planar SRID 0 data in their own coordinates with no CRS.
        """
        from geoask.maps.answer_frame import answer_frame

        return answer_frame(self.answer, self.registry())

    @property
    def df(self) -> pd.DataFrame:
        """The answer's payload as a table (one row per entity, item or record).

        With a ``name`` column beside the codes the catalog's label columns name (``names``).
        """
        import pandas as pd

        if self.answer is None:
            return pd.DataFrame()
        return pd.DataFrame(answer_rows(self.answer.data_payload, self.names))

    @property
    def sql(self) -> list[str]:
        """The SQL statements whose results the run exported, in step order."""
        return list(dict.fromkeys(entry.source for entry in self.registry()
                                  if entry.made_by == "sql" and entry.source))

    @property
    def scripts(self) -> list[str]:
        """The Python scripts the run executed in the sandbox, in step order."""
        urls = dict.fromkeys(entry.source for entry in self.registry()
                             if entry.made_by == "script" and entry.source)
        return [_read_text(url) for url in urls]

    def open_map(self) -> bool:
        """Open the interactive ``map.html`` in the web browser; False when there is none."""
        html = next((url for url in self.maps if url.endswith(".html")), None)
        if html is None:
            return False
        return webbrowser.open(html if "://" in html else f"file://{html}")

    def to_geopackage(self, path: str) -> GeoPackage:
        """Write every layer of the run to the GeoPackage ``path``, each in its native CRS.

        Args:
            path: a local path or fsspec URL ending ``.gpkg`` (replaced if it exists); a
                local path's folder must exist (none is created).

        Returns:
            The layers written and the artifacts left out (scalars, rasters, other files).

        Raises:
            ConfigurationError: ``path`` does not end ``.gpkg``, or its local folder does not
                exist.

        """
        from geoask.maps.geopackage import write_geopackage

        if not str(path).lower().endswith(".gpkg"):
            raise ConfigurationError(f"a GeoPackage path ends .gpkg, not {path!r}")
        filesystem, local = filesystem_for(str(path))
        folder = local.rstrip("/").rpartition("/")[0] or "/"
        if "file" in _protocols(filesystem) and not filesystem.isdir(folder):
            raise ConfigurationError(f"the folder {folder} of {path!r} does not exist; create "
                                     "it first (to_geopackage creates no folders)")
        return write_geopackage(self.registry(), str(path))


def _protocols(filesystem: object) -> tuple[str, ...]:
    protocol = getattr(filesystem, "protocol", ())
    return (protocol,) if isinstance(protocol, str) else tuple(protocol)


def _read_text(url: str) -> str:
    filesystem, path = filesystem_for(url)
    with filesystem.open(path, "rt", encoding="utf-8") as handle:
        return str(handle.read())
