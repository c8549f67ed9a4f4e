"""The question's vocabulary: intent, plan and review models the flow and the agents share.

The intent, planner and reviewer agents (``agents/``) answer with these models; the
execution-state manager (:mod:`geoask.run.state`) and the variants (:mod:`geoask.run.variants`) read
them. Field descriptions and docstrings of the output models are sent to the model as their
JSON schema (kept compact, :mod:`geoask.base.compact_schema`); notes for developers are comments.

Intent tuple (after CGD-QCSF): execution control (in scope / rejection type), spatiotemporal
scope (places, years, months), analysis target, spatial topology (predicate, distance with unit),
operation intent, and geographic-hierarchy completion (a place resolved to the levels the
database has, e.g. a city to its county and state).

Plan (after CGD-QCSF): ordered SQL-retrieval and Python-computation steps with execution
constraints; adjacent SQL extractions form one SQL step, a chain of Python computations one
script, so a plan alternates SQL and Python steps and starts with SQL.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, Field, field_validator

from geoask.base.compact_schema import COMPACT_SCHEMA, NESTED_SCHEMA, BareEnumSchema
from geoask.catalog.model import SpatialGranularity
from geoask.sql.context import SpatialPolicy
from geoask.vocabulary.answers import AnswerType
from geoask.vocabulary.text import LIST_ITEMS, Phrase, Sentence

DistanceUnit = Literal["m", "km", "mi", "ft", "nmi"]
OperationCategory = Literal["attribute_filter_rank", "grouped_aggregation", "temporal_comparison",
                            "spatial_geometry", "statistics"]
TemporalComparison = Literal["none", "period_vs_period", "vs_baseline", "trend"]

# --- intent --------------------------------------------------------------------------------


class RejectionType(BareEnumSchema, StrEnum):
    """Why a question is not answered."""

    CHIT_CHAT = "chit_chat"
    UNSAFE = "unsafe"
    NOT_ANSWERABLE = "not_answerable"


class SpatialPredicate(BareEnumSchema, StrEnum):
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


class OperationIntent(BareEnumSchema, StrEnum):
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

    model_config = NESTED_SCHEMA

    value: float = Field(gt=0)
    unit: DistanceUnit

    @property
    def metres(self) -> float:
        """The distance in metres."""
        return self.value * _METRES_PER_UNIT[self.unit]


class PlaceResolution(BaseModel):
    """A place named in the question, resolved to a level the database holds."""

    model_config = NESTED_SCHEMA

    mentioned: Phrase = Field(description="As written.")
    level: Literal["point", "city", "county", "state", "country", "region", "grid_cell", "other"]
    resolved_to: Phrase | None = None


class SpatiotemporalScope(BaseModel):
    """Where and when the question is about."""

    model_config = NESTED_SCHEMA

    places: list[PlaceResolution] = Field(default_factory=list, max_length=LIST_ITEMS)
    # a year outside 1800-2100 is almost surely a misread number, not a year
    years: list[Annotated[int, Field(ge=1800, le=2100)]] = Field(default_factory=list,
                                                                max_length=LIST_ITEMS)
    months: list[Annotated[int, Field(ge=1, le=12)]] = Field(default_factory=list, max_length=12)


class SpatialTopology(BaseModel):
    """The spatial relation, with its distance when there is one."""

    model_config = NESTED_SCHEMA

    predicate: SpatialPredicate = SpatialPredicate.NONE
    distance: Distance | None = None
    reference: Phrase | None = Field(default=None, description="Measured from (code or name).")


class Intent(BaseModel):
    """An in-scope question, parsed."""

    model_config = COMPACT_SCHEMA

    target: Phrase
    scope: SpatiotemporalScope
    topology: SpatialTopology
    operation: OperationIntent
    top_k: int | None = Field(default=None, ge=1)
    temporal_granularity: Literal["static", "annual", "decadal", "monthly", "daily"] | None = None


class IntentRejection(BaseModel):
    """A question geoask does not answer, with a polite reply."""

    model_config = COMPACT_SCHEMA

    rejection_type: RejectionType
    message: Sentence


IntentOutput = Intent | IntentRejection


# --- plan ----------------------------------------------------------------------------------


class StepKind(BareEnumSchema, StrEnum):
    """Where a step runs."""

    SQL = "sql"
    PYTHON = "python"


class ExecutionConstraints(BaseModel):
    """Explicit execution constraints handed to the SQL and compute agents."""

    model_config = NESTED_SCHEMA

    computation_needed: bool
    geometry_needed: bool
    input_mode: Literal["single", "multiple"]
    spatial_granularity: SpatialGranularity
    operation_category: OperationCategory
    temporal_comparison: TemporalComparison = "none"


class PlanStep(BaseModel):
    """One step of the plan."""

    model_config = NESTED_SCHEMA

    id: str = Field(pattern=r"^(sql|python)-\d+$")  # numbering: ids_numbered_in_order
    objective: Sentence
    tables: list[Phrase] = Field(default_factory=list, max_length=LIST_ITEMS)
    inputs: list[Phrase] = Field(default_factory=list, max_length=LIST_ITEMS)
    expected_output: Sentence
    success_criteria: Sentence | None = None
    top_k: int | None = Field(default=None, ge=1)

    @property
    def kind(self) -> StepKind:
        """Where the step runs, as its id says: ``sql-1`` -> sql, ``python-2`` -> python."""
        return StepKind(self.id.partition("-")[0])

    @field_validator("tables")
    @classmethod
    def _unqualified(cls, tables: list[str]) -> list[str]:
        """Table names without a schema prefix ('us_census.ny8_tracts' -> 'ny8_tracts').

        Catalog table names are unique across its schemas, so the bare name is enough.
        """
        return [name.strip().rpartition(".")[2] for name in tables]


class Plan(BaseModel):
    """An ordered plan for one question."""

    model_config = COMPACT_SCHEMA

    steps: list[PlanStep] = Field(min_length=1)
    constraints: ExecutionConstraints
    answer_type: AnswerType
    answer_fields: list[Phrase] = Field(default_factory=list, max_length=LIST_ITEMS)


class PlanRefusal(BaseModel):
    """The question cannot be planned against this schema."""

    model_config = COMPACT_SCHEMA

    reason: Sentence


PlanOutput = Plan | PlanRefusal


@dataclass(frozen=True)
class PlanAllowance:
    """What a pipeline variant allows a plan; the planner's rules read this, not the variant.

    Attributes:
        label: the variant's name, as the planner's prompt and messages show it (no rule
            looks it up).
        python_steps: True if a plan may have Python steps.
        policy: spatial policy of the SQL the steps run (the planner is told its rule).

    """

    label: str
    python_steps: bool
    policy: SpatialPolicy


# --- review --------------------------------------------------------------------------------


class ReviewDecision(BareEnumSchema, StrEnum):
    """What the execution-state manager should do next."""

    ACCEPT = "accept"
    REVISE = "revise"
    REPAIR = "repair"
    REPLAN = "replan"


class Review(BaseModel):
    """The reviewer's verdict."""

    model_config = COMPACT_SCHEMA

    decision: ReviewDecision
    reason: Sentence
    target_step: str | None = None


class ReviewRefusal(BaseModel):
    """The evidence cannot be judged (empty or unreadable)."""

    model_config = COMPACT_SCHEMA

    reason: Sentence


ReviewOutput = Review | ReviewRefusal

