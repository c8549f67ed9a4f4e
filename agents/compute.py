"""The compute agent: writes one GeoPandas/Shapely script for the sandbox.

The script reads the step's input artifacts from ``/input/<name>.geojson|json``, may write
files to ``/scratch``, and prints as its last line one JSON object
``{"status": "success"|"error", "summary": str, "result": object|array}``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from agents.intent import Intent
from agents.planner import ExecutionConstraints, PlanStep

# The Agent itself is defined at the end of this module (see agents/README.md).


class ComputeScript(BaseModel):
    """The script for the step."""

    script: str = Field(description="Complete Python source run in the sandbox.")
    method: str = Field(description="Method in one sentence, with the CRS used for distances "
                        "and areas (e.g. 'UTM 17N, EPSG:32617').")


class ComputeRefusal(BaseModel):
    """The step cannot be computed from its inputs; names the fields that are missing."""

    reason: str
    missing_fields: list[str] = Field(default_factory=list)


ComputeOutput = ComputeScript | ComputeRefusal


@dataclass(frozen=True)
class InputArtifact:
    """An input file of the step with its compact preview (columns, rows, geometry, bbox)."""

    name: str
    path_in_sandbox: str
    preview: str


@dataclass(frozen=True)
class ComputeAttempt:
    """A failed earlier attempt: the script and the classified sandbox error."""

    script: str
    error: str


@dataclass(frozen=True)
class ComputeDeps:
    """What the compute agent sees (after CGD-QCSF Table 4)."""

    question: str
    step: PlanStep
    constraints: ExecutionConstraints
    inputs: list[InputArtifact]
    schema_text: str
    executed_sql: list[str]
    intent: Intent
    previous_attempts: list[ComputeAttempt] = field(default_factory=list)
