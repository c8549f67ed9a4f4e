"""The reviewer agent: judges the evidence against the answer contract.

It reads only the question, the answer contract, the evidence and a compact state summary,
and decides: accept, revise (the last step), repair (an upstream step) or replan.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from pydantic import BaseModel, Field

from geoask.answers import AnswerType

# The Agent itself is defined at the end of this module (see agents/README.md).


class ReviewDecision(StrEnum):
    """What the execution-state manager should do next."""

    ACCEPT = "accept"
    REVISE = "revise"
    REPAIR = "repair"
    REPLAN = "replan"


class Review(BaseModel):
    """The reviewer's verdict."""

    decision: ReviewDecision
    reason: str = Field(description="Why, in one or two sentences, naming the evidence.")
    target_step: str | None = Field(
        default=None, description="Step to revise or repair (e.g. 'sql-1'); None otherwise.")


class ReviewRefusal(BaseModel):
    """The evidence cannot be judged (for example it is empty or unreadable)."""

    reason: str


ReviewOutput = Review | ReviewRefusal


@dataclass(frozen=True)
class ReviewerDeps:
    """What the reviewer sees."""

    question: str
    answer_type: AnswerType
    answer_fields: list[str]
    evidence: str
    state_summary: str
