"""A join path of the semantic catalog, and the cardinality of a join between two tables.

Kept apart from :mod:`geoask.catalog.model` (which re-exports :class:`JoinPath`) so each module
stays small. A join's cardinality follows from the keys of its two ends: a join onto a primary
key, UNIQUE constraint or unique index is ``many_to_one`` (each left row finds at most one right
row); :func:`cardinality` is the one rule, :meth:`~geoask.catalog.model.Catalog.join_cardinality`
applies it to a catalog.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

SpatialPredicate = Literal["ST_Within", "ST_Intersects"]
"""How a spatial join path relates its ends (see :mod:`geoask.catalog.spatial_joins`)."""

Cardinality = Literal["one_to_one", "many_to_one", "one_to_many", "many_to_many"]
"""How many right rows one left row meets, and the other way round."""


def cardinality(left_unique: bool, right_unique: bool) -> Cardinality:
    """The cardinality of ``left ~ right`` from whether each end's columns are unique.

    >>> cardinality(False, True), cardinality(True, True), cardinality(False, False)
    ('many_to_one', 'one_to_one', 'many_to_many')
    """
    if left_unique:
        return "one_to_one" if right_unique else "one_to_many"
    return "many_to_one" if right_unique else "many_to_many"


class JoinPath(BaseModel):
    """A documented way to relate two tables (by key, by shared attribute, or spatially)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    left: str = Field(description="'table.column' or 'table' for spatial joins.")
    right: str
    kind: Literal["foreign_key", "attribute", "spatial"]
    description: str
    inferred: bool = Field(
        default=False,
        description="Guessed by `catalog draft` (same-named key columns, same-named columns "
        "whose sampled values match, or overlapping geometry tables); a person confirms it "
        "(and sets this false) or deletes it.",
    )
    predicate: SpatialPredicate | None = Field(
        default=None,
        description="Spatial joins: ST_Within (a point on each left geometry's surface lies in "
        "a right geometry) or ST_Intersects; `catalog check` then tests that sampled rows "
        "still match.",
    )
    match_share: float | None = Field(
        default=None, ge=0.0, le=1.0,
        description="Share (0-1) of `sampled` left rows (spatial joins: by `predicate`) or "
        "sampled distinct left values (attribute joins) that matched a right row when drafted.",
    )
    sampled: int | None = Field(default=None, ge=0,
                                description="Left rows (or distinct left values) sampled.")
    cardinality: Cardinality | None = Field(
        default=None,
        description="Key and attribute joins: many_to_one when the right end is a primary key, "
        "UNIQUE constraint or unique index (each left row meets at most one right row); None: "
        "derived from the tables' keys (Catalog.join_cardinality).",
    )

    @model_validator(mode="after")
    def _predicate_is_spatial(self) -> JoinPath:
        if self.kind != "spatial" and self.predicate:
            raise ValueError(f"join path {self.left} ~ {self.right}: a predicate is for spatial "
                             "joins only")
        if self.kind == "foreign_key" and self.match_share is not None:
            raise ValueError(f"join path {self.left} ~ {self.right}: match_share is for "
                             "spatial and attribute joins only")
        if self.kind == "spatial" and self.cardinality is not None:
            raise ValueError(f"join path {self.left} ~ {self.right}: cardinality is for key "
                             "and attribute joins only")
        return self
