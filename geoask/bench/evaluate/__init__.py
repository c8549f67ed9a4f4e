"""Score one benchmark question: Strict Structured Accuracy (SSA) and the per-case measures.

:func:`score_case` compares the pipeline's final answer (``{answer_type, data_payload,
summary}``, :mod:`geoask.vocabulary.answers`) with the case's verified expected value (canonical
shapes of
:mod:`geoask.cases.projection`) and reads routing, recovery, time and tokens from the
execution log. The rules, each a small pure function of the modules below:

- the answer type must be the contracted one; only the structured payload counts (never the
  summary text);
- a scalar is read from ``value``, the contract's value field, or a single-valued payload; a
  scalar hidden among several values does not count;
- field semantics before numbers: every expected field must be present (same name, or the same
  stem with another unit suffix such as ``distance_m`` for ``distance_km``) and its unit must
  measure the same thing; then values are normalized (lengths via metres, areas via m²,
  percent vs ratio) and compared within the case's tolerance;
- an entity and its value must sit in the same record; plain lists (entity lists, records) may
  have no missing or extra member; ranked lists are compared in order (entries with equal
  expected values may swap);
- entity ids are exact: same type and text (``7`` is not ``"7"`` nor ``7.0``, ``"06075"`` is not
  ``"6075"``);
- flat ``[min_lon, min_lat, max_lon, max_lat]`` and nested ``[[min_lon, min_lat], [max_lon,
  max_lat]]`` bboxes are the same;
- extra explanatory fields are allowed.

List questions (entity list, ranked list, records) also get Exact Set Match, Ranking Exact
Match (ranked lists only) and entity precision/recall/F1. A failure gets a primary root cause
(:class:`RootCause`) from the execution trace where one can be told.

Modules, each one concern (later ones build on earlier ones):

- :mod:`.units`: unit names, conversion factors, field names with unit suffixes;
- :mod:`.values`: :class:`Verdict`; one value or one record's fields within tolerance, ids;
- :mod:`.entities`: entity ids of list answers, set and order matching, :class:`ListMatch`;
- :mod:`.answer_types`: the rule of each answer type and :func:`judge_answer`;
- :mod:`.causes`: :class:`RootCause` of a failure from the verdict and the execution trace;
- :mod:`.score`: the per-run record :class:`CaseScore` and :func:`score_case`.

This package exposes the scoring API; the building blocks are imported from their module.

>>> from geoask.bench.evaluate.units import unit_factor
>>> from geoask.bench.evaluate.values import ids_exact
>>> unit_factor("km", "m"), ids_exact(7, "7")
(0.001, False)
"""

from geoask.bench.evaluate.answer_types import judge_answer
from geoask.bench.evaluate.causes import RootCause, evidence_agrees, root_cause
from geoask.bench.evaluate.entities import ListMatch, list_match
from geoask.bench.evaluate.score import CaseScore, score_case
from geoask.bench.evaluate.values import Verdict

__all__ = [
    "CaseScore",
    "ListMatch",
    "RootCause",
    "Verdict",
    "evidence_agrees",
    "judge_answer",
    "list_match",
    "root_cause",
    "score_case",
]
