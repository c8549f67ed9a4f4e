"""The intent agent: parses a question into the intent tuple, or politely refuses it.

The intent tuple and its models are in :mod:`geoask.vocabulary.plan`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pydantic_ai import Agent, RunContext

from agents._checks import raise_for_errors
from agents._schema import COMPACT_OUTPUT_TOOLS
from geoask.vocabulary.plan import (
    Intent,
    IntentOutput,
    IntentRejection,
    OperationIntent,
    SpatialPredicate,
)

# The Agent itself is defined at the end of this module (see agents/README.md).


@dataclass(frozen=True)
class IntentDeps:
    """What the intent agent sees: the question and a one-line-per-table catalog summary.

    ``conversation``: in a conversation turn, the bounded history block
    (:func:`geoask.run.conversation.history_block`); empty for a standalone question.
    """

    question: str
    catalog_summary: str
    conversation: str = ""


# --- instructions --------------------------------------------------------------------------
# Developer note: these sentences are the agent's system instructions; keep them rules, not
# examples of answers. The rules follow the CGD-QCSF intent tuple (execution control,
# spatiotemporal scope, analysis target, spatial topology, operation intent) plus geographic
# hierarchy completion.

INSTRUCTIONS = """\
Fill in the intent tuple of one question about the tables listed; never answer it.
- IntentRejection if it is small talk or about you (chit_chat), harmful or asks to change,
  delete or export data (unsafe), or needs data the tables lack (not_answerable), with a polite
  message on what geoask can answer. Else Intent, in GIS terms:
- target: entities and metric analysed (e.g. "counties, 2020 population density").
- scope: places named, with their level; years and months (1-12) named or implied. A place
  finer than the tables hold (a city when they hold counties): resolved_to is its enclosing
  unit and level (Raleigh -> "Wake County, NC (county)").
- topology: predicate; distance with its unit as stated; reference: what it is measured from,
  by its code or name as stored (e.g. "JFK", "I-95"; the answer map finds it by that).
- top_k: K of a Top-K question, only with operation rank_top_k.
- temporal_granularity: time step of the answer's rows, if fixed.
"""


# --- checks (pure; one rule each) ----------------------------------------------------------

_DISTANCE_PREDICATES = frozenset({SpatialPredicate.WITHIN_DISTANCE,
                                  SpatialPredicate.BEYOND_DISTANCE})


def topk_has_k(intent: Intent) -> str | None:
    """A Top-K operation states K, and K is only stated for a Top-K operation.

    >>> from geoask.vocabulary.plan import SpatialTopology, SpatiotemporalScope
    >>> topk_has_k(Intent(target="t", scope=SpatiotemporalScope(), topology=SpatialTopology(),
    ...                   operation=OperationIntent.RANK_TOP_K)) is not None
    True
    """
    if intent.operation is OperationIntent.RANK_TOP_K and intent.top_k is None:
        return "operation rank_top_k needs top_k (the K the question asks for)"
    if intent.operation is not OperationIntent.RANK_TOP_K and intent.top_k is not None:
        return "top_k is set but operation is not rank_top_k; set operation to rank_top_k or " \
               "clear top_k"
    return None


def distance_matches_predicate(intent: Intent) -> str | None:
    """within_distance/beyond_distance carry a distance; other predicates (but nearest) do not."""
    topology = intent.topology
    if topology.predicate in _DISTANCE_PREDICATES and topology.distance is None:
        return f"predicate {topology.predicate.value} needs topology.distance with its unit"
    if topology.distance is not None and topology.predicate not in (
            _DISTANCE_PREDICATES | {SpatialPredicate.NEAREST}):
        return (f"a distance is given but the predicate is {topology.predicate.value}; use "
                "within_distance or beyond_distance")
    return None


def comparison_has_two_periods(intent: Intent) -> str | None:
    """A period comparison names at least two years or months."""
    if intent.operation is OperationIntent.COMPARE_PERIODS and (
            len(intent.scope.years) < 2 and len(intent.scope.months) < 2):
        return "operation compare_periods needs at least two years (or months) in scope"
    return None


def target_is_named(intent: Intent) -> str | None:
    """The analysis target is not blank."""
    return None if intent.target.strip() else "target is empty: name what is analysed"


INTENT_RULES: tuple[Callable[[Intent], str | None], ...] = (
    target_is_named,
    topk_has_k,
    distance_matches_predicate,
    comparison_has_two_periods,
)


def intent_errors(output: IntentOutput) -> list[str]:
    """Every rule ``output`` breaks (empty when it is acceptable)."""
    if isinstance(output, IntentRejection):
        return [] if output.message.strip() else ["the rejection needs a polite message"]
    return [error for rule in INTENT_RULES if (error := rule(output)) is not None]


# --- agent ---------------------------------------------------------------------------------

OUTPUT_RETRIES = 2

intent_agent: Agent[IntentDeps, IntentOutput] = Agent(
    output_type=[Intent, IntentRejection],
    deps_type=IntentDeps,
    instructions=INSTRUCTIONS,
    name="intent",
    defer_model_check=True,
    retries={"output": OUTPUT_RETRIES},
    capabilities=[COMPACT_OUTPUT_TOOLS],
)


@intent_agent.output_validator
def _validate(ctx: RunContext[IntentDeps], output: IntentOutput) -> IntentOutput:
    return raise_for_errors(intent_errors(output), output)


def prompt(deps: IntentDeps) -> str:
    """The user message of the intent agent: the question, the catalog summary, the history."""
    text = (f"Question: {deps.question}\n\n"
            f"Tables of the database (one per line):\n{deps.catalog_summary}")
    return f"{text}\n\n{deps.conversation}" if deps.conversation else text
