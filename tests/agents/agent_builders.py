"""Builders of valid agent inputs/outputs for the agent tests (change one field per case)."""

from __future__ import annotations

from geoask.vocabulary.plan import (
    ExecutionConstraints,
    Intent,
    OperationIntent,
    PlanStep,
    SpatialTopology,
    SpatiotemporalScope,
)


def make_intent(**changes) -> Intent:
    """A valid in-scope intent (a plain filter) with ``changes`` applied."""
    base = Intent(target="counties, population", scope=SpatiotemporalScope(),
                  topology=SpatialTopology(), operation=OperationIntent.FILTER)
    return Intent.model_validate({**dict(base), **changes})


def make_constraints(**changes) -> ExecutionConstraints:
    """Constraints of an SQL-only attribute question with ``changes`` applied."""
    base = ExecutionConstraints(computation_needed=False, geometry_needed=False,
                                input_mode="single", spatial_granularity="county",
                                operation_category="attribute_filter_rank")
    return ExecutionConstraints.model_validate({**base.model_dump(), **changes})


def make_step(step_id: str = "sql-1", **changes) -> PlanStep:
    """A plan step (its kind follows its id)."""
    fields = {"id": step_id, "objective": "get the rows",
              "expected_output": "geoid, name", "success_criteria": "rows returned"}
    fields.update(changes)
    return PlanStep(**fields)


def retry_feedback(messages) -> list[str]:
    """Texts the framework sent back to the model after a rejected output (ModelRetry)."""
    from pydantic_ai.messages import ModelRequest, RetryPromptPart, ToolReturnPart

    texts = []
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, RetryPromptPart | ToolReturnPart):
                    content = part.content
                    texts.append(content if isinstance(content, str) else str(content))
    return texts
