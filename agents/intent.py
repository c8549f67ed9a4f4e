"""The intent agent: parses a question into the intent tuple, or politely refuses it.

Intent tuple (after CGD-QCSF): execution control (in scope / rejection type), spatiotemporal
scope (places, years, months), analysis target, spatial topology (predicate, distance with unit),
operation intent, and geographic-hierarchy completion (a place resolved to the levels the
database has, e.g. a city to its county and state).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, Field

# The Agent itself is defined at the end of this module (see agents/README.md).


class RejectionType(StrEnum):
    """Why a question is not answered."""

    CHIT_CHAT = "chit_chat"
    UNSAFE = "unsafe"
    NOT_ANSWERABLE = "not_answerable"


class SpatialPredicate(StrEnum):
    """The spatial relation a question asks about."""

    NONE = "none"
    INTERSECTS = "intersects"
    WITHIN = "within"
    CONTAINS = "contains"
    TOUCHES = "touches"
    DISJOINT = "disjoint"
    WITHIN_DISTANCE = "within_distance"
    BEYOND_DISTANCE = "beyond_distance"
    NEAREST = "nearest"


class OperationIntent(StrEnum):
    """What the question wants done with the data."""

    LOOKUP = "lookup"
    FILTER = "filter"
    COUNT = "count"
    RANK_TOP_K = "rank_top_k"
    AGGREGATE = "aggregate"
    COMPARE_PERIODS = "compare_periods"
    COMPARE_BASELINE = "compare_baseline"
    MEASURE = "measure"
    TOPOLOGY = "topology"
    STATISTICS = "statistics"
    REGRESSION = "regression"
    CLUSTERING = "clustering"


_METRES_PER_UNIT = {"m": 1.0, "km": 1000.0, "mi": 1609.344, "ft": 0.3048, "nmi": 1852.0}


class Distance(BaseModel):
    """A distance as stated in the question."""

    value: float = Field(gt=0, description="The number as stated.")
    unit: Literal["m", "km", "mi", "ft", "nmi"] = Field(description="The unit as stated.")

    @property
    def metres(self) -> float:
        """The distance in metres."""
        return self.value * _METRES_PER_UNIT[self.unit]


class PlaceResolution(BaseModel):
    """A place named in the question, resolved to a level the database holds."""

    mentioned: str = Field(description="The place as written, e.g. 'Raleigh'.")
    level: Literal["point", "city", "county", "state", "country", "region", "grid_cell", "other"]
    resolved_to: str | None = Field(
        default=None, description="The database-level unit, e.g. 'Wake County, NC' for Raleigh."
    )
    resolved_level: str | None = Field(
        default=None, description="Level of resolved_to: county, state, country..."
    )


class SpatiotemporalScope(BaseModel):
    """Where and when the question is about."""

    places: list[PlaceResolution] = Field(default_factory=list)
    years: list[int] = Field(default_factory=list, description="Calendar years named or implied.")
    months: list[int] = Field(default_factory=list, description="Months 1-12 named or implied.")


class SpatialTopology(BaseModel):
    """The spatial relation, with its distance when there is one."""

    predicate: SpatialPredicate = SpatialPredicate.NONE
    distance: Distance | None = None
    reference: str | None = Field(default=None, description="What the relation is measured from.")


class Intent(BaseModel):
    """An in-scope question, parsed."""

    target: str = Field(description="The analysis target: what is counted, ranked or measured.")
    scope: SpatiotemporalScope
    topology: SpatialTopology
    operation: OperationIntent
    top_k: int | None = Field(default=None, ge=1, description="K of a Top-K question.")
    spatial_granularity: Literal[
        "state", "county", "grid_cell", "point", "line", "country", "none"] | None = Field(
        default=None, description="Unit of the answer's rows, when the question fixes it.")
    temporal_granularity: Literal["static", "annual", "decadal", "monthly", "daily"] | None = None


class IntentRejection(BaseModel):
    """A question geoask does not answer, with a polite reply."""

    rejection_type: RejectionType
    message: str = Field(description="A short, polite reply saying what geoask can answer.")


IntentOutput = Intent | IntentRejection


@dataclass(frozen=True)
class IntentDeps:
    """What the intent agent sees: the question and a one-line-per-table catalog summary."""

    question: str
    catalog_summary: str
