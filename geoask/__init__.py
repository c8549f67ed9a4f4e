"""geoask: answers questions about spatial data in PostGIS by generating, checking and running code.

``from geoask import ask`` is the Python API (:func:`geoask.app.api.ask`; ``ask_async`` for
async code); it is imported on first use, so ``import geoask`` stays fast (no Prefect,
geopandas or agents).

Importing geoask sets offline defaults for libraries that would otherwise phone home or download
models (Prefect and chromadb telemetry, Hugging Face hub access); a value the user already set
in the environment wins.
"""

import geoask.base.offline  # noqa: F401  (offline defaults before anything imports Prefect)

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (a fast import)
if TYPE_CHECKING:
    from geoask.app.api import ask, ask_async

__version__ = "0.1.0"
__all__ = ["ask", "ask_async"]


def __getattr__(name: str) -> object:
    """``geoask.ask`` and ``geoask.ask_async``, imported lazily (:mod:`geoask.app.api`)."""
    if name in __all__:
        from geoask.app import api

        return getattr(api, name)
    raise AttributeError(f"module 'geoask' has no attribute {name!r}")
