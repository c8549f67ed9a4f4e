"""geoask: answers questions about spatial data in PostGIS by generating, checking and running code.

``from geoask import ask`` is the Python API (:func:`geoask.api.ask`); it is imported on first
use, so ``import geoask`` stays fast (no Prefect, geopandas or agents).

Importing geoask sets offline defaults for libraries that would otherwise phone home or download
models (Prefect and chromadb telemetry, Hugging Face hub access); a value the user already set
in the environment wins.
"""

import os

TYPE_CHECKING = False  # as typing.TYPE_CHECKING, without importing typing (a fast import)
if TYPE_CHECKING:
    from geoask.api import ask

OFFLINE_ENVIRONMENT = {
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "DO_NOT_TRACK": "1",
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
    "ANONYMIZED_TELEMETRY": "False",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
}

for _key, _value in OFFLINE_ENVIRONMENT.items():
    os.environ.setdefault(_key, _value)

__version__ = "0.1.0"
__all__ = ["ask"]


def __getattr__(name: str) -> object:
    """``geoask.ask``, imported lazily (:mod:`geoask.api`)."""
    if name == "ask":
        from geoask.api import ask

        return ask
    raise AttributeError(f"module 'geoask' has no attribute {name!r}")
