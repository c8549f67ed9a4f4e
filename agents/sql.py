"""The SQL agent: writes read-only SQL statements for one plan step.

Every statement must pass the SQL guard (geoask.sql) under the variant's spatial policy; on a
guard or database error the agent is called again with the classified error.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from agents.planner import ExecutionConstraints, PlanStep

# The Agent itself is defined at the end of this module (see agents/README.md).


class SqlStatement(BaseModel):
    """One statement; its result is exported as the artifact ``<name>.geojson|json``."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_]{0,39}$", description="Artifact name, snake_case.")
    sql: str = Field(description="One read-only PostgreSQL query (SELECT / WITH ... SELECT).")
    purpose: str = Field(description="What the result holds, in one sentence.")


class SqlDraft(BaseModel):
    """The statements for the step."""

    statements: list[SqlStatement] = Field(min_length=1, max_length=6)
    needs_python: bool = Field(
        default=False,
        description="True if the question still needs a Python computation on these results "
        "(used when there is no planner).")


class SqlRefusal(BaseModel):
    """The step cannot be done with the given schema."""

    reason: str


SqlOutput = SqlDraft | SqlRefusal


@dataclass(frozen=True)
class SqlAttempt:
    """A failed earlier attempt: the SQL and the classified error it met."""

    sql: str
    error: str


@dataclass(frozen=True)
class SqlDeps:
    """What the SQL agent sees."""

    question: str
    step: PlanStep
    schema_text: str
    constraints: ExecutionConstraints
    policy: str
    previous_attempts: list[SqlAttempt] = field(default_factory=list)
    # fields a downstream step found missing (dependency backtracking)
    required_fields: list[str] = field(default_factory=list)
