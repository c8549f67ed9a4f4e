"""Entity matching of list answers (entity list, ranked list, records).

Reading the predicted entity ids of a payload, comparing them with the expected ones as a set
(no missing, extra or repeated entity) or in order (ties may swap), and the entity-level
measures of a list question (:class:`ListMatch`: Exact Set, Ranking Exact, precision, recall,
F1).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from geoask.bench.evaluate.units import find_field
from geoask.bench.evaluate.values import CORRECT, Verdict, id_key, ids_exact, is_number
from geoask.cases.model import BenchmarkCase
from geoask.vocabulary.answers import AnswerType


@dataclass(frozen=True)
class ListMatch:
    """Entity-level measures of a list question (entity ids compared exactly).

    Attributes:
        exact_set: predicted and expected entity sets are identical.
        ranking_exact: the predicted sequence is the expected one (ranked lists; None else).
        precision: ``|P ∩ G| / |P|`` (0 when nothing was predicted).
        recall: ``|P ∩ G| / |G|`` (1 when nothing is expected and nothing predicted).
        f1: harmonic mean of precision and recall (0 when both are 0).

    """

    exact_set: bool
    ranking_exact: bool | None
    precision: float
    recall: float
    f1: float


LIST_TYPES = frozenset({AnswerType.ENTITY_LIST, AnswerType.RANKED_LIST, AnswerType.RECORDS})


def list_in(payload: Any, key: str) -> list[Any] | Verdict:
    """``payload[key]`` as a list, or a ``field`` :class:`Verdict` when it is not one.

    >>> list_in({"items": [1, 2]}, "items"), list_in({"items": 3}, "items").kind
    ([1, 2], 'field')
    """
    if isinstance(payload, dict) and isinstance(payload.get(key), list):
        return list(payload[key])
    return Verdict(False, f"a list answer needs data_payload.{key} (a list)", "field")


def entity_id(item: Any, entity_field: str | None) -> Any:
    """The id of a list entry: a bare id, or ``id`` / the contract's entity field of a record."""
    if not isinstance(item, dict):
        return item
    if "id" in item:
        return item["id"]
    key = find_field(item, entity_field) if entity_field else None
    return item[key] if key is not None else None


def entity_ids(case: BenchmarkCase, payload: Any) -> list[Any] | Verdict:
    """The predicted entity ids of a list answer, in the answer's order."""
    answer_type = case.answer.answer_type
    projection = case.answer.projection
    if answer_type is AnswerType.ENTITY_LIST:
        items = list_in(payload, "entities")
        if isinstance(items, Verdict):
            return items
        return [entity_id(item, projection.entity_field) for item in items]
    if answer_type is AnswerType.RANKED_LIST:
        ranked = ranked_items(payload)
        if isinstance(ranked, Verdict):
            return ranked
        return [entity_id(item, projection.entity_field) for item in ranked]
    records = list_in(payload, "records")
    if isinstance(records, Verdict):
        return records
    return [record_key(record, projection.key_fields) for record in records]


def expected_entity_ids(case: BenchmarkCase) -> list[Any]:
    """The verified entity ids of a list case, in the expected order."""
    value = case.expected.value or []
    answer_type = case.answer.answer_type
    if answer_type is AnswerType.ENTITY_LIST:
        return list(value)
    if answer_type is AnswerType.RANKED_LIST:
        return [item["id"] for item in value]
    return [record_key(record, case.answer.projection.key_fields) for record in value]


def record_key(record: Any, key_fields: Sequence[str]) -> Any:
    """The identity of a record: its key fields' values (one value, or a tuple of several)."""
    if not isinstance(record, dict):
        return None
    values = []
    for name in key_fields:
        key = find_field(record, name)
        values.append(record[key] if key is not None else None)
    return values[0] if len(values) == 1 else tuple(values)


def set_verdict(expected: Sequence[Any], actual: Sequence[Any]) -> Verdict:
    """No missing, extra or repeated entity (ids compared by :func:`id_key`).

    >>> set_verdict(["A", "B"], ["A", "B", "C"]).reason
    "extra ['C']"
    """
    keys = [id_key(value) for value in actual]
    if len(set(keys)) != len(keys):
        return Verdict(False, "the answer lists an entity more than once", "entities")
    wanted = {id_key(value): value for value in expected}
    given = dict(zip(keys, actual, strict=True))
    missing = [wanted[key] for key in wanted if key not in given]
    extra = [given[key] for key in given if key not in wanted]
    if missing or extra:
        parts = ([f"missing {missing[:10]!r}"] if missing else []) + (
            [f"extra {extra[:10]!r}"] if extra else [])
        return Verdict(False, ", ".join(parts), "entities")
    return CORRECT


def ranked_items(payload: Any) -> list[Any] | Verdict:
    """The entries of a ranked answer ordered by ``rank`` (list order when ranks are absent)."""
    items = list_in(payload, "items")
    if isinstance(items, Verdict):
        return items
    if items and all(isinstance(i, dict) and is_number(i.get("rank")) for i in items):
        return sorted(items, key=lambda item: item["rank"])
    return items


def tied(want: Mapping[str, Any], other: Mapping[str, Any]) -> bool:
    """Two expected ranked entries with the same ``value`` (they may come in either order)."""
    return "value" in want and "value" in other and want["value"] == other["value"]


def list_match(case: BenchmarkCase, payload: Any) -> ListMatch | None:
    """Exact Set, Ranking Exact and entity P/R/F1 of a list case (None for other types).

    A payload without a readable list counts as predicting no entity.
    """
    if case.answer.answer_type not in LIST_TYPES:
        return None
    expected = expected_entity_ids(case)
    predicted = entity_ids(case, payload)
    if isinstance(predicted, Verdict):
        predicted = []
    wanted = {id_key(value) for value in expected}
    given = {id_key(value) for value in predicted}
    hits = len(wanted & given)
    precision = hits / len(given) if given else (1.0 if not wanted else 0.0)
    recall = hits / len(wanted) if wanted else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    ranking = None
    if case.answer.answer_type is AnswerType.RANKED_LIST:
        ranking = given == wanted and len(predicted) == len(expected) and \
            _order_verdict(case, predicted).matches
    return ListMatch(exact_set=given == wanted and len(predicted) == len(given),
                     ranking_exact=ranking, precision=precision, recall=recall, f1=f1)


def _order_verdict(case: BenchmarkCase, predicted: Sequence[Any]) -> Verdict:
    expected: list[dict[str, Any]] = list(case.expected.value or [])
    by_id = {id_key(want["id"]): want for want in expected}
    for rank, (want, got) in enumerate(zip(expected, predicted, strict=True), 1):
        matched = by_id.get(id_key(got))
        if matched is None or not (ids_exact(want["id"], got) or tied(want, matched)):
            return Verdict(False, f"rank {rank}: expected {want['id']!r}, got {got!r}", "order")
    return CORRECT


def no_answer_list_match(case: BenchmarkCase) -> ListMatch | None:
    """The list measures of a list case the pipeline gave no answer to (None for other types).

    Nothing matches (Exact Set and Ranking Exact false, precision and F1 0); recall is 1 only
    when nothing is expected.
    """
    if case.answer.answer_type not in LIST_TYPES:
        return None
    ranking = False if case.answer.answer_type is AnswerType.RANKED_LIST else None
    empty = not case.expected.value
    return ListMatch(exact_set=False, ranking_exact=ranking, precision=0.0,
                     recall=1.0 if empty else 0.0, f1=0.0)
