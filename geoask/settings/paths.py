"""Where geoask's settings point by default: the package folder and the state folder."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).parents[1]
"""The ``geoask`` package folder (the catalog and demo data shipped with it)."""


def default_home() -> Path:
    """``.geoask`` of the source checkout geoask runs from, else ``~/.geoask``.

    Tied to the checkout rather than the working directory, so every command finds the same
    cluster, runtime and artifacts wherever it is started.
    """
    checkout = PACKAGE.resolve().parent
    if (checkout / "pyproject.toml").is_file():
        return checkout / ".geoask"
    return Path.home() / ".geoask"
