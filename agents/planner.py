"""The planner agent: ordered SQL-retrieval and Python-computation steps with constraints.

Consolidation (after CGD-QCSF): adjacent SQL extractions form one SQL step (which may emit
several statements), a chain of Python computations forms one script, so a plan alternates
SQL and Python steps and always starts with SQL.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, Field

from agents.intent import Intent
from geoask.answers import AnswerType

# The Agent itself is defined at the end of this module (see agents/README.md).


class StepKind(StrEnum):
    """Where a step runs."""

    SQL = "sql"
    PYTHON = "python"


class ExecutionConstraints(BaseModel):
    """Explicit execution constraints handed to the SQL and compute agents."""

    computation_needed: bool = Field(description="True if Python must compute after SQL.")
    geometry_needed: bool = Field(description="True if geometry must be exported from SQL.")
    input_mode: Literal["single", "multiple"] = Field(
        description="Whether the computation reads one exported result or several.")
    spatial_granularity: Literal[
        "state", "county", "grid_cell", "point", "line", "country", "none"]
    operation_category: Literal[
        "attribute_filter_rank", "grouped_aggregation", "temporal_comparison",
        "spatial_geometry", "statistics"]
    temporal_comparison: Literal["none", "period_vs_period", "vs_baseline", "trend"] = "none"


class PlanStep(BaseModel):
    """One step of the plan."""

    id: str = Field(pattern=r"^(sql|python)-[1-9][0-9]*$", description="'sql-1', 'python-1'...")
    kind: StepKind
    objective: str = Field(description="What this step must produce, in one or two sentences.")
    inputs: list[str] = Field(
        default_factory=list, description="Ids of earlier steps whose artifacts this step reads.")
    expected_output: str = Field(description="Columns/fields the step's output must contain.")
    success_criteria: str = Field(description="How to tell the step worked.")
    top_k: int | None = Field(
        default=None, ge=1, description="Set when the step must return an ordered Top-K.")


class Plan(BaseModel):
    """An ordered plan for one question."""

    steps: list[PlanStep] = Field(min_length=1)
    constraints: ExecutionConstraints
    answer_type: AnswerType
    answer_fields: list[str] = Field(
        default_factory=list,
        description="Fields of the last step's output the answer is read from (id, value...).")
    rationale: str = Field(description="Why these steps, in one or two sentences.")


class PlanRefusal(BaseModel):
    """The question cannot be planned against this schema."""

    reason: str


PlanOutput = Plan | PlanRefusal


@dataclass(frozen=True)
class PlannerDeps:
    """What the planner sees.

    The question, its intent, the pre-filtered schema, the variant and, on a replan, why the
    earlier plans failed.
    """

    question: str
    intent: Intent
    schema_text: str
    variant: str
    previous_failures: list[str] = field(default_factory=list)
