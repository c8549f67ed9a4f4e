"""Evidence for the reviewer and answer agents, and the check that answers only copy numbers.

Evidence is text built from the last step's artifacts: for a small result the records
themselves (one JSON line after ``records (JSON):``; geometries dropped), for a larger one its
preview and row count; for a Python step the script's summary and ``result (JSON):``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from geoask.base.formats import json_records, stored_format

if TYPE_CHECKING:
    from geoask.sql.export import ExportedResult

RECORDS_MARKER = "records (JSON): "
RESULT_MARKER = "result (JSON): "
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def records_from_artifact(data: bytes | str, fmt: str) -> list[dict[str, Any]]:
    """Records of an exported result: JSON records, GeoJSON feature properties, Parquet rows.

    The format's records reader (:attr:`geoask.base.formats.ExportFormat.read_records`) reads
    the file's bytes; a file of another format is read as JSON
    (:func:`geoask.base.formats.json_records`).

    >>> records_from_artifact('[{"a": 1}]', "json")
    [{'a': 1}]
    """
    found = stored_format(fmt)
    read = found.read_records if found is not None and found.read_records else json_records
    return read(data.encode("utf-8") if isinstance(data, str) else data)


def exported_records(exported: ExportedResult,
                     read_bytes: Callable[[str], bytes]) -> list[dict[str, Any]]:
    """Records of an exported statement: its rows, or for a GeoTIFF the raster's facts.

    A raster has no rows to show; its one record is the preview's ``raster`` member (size,
    bands, CRS, pixel size, extent). ``read_bytes`` reads the data file's URL.
    """
    if exported.preview.raster is not None:
        return [dict(exported.preview.raster)]
    return records_from_artifact(read_bytes(exported.data_path), exported.format)


def sql_evidence(name: str, records: list[dict[str, Any]], preview: str, max_rows: int) -> str:
    """Evidence of one SQL artifact: all records when at most ``max_rows``, else the preview."""
    head = f"artifact {name}: {len(records)} rows"
    if len(records) <= max_rows:
        return f"{head}\n{RECORDS_MARKER}{json.dumps(records, ensure_ascii=False)}"
    return f"{head} (too many to list; preview below)\n{preview}"


def python_evidence(summary: str, result: Any, max_chars: int = 20_000) -> str:
    """Evidence of a Python step: the script's summary and its result object."""
    text = json.dumps(result, ensure_ascii=False)
    if len(text) > max_chars:
        text = text[: max_chars - 3] + "..."
    return f"script summary: {summary}\n{RESULT_MARKER}{text}"


def payload_numbers(payload: Any, skip_keys: frozenset[str] = frozenset({"rank"})) -> list[float]:
    """Every number in ``payload`` (nested), except values of ``skip_keys`` and booleans."""
    found: list[float] = []

    def walk(value: Any, key: str | None) -> None:
        if isinstance(value, bool) or key in skip_keys:
            return
        if isinstance(value, int | float):
            if math.isfinite(value):
                found.append(float(value))
        elif isinstance(value, dict):
            for k, v in value.items():
                walk(v, str(k))
        elif isinstance(value, list):
            for item in value:
                walk(item, key)

    walk(payload, None)
    return found


def unsupported_numbers(payload: Any, evidence: str) -> list[float]:
    """Numbers of ``payload`` that appear nowhere in ``evidence`` (even rounded).

    A payload number matches an evidence number when they agree to the payload number's own
    precision (``12.35`` matches ``12.3456``), so an answer may round but never invent.

    >>> unsupported_numbers({"value": 12.35}, "total 12.3456 km")
    []
    >>> unsupported_numbers({"value": 99}, "total 12.3456 km")
    [99.0]
    """
    evidence_numbers = [float(m) for m in _NUMBER.findall(evidence)]
    return [value for value in payload_numbers(payload)
            if not _matches_any(value, evidence_numbers)]


def _matches_any(value: float, candidates: Iterable[float]) -> bool:
    text = repr(value)
    decimals = len(text.split(".")[1]) if "." in text and "e" not in text else 0
    if value == int(value):
        decimals = 0
    tolerance = 0.5 * 10 ** (-decimals) + 1e-9 * abs(value)
    return any(abs(value - candidate) <= tolerance for candidate in candidates)
