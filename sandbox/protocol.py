r"""The output protocol: a script's last output is one JSON object ``{status, summary, result}``.

:func:`parse_protocol` finds that object at the end of stdout and checks it; a violation raises
:class:`ProtocolViolation` whose message tells the model exactly what to change. A session's
channel to its process frames each message as a 4-byte length and a JSON object
(:func:`send_message`, :func:`decode_message`).

>>> parse_protocol('noise\n{"status": "success", "summary": "3 parks", "result": {"n": 3}}\n')
ProtocolResult(status='success', summary='3 parks', result={'n': 3})
"""

from __future__ import annotations

import json
import math
import os
import socket
import struct
from pathlib import Path
from typing import Any

from sandbox.models import ProtocolResult

PROTOCOL_KEYS = ("status", "summary", "result")
PROTOCOL_EXAMPLE = (
    'print(json.dumps({"status": "success", "summary": "<one sentence for the user>", '
    '"result": {...}}))'
)
_MAX_CANDIDATES = 200


class ProtocolViolation(ValueError):
    """The script's last output is not a valid protocol object; ``str()`` is advice to the model."""


def parse_protocol(stdout: str) -> ProtocolResult:
    """Return the protocol object that ends ``stdout``.

    The object may span several lines (``json.dumps(..., indent=2)``) and may follow any other
    output, but nothing except whitespace may follow it.

    Args:
        stdout: the script's standard output, or its tail (at least the whole final object).

    Returns:
        The validated object.

    Raises:
        ProtocolViolation: nothing printed, last output not JSON, not an object, wrong keys or
            wrong value types; the message names what to fix.

    """
    text = stdout.rstrip()
    if not text:
        raise ProtocolViolation(
            "The script printed nothing. End it by printing exactly one JSON object: "
            + PROTOCOL_EXAMPLE
        )
    value = _last_json_value(text)
    return check_protocol_object(value)


def parse_cell_protocol(stdout: str) -> ProtocolResult | None:
    r"""Return the protocol object ending a session cell's ``stdout``, or None if it gave none.

    A cell (see :class:`sandbox.models.SandboxSession`) need not give a result: output that
    does not end with a JSON object holding a ``"status"`` key is no result (None). An object
    that has ``"status"`` attempts the protocol and is checked like a script's.

    >>> parse_cell_protocol("loaded 12 rows\n") is None
    True
    >>> parse_cell_protocol('{"rows": 12}') is None
    True
    >>> parse_cell_protocol('{"status": "success", "summary": "12", "result": [12]}').result
    [12]

    Raises:
        ProtocolViolation: the final object attempts the protocol but breaks it (the message
            says what to fix).

    """
    try:
        return parse_protocol(stdout)
    except ProtocolViolation:
        if _attempts_protocol(stdout.rstrip()):
            raise
        return None


def _attempts_protocol(text: str) -> bool:
    """True when ``text`` ends with a JSON object naming ``"status"``.

    An object that does not parse (NaN, a stray quote) counts when ``"status"`` occurs in
    the last 4000 characters.
    """
    if not text.rsplit("\n", 1)[-1].strip().endswith("}"):
        return False
    try:
        value = _last_json_value(text)
    except ProtocolViolation:
        return '"status"' in text[-4000:]
    return isinstance(value, dict) and "status" in value


def check_protocol_object(value: object) -> ProtocolResult:
    """Check a decoded JSON value against the protocol (exact keys, value types).

    Raises:
        ProtocolViolation: with a message naming the wrong or missing part.

    """
    if not isinstance(value, dict):
        raise ProtocolViolation(
            f"The last output is a JSON {_json_kind(value)}, but it must be one JSON object "
            f"with exactly the keys status, summary and result: {PROTOCOL_EXAMPLE}"
        )
    missing = [key for key in PROTOCOL_KEYS if key not in value]
    extra = sorted(str(key) for key in value if key not in PROTOCOL_KEYS)
    if missing or extra:
        parts = []
        if missing:
            parts.append("missing " + ", ".join(repr(key) for key in missing))
        if extra:
            parts.append(
                "unexpected " + ", ".join(repr(key) for key in extra)
                + " (put extra data inside 'result')"
            )
        raise ProtocolViolation(
            "The final JSON object must have exactly the keys status, summary and result; "
            + "; ".join(parts) + "."
        )
    status, summary, result = value["status"], value["summary"], value["result"]
    if status not in ("success", "error"):
        raise ProtocolViolation(
            f"'status' must be \"success\" or \"error\", not {json.dumps(status)[:80]}."
        )
    if not isinstance(summary, str):
        raise ProtocolViolation(
            f"'summary' must be a string for the user, not a JSON {_json_kind(summary)}."
        )
    if not isinstance(result, dict | list):
        raise ProtocolViolation(
            f"'result' must be a JSON object or array, not a JSON {_json_kind(result)}; "
            'wrap a single value, e.g. {"value": 42}.'
        )
    where = first_unencodable_text(value)
    if where is not None:
        raise ProtocolViolation(
            f"The final JSON object holds text that is not valid Unicode at {where} (a lone "
            "surrogate such as \\udcff); decode bytes with errors='replace' or drop them."
        )
    return ProtocolResult(status=status, summary=summary, result=result)


def first_unencodable_text(value: object, where: str = "the object") -> str | None:
    r"""Where in ``value`` a string (key or value) cannot be encoded as UTF-8, or None.

    ``json.loads('"\\udcff"')`` gives a lone surrogate, which no JSON writer can encode.

    >>> first_unencodable_text({"result": {"a": ["ok", "\udcff"]}})
    "the object['result']['a'][1]"
    """
    if isinstance(value, str):
        return None if _encodes(value) else where
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and not _encodes(key):
                return f"{where} (a key)"
            found = first_unencodable_text(item, f"{where}[{key!r}]")
            if found is not None:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = first_unencodable_text(item, f"{where}[{index}]")
            if found is not None:
                return found
    return None


def first_unencodable_name(folder: Path) -> str | None:
    r"""The first path under ``folder`` whose name is not UTF-8 text, or None.

    The name is returned with its undecodable bytes escaped (``\xff.json``).
    """
    for directory, subdirs, names in os.walk(folder, followlinks=False):
        for name in (*subdirs, *names):
            if not _encodes(name):
                relative = Path(directory, name).relative_to(folder).as_posix()
                return os.fsencode(relative).decode("utf-8", "backslashreplace")
    return None


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _last_json_value(text: str) -> object:
    last_line = text.rsplit("\n", 1)[-1].strip()
    if not last_line.endswith(("}", "]")):
        raise ProtocolViolation(
            "The last line of output is not JSON: "
            f"{last_line[:120]!r}. Print the JSON object last, after any other output: "
            + PROTOCOL_EXAMPLE
        )
    decoder = json.JSONDecoder(parse_constant=_reject_constant)
    for start in _candidate_starts(text):
        chunk = text[start:].strip()
        try:
            value, end = decoder.raw_decode(chunk)
        except _NonFiniteNumberError as error:
            raise ProtocolViolation(
                f"The final JSON object contains {error}, which is not valid JSON; replace "
                "missing or undefined numbers with null (e.g. value if math.isfinite(value) "
                "else None)."
            ) from None
        except ValueError:
            continue
        if end == len(chunk):
            return value
    raise ProtocolViolation(
        "The output ends with something that looks like JSON but does not parse "
        f"({last_line[:120]!r}). Print the final object alone on its own line(s) with "
        "json.dumps, after any other output (NaN and Infinity are not JSON: use null)."
    )


def _candidate_starts(text: str) -> list[int]:
    """Line starts (from the end) where a JSON value may begin; unindented lines first.

    ``json.dumps`` (with or without ``indent``) starts the top-level value in column 0, so
    those lines are tried first; indented ones (nested values) only if none parses.
    """
    flush: list[int] = []
    indented: list[int] = []
    end = len(text)
    while len(flush) + len(indented) < _MAX_CANDIDATES:
        newline = text.rfind("\n", 0, end)
        start = newline + 1
        line = text[start:end]
        if line[:1] in ("{", "["):
            flush.append(start)
        elif line.lstrip()[:1] in ("{", "["):
            indented.append(start)
        if newline < 0:
            break
        end = newline
    return flush + indented


class _NonFiniteNumberError(Exception):
    pass


def _reject_constant(name: str) -> object:
    raise _NonFiniteNumberError(name)


def _json_kind(value: object) -> str:
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    return "number"


def send_message(channel: socket.socket, message: dict[str, object]) -> None:
    """Send ``message`` to a session's process: its JSON, after a 4-byte big-endian length."""
    payload = json.dumps(message).encode()
    channel.sendall(struct.pack(">I", len(payload)) + payload)


def decode_message(payload: bytes) -> dict[str, Any] | str:
    """A reply of the session's process as a dict, or ``"broken"`` when it is not a JSON object."""
    try:
        value = json.loads(payload)
    except ValueError:
        return "broken"
    return value if isinstance(value, dict) else "broken"


def reply_number(reply: dict[str, Any], key: str) -> float:
    """``reply[key]`` as a finite float; 0.0 when it is missing or not a finite number."""
    value = reply.get(key)
    return float(value) if isinstance(value, int | float) and math.isfinite(value) else 0.0
