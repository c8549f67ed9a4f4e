"""The offline ``reference`` model: replays a benchmark case's verified program through the agents.

``--model reference`` (``GEOASK_MODEL=reference``) answers every agent of the question flow
with what the case's reference program implies, through the same pydantic-ai output tools a
real model calls (a ``FunctionModel`` built on :mod:`geoask.models.scripted`'s mechanism):

- ``intent``: an :class:`~geoask.vocabulary.plan.Intent` consistent with the case (operation from
  its
  category and answer type, years named in the question, Top-K from the reference SQL);
- ``planner``: a :class:`~geoask.vocabulary.plan.Plan` whose steps mirror the reference steps
  (adjacent
  SQL steps are consolidated into one step, a chain of Python steps into one script that runs
  them in order and keeps each intermediate result under ``/scratch``);
- ``sql``: the reference statements of the step (statement names = artifact names the
  scripts read from ``/input``); ``compute``: the reference script of the step;
- ``reviewer``: ``accept``; ``answer``: the :class:`~geoask.vocabulary.answers.FinalAnswer`
  PROJECTED FROM
  THE EVIDENCE shown to the answer agent with the case's answer contract
  (:func:`geoask.cases.projection.project_answer`) - the expected value is never read.

- ``react`` (the REACT baseline's one agent): the program as a sequence of tool calls -
  ``inspect_schema``, ``run_sql`` per statement, ``run_cell`` per Python step - then the final
  answer projected from the tool results (:mod:`.react`).

``reference-faulty`` also injects one deterministic first-attempt fault into a documented
subset of the cases, then replays the correct program (:mod:`.faults`).

Modules, each one concern:

- :mod:`.steps`: the case's reference program as consolidated plan steps;
- :mod:`.intent`, :mod:`.plan`, :mod:`.answer`: the replies of the intent, planner and answer
  agents;
- :mod:`.faults`: the faults of ``reference-faulty``;
- :mod:`.react`: the REACT agent's tool-call sequence, faults and recoveries included;
- :mod:`.replay`: :class:`ReferenceModel`, which finds the case of a prompt and replies to
  every role (SQL, compute and review replies are built there).

This package exposes the model and its names; the reply builders are imported from their
module.
"""

from geoask.models.reference.replay import (
    REFERENCE,
    REFERENCE_FAULTY,
    REFERENCE_MODELS,
    UNKNOWN_QUESTION_MESSAGE,
    ReferenceModel,
    reference_model,
)

__all__ = [
    "REFERENCE",
    "REFERENCE_FAULTY",
    "REFERENCE_MODELS",
    "UNKNOWN_QUESTION_MESSAGE",
    "ReferenceModel",
    "reference_model",
]
