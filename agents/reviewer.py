"""The reviewer agent: judges the evidence against the answer contract.

It reads only the question, the answer contract, the evidence and a compact state summary,
and decides: accept, revise (the last step), repair (an upstream step) or replan. The review
models are in :mod:`geoask.vocabulary.plan`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pydantic_ai import Agent, RunContext

from agents._checks import raise_for_errors
from agents._schema import COMPACT_OUTPUT_TOOLS
from geoask.vocabulary.answers import AnswerType, contract_text
from geoask.vocabulary.plan import Review, ReviewDecision, ReviewOutput, ReviewRefusal

# The Agent itself is defined at the end of this module (see agents/README.md).


@dataclass(frozen=True)
class ReviewerDeps:
    """What the reviewer sees."""

    question: str
    answer_type: AnswerType
    answer_fields: list[str]
    evidence: str
    state_summary: str


# --- instructions --------------------------------------------------------------------------
# Developer note: the reviewer is the independent evidence-review node of CGD-QCSF; it sees no
# plan internals beyond the compact state summary.

INSTRUCTIONS = """\
Judge whether a finished run's evidence answers the question under its answer contract (type
and fields). Do not compute or correct numbers. Decide:
- accept: it supports a complete answer of that type and fields (right places, years, units,
  ordering, row count).
- revise: the last step's output is close but wrong in fields, ordering, units, filters or row
  count; say what to change.
- repair: an earlier step did not export what a later one needs; target it, name the fields.
- replan: the steps taken cannot produce the answer (wrong tables or approach).
target_step (a step id) only for revise and repair. The reason cites the evidence (a value,
column or row count), in one or two sentences. ReviewRefusal only if the evidence is empty or
unreadable.
"""


# --- checks (pure; one rule each) ----------------------------------------------------------

_STEP_ID = re.compile(r"\b(?:sql|python)-[1-9][0-9]*\b")
_NEEDS_TARGET = frozenset({ReviewDecision.REVISE, ReviewDecision.REPAIR})


def target_given_when_needed(review: Review) -> str | None:
    """Revise and repair name a target step; accept and replan do not.

    >>> target_given_when_needed(Review(decision="repair", reason="geom missing"))
    'decision repair needs target_step (the step to redo, e.g. sql-1)'
    """
    if review.decision in _NEEDS_TARGET and not review.target_step:
        return f"decision {review.decision.value} needs target_step (the step to redo, e.g. sql-1)"
    if review.decision not in _NEEDS_TARGET and review.target_step:
        return f"decision {review.decision.value} takes no target_step; clear it"
    return None


def target_is_known_step(review: Review, state_summary: str) -> str | None:
    """The target step is one of the step ids the state summary mentions (when it names any)."""
    known = sorted(set(_STEP_ID.findall(state_summary)))
    if review.target_step and known and review.target_step not in known:
        return f"target_step {review.target_step} is not a step of this run ({', '.join(known)})"
    return None


def reason_given(review: Review) -> str | None:
    """The decision has a reason."""
    return None if review.reason.strip() else "give the reason, citing the evidence"


def review_errors(output: ReviewOutput, deps: ReviewerDeps) -> list[str]:
    """Every rule the reviewer's ``output`` breaks for ``deps`` (empty when acceptable)."""
    if isinstance(output, ReviewRefusal):
        return [] if output.reason.strip() else ["a refusal needs a reason"]
    candidates = (target_given_when_needed(output), reason_given(output),
                  target_is_known_step(output, deps.state_summary))
    return [error for error in candidates if error is not None]


# --- agent ---------------------------------------------------------------------------------

OUTPUT_RETRIES = 2

reviewer_agent: Agent[ReviewerDeps, ReviewOutput] = Agent(
    output_type=[Review, ReviewRefusal],
    deps_type=ReviewerDeps,
    instructions=INSTRUCTIONS,
    name="reviewer",
    defer_model_check=True,
    retries={"output": OUTPUT_RETRIES},
    capabilities=[COMPACT_OUTPUT_TOOLS],
)


@reviewer_agent.output_validator
def _validate(ctx: RunContext[ReviewerDeps], output: ReviewOutput) -> ReviewOutput:
    return raise_for_errors(review_errors(output, ctx.deps), output)


def prompt(deps: ReviewerDeps) -> str:
    """The user message of the reviewer: question, contract, evidence and state summary."""
    return (f"Question: {deps.question}\n\n"
            f"{contract_text(deps.answer_type, deps.answer_fields)}\n\n"
            f"Evidence:\n{deps.evidence}\n\n"
            f"State summary:\n{deps.state_summary}")
