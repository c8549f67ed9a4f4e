"""The granularities of a catalog table: the spatial unit and the time step one row describes.

Part of the catalog model (:mod:`geoask.catalog.model`, which re-exports these names).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import StringConstraints

GRANULARITY_LABEL_PATTERN = r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$"
"""A spatial granularity label: lower_snake_case, e.g. ``census_tract`` or ``canton``."""

SpatialGranularity = Annotated[
    str, StringConstraints(pattern=GRANULARITY_LABEL_PATTERN, max_length=63)
]
"""The spatial unit one row of a table describes: an open, lower_snake_case label.

Any unit a database has is allowed (``parcel``, ``census_tract``, ``canton``, ``station``);
``none`` means rows are not places. :data:`COMMON_SPATIAL_GRANULARITIES` lists common values.
A value that is not lower_snake_case (``Census Tract``) fails validation.
"""

COMMON_SPATIAL_GRANULARITIES: tuple[str, ...] = (
    "state", "county", "grid_cell", "point", "line", "country", "canton", "raster_cell", "none",
)
"""Labels in common use (those of the demo catalog); documentation, not a closed list."""


class TemporalGranularity(StrEnum):
    """The time step one row of a table describes (``static``: no time dimension).

    A closed, ordered set of calendar steps (the retrieval filter ranks them from fine to
    coarse), unlike the open :data:`SpatialGranularity` labels.
    """

    STATIC = "static"
    HOURLY = "hourly"
    DAILY = "daily"
    WEEKLY = "weekly"
    MONTHLY = "monthly"
    QUARTERLY = "quarterly"
    ANNUAL = "annual"
    DECADAL = "decadal"
