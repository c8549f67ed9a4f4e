"""The answer agent: turns the accepted evidence into ``{answer_type, data_payload, summary}``.

The payload must validate against the answer type's JSON Schema (geoask.answers); numbers are
copied from the evidence, never computed or guessed by the model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from geoask.answers import AnswerType

# The Agent itself is defined at the end of this module (see agents/README.md).


class FinalAnswer(BaseModel):
    """The typed final answer."""

    answer_type: AnswerType
    data_payload: Any = Field(description="Shaped per the answer type's JSON Schema.")
    summary: str = Field(description="One or two sentences for the user, with units.")


class AnswerRefusal(BaseModel):
    """No answer can be given from the evidence."""

    reason: str


AnswerOutput = FinalAnswer | AnswerRefusal


@dataclass(frozen=True)
class AnswerDeps:
    """What the answer agent sees: the question, the contract and the final evidence."""

    question: str
    answer_type: AnswerType
    answer_fields: list[str]
    evidence: str
