"""Answer projection: read a case's answer from the last step's output.

Output data is a list of records (SQL rows, or a Python ``result`` list) or an object (a Python
``result`` mapping). The projected answer has one canonical JSON shape per answer type:

- ``scalar``: a number, string or boolean;
- ``entity_list``: the sorted list of entity ids;
- ``ranked_list``: ``[{"id": ..., "value": ...}, ...]`` in the given order (``value`` only when
  the projection names a ``value_field``);
- ``records``: a list of mappings restricted to ``key_fields + value_fields``, sorted by key;
- ``object``: a mapping restricted to ``fields``;
- ``bbox``: ``[min_x, min_y, max_x, max_y]`` (flat; a nested ``[[min_x, min_y], [max_x,
  max_y]]`` is flattened);
- ``geometry``: a GeoJSON geometry mapping (WKT text is converted).

>>> project_answer([{"n": 3}], AnswerType.SCALAR, Projection(value_field="n"))
3
"""

from __future__ import annotations

import json
from typing import Any

from geoask.cases.model import Projection
from geoask.vocabulary.answers import AnswerType


class ProjectionError(ValueError):
    """The output does not have the shape the answer contract promises; ``str()`` says why."""


def project_answer(data: Any, answer_type: AnswerType, projection: Projection) -> Any:
    """Project ``data`` (records or object) to the canonical answer of ``answer_type``.

    Raises:
        ProjectionError: a field is missing, a scalar output has several rows, a list answer
            comes from an object, or a bbox/geometry value is malformed.

    """
    if projection.records_path is not None:
        if not isinstance(data, dict) or projection.records_path not in data:
            raise ProjectionError(f"output has no key {projection.records_path!r}")
        data = data[projection.records_path]
    if answer_type in (AnswerType.SCALAR, AnswerType.BBOX, AnswerType.GEOMETRY):
        value = _field(single_record(data), str(projection.value_field))
        if answer_type is AnswerType.BBOX:
            return flat_bbox(value)
        if answer_type is AnswerType.GEOMETRY:
            return geojson_geometry(value)
        return value
    if answer_type is AnswerType.OBJECT:
        record = single_record(data)
        return {name: _field(record, name) for name in projection.fields}
    records = _records(data)
    if answer_type is AnswerType.ENTITY_LIST:
        return sorted((_entity(r, projection.entity_field) for r in records), key=_sort_key)
    if answer_type is AnswerType.RANKED_LIST:
        ranked = []
        for record in records:
            item = {"id": _entity(record, projection.entity_field)}
            if projection.value_field:
                item["value"] = _field(record, projection.value_field)
            ranked.append(item)
        return ranked
    names = [*projection.key_fields, *projection.value_fields]
    kept = [{name: _field(record, name) for name in names} for record in records]
    return sorted(kept, key=lambda r: tuple(_sort_key(r[k]) for k in projection.key_fields))


def single_record(data: Any) -> dict[str, Any]:
    """The one record of ``data``: the object itself, or the only row of a list.

    >>> single_record([{"a": 1}])
    {'a': 1}

    Raises:
        ProjectionError: the list is empty or has several rows, or ``data`` is not a record.

    """
    if isinstance(data, list):
        if len(data) != 1:
            raise ProjectionError(f"expected exactly one record, the output has {len(data)}")
        data = data[0]
    if not isinstance(data, dict):
        raise ProjectionError(f"expected a record (mapping), got {type(data).__name__}")
    return data


def flat_bbox(value: Any) -> list[float]:
    """``[min_x, min_y, max_x, max_y]`` from a flat or nested bbox.

    >>> flat_bbox([[1, 2], [3, 4]])
    [1.0, 2.0, 3.0, 4.0]

    Raises:
        ProjectionError: not four numbers with min <= max.

    """
    if isinstance(value, dict) and {"minx", "miny", "maxx", "maxy"} <= value.keys():
        value = [value["minx"], value["miny"], value["maxx"], value["maxy"]]
    if isinstance(value, list) and len(value) == 2 and all(
        isinstance(corner, list) and len(corner) == 2 for corner in value
    ):
        value = [*value[0], *value[1]]
    if not (isinstance(value, list) and len(value) == 4 and all(_is_number(v) for v in value)):
        raise ProjectionError(f"a bbox is four numbers [min_x, min_y, max_x, max_y], got {value!r}")
    bbox = [float(v) for v in value]
    if bbox[0] > bbox[2] or bbox[1] > bbox[3]:
        raise ProjectionError(f"bbox minimum exceeds maximum: {bbox}")
    return bbox


def geojson_geometry(value: Any) -> dict[str, Any]:
    """A GeoJSON geometry mapping from GeoJSON (mapping or text) or WKT.

    Raises:
        ProjectionError: the value is not a readable geometry.

    """
    import shapely
    from shapely.geometry import mapping, shape

    try:
        if isinstance(value, str) and value.lstrip().startswith("{"):
            value = json.loads(value)
        geometry = shape(value) if isinstance(value, dict) else shapely.from_wkt(value)
    except Exception as error:
        raise ProjectionError(f"not a geometry (GeoJSON or WKT): {error}") from None
    return json.loads(json.dumps(mapping(geometry)))


def _records(data: Any) -> list[dict[str, Any]]:
    if not isinstance(data, list):
        raise ProjectionError(
            f"a list answer needs a list of records, got {type(data).__name__}; "
            "set projection.records_path to the key holding the records"
        )
    for row in data:
        if not isinstance(row, dict):
            raise ProjectionError(f"expected records (mappings), got {type(row).__name__}")
    return data


def _field(record: dict[str, Any], name: str) -> Any:
    if name not in record:
        raise ProjectionError(f"field {name!r} missing; the output has {sorted(record)}")
    return record[name]


def _entity(record: dict[str, Any], name: str | None) -> Any:
    value = _field(record, str(name))
    if value is None:
        raise ProjectionError(f"entity id {name!r} is null")
    return value


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _sort_key(value: Any) -> tuple[int, Any]:
    """Order numbers before text so mixed id lists sort deterministically."""
    if _is_number(value):
        return (0, value)
    return (1, str(value))
