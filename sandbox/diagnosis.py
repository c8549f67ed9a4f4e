"""Turn how a sandboxed run ended into a :class:`ScriptError` and short stream excerpts.

Pure functions only; :mod:`sandbox.bubblewrap` gathers the facts (the bootstrap's error report,
exit status, signal, CPU time) and calls :func:`classify_failure`.

>>> missing_field_name("KeyError", "'population'", "'population'")
'population'
"""

from __future__ import annotations

import re
import signal as signals
from collections.abc import Mapping
from typing import Any

from sandbox.models import ErrorKind, OutcomeStatus, SandboxLimits, ScriptError, TextExcerpt
from sandbox.runtime import AVAILABLE_IMPORTS

_LIMIT_KINDS: frozenset[ErrorKind] = frozenset(
    {"cpu_limit", "memory_limit", "file_size_limit", "open_files_limit", "process_limit",
     "disk_space_limit"}
)
_NETWORK_TYPES = frozenset(
    {"gaierror", "herror", "ConnectionRefusedError", "ConnectionResetError", "ConnectionError"}
)
_NETWORK_ERRNOS = frozenset({"ENETUNREACH", "EHOSTUNREACH", "ECONNREFUSED", "EADDRNOTAVAIL"})
_FORBIDDEN_ERRNOS = frozenset({"EPERM", "EACCES", "EROFS"})

HINT_FORBIDDEN = (
    "The sandbox has no network, cannot start processes and can write only to /scratch; read "
    "inputs from /input and compute in this one Python process."
)
HINT_MISSING_FIELD = (
    "The data has no field {field!r}. Print the available columns/keys (df.columns, "
    "list(record)) and use one of them; if the field is really needed, the upstream query "
    "must select it."
)


def status_for(kind: ErrorKind) -> OutcomeStatus:
    """Map an error kind to the run's overall status.

    >>> status_for("memory_limit"), status_for("missing_field"), status_for("timeout")
    ('limit_exceeded', 'exception', 'timeout')
    """
    if kind in _LIMIT_KINDS:
        return "limit_exceeded"
    if kind == "timeout":
        return "timeout"
    if kind == "killed":
        return "killed"
    if kind == "protocol":
        return "protocol_error"
    return "exception"


def missing_field_name(exception_type: str, message: str, key: str | None) -> str | None:
    """Name the key/column a failed lookup wanted, or None if the error is not such a lookup.

    Recognises ``KeyError('x')`` (dicts, pandas/GeoPandas columns), pandas' ``"['x'] not in
    index"``, polars' ``ColumnNotFoundError`` and attribute access to a missing DataFrame column.

    Args:
        exception_type: class name, e.g. ``KeyError``.
        message: ``str(exception)``.
        key: ``repr(exception.args[0])`` for a KeyError, else None.

    """
    if exception_type == "KeyError":
        text = key if key is not None else message
        if "not in index" in text or "are in the [columns]" in text:
            inner = text.split("Index([", 1)[1] if "Index([" in text else text.split("[", 1)[-1]
            names = re.findall(r"'([^']*)'|\"([^\"]*)\"", inner.split("]", 1)[0])
            found = [single or double for single, double in names]
            return ", ".join(found) if found else None
        quoted = re.fullmatch(r"""\s*(['"])(.*)\1\s*""", text)
        if quoted:
            return quoted.group(2)
        return text.strip() or None
    if exception_type == "ColumnNotFoundError":
        polars = re.search(r'unable to find column "([^"]+)"', message) or re.search(
            r'"([^"]+)"', message
        )
        if polars:
            return polars.group(1)
        first = message.strip().splitlines()[0] if message.strip() else ""
        return first.strip('"') or None
    if exception_type == "AttributeError":
        frame = re.search(r"'(?:Geo)?(?:DataFrame|Series)' object has no attribute '([^']+)'",
                          message)
        if frame:
            return frame.group(1)
    return None


def classify_report(report: Mapping[str, Any]) -> ScriptError:
    """Classify the bootstrap's report of an uncaught exception (``/meta/error.json``).

    Args:
        report: keys ``exception_type``, ``exception_mro`` (class names), ``message``,
            ``frames`` (list of ``{line, function, code}``), optional ``key``, ``module``,
            ``errno`` (symbolic, e.g. ``EPERM``).

    """
    exception_type = str(report.get("exception_type") or "Exception")
    message = str(report.get("message") or "")
    mro = {str(name) for name in report.get("exception_mro") or [exception_type]}
    frames = report.get("frames") or []
    line = frames[-1].get("line") if frames and isinstance(frames[-1], dict) else None
    error_number = report.get("errno")
    key = report.get("key")

    def error(kind: ErrorKind, hint: str, field: str | None = None) -> ScriptError:
        return ScriptError(
            kind=kind, exception_type=exception_type, line=line if isinstance(line, int) else None,
            message=message, missing_field=field, hint=hint,
        )

    if "SyntaxError" in mro:
        return error("syntax_error", "Fix the syntax at the line shown.")
    if exception_type == "ModuleNotFoundError":
        module = report.get("module") or message
        return error(
            "missing_module",
            f"Module {module!r} is not available in the sandbox. Available: "
            + ", ".join(AVAILABLE_IMPORTS) + ".",
        )
    field = missing_field_name(exception_type, message, str(key) if key is not None else None)
    if field is not None:
        return error("missing_field", HINT_MISSING_FIELD.format(field=field), field)
    if "MemoryError" in mro:
        return error(
            "memory_limit",
            "The script ran out of its memory limit; process the data in chunks, select fewer "
            "columns or rows, or use smaller dtypes.",
        )
    if error_number == "EFBIG":
        return error("file_size_limit", "A file (or stdout) grew past the file-size limit; "
                     "write less, or summarise before printing.")
    if error_number == "ENOSPC":
        return error("disk_space_limit", "/scratch or /tmp is full; write fewer or smaller "
                     "files (summarise, sample, or write Parquet instead of GeoJSON/CSV).")
    if error_number == "EMFILE":
        return error("open_files_limit", "Too many files open at once; close files after use.")
    if exception_type == "RuntimeError" and "can't start new thread" in message:
        return error("process_limit", "Too many threads; the sandbox allows a small pool only.")
    if exception_type in _NETWORK_TYPES or error_number in _NETWORK_ERRNOS:
        return error("forbidden_operation", HINT_FORBIDDEN)
    if error_number in _FORBIDDEN_ERRNOS:
        return error("forbidden_operation", HINT_FORBIDDEN)
    return error("exception", "Fix the error at the line shown and run again.")


def classify_exit(
    *,
    exit_code: int | None,
    signal_name: str | None,
    timed_out: bool,
    cpu_time_s: float,
    limits: SandboxLimits,
) -> ScriptError:
    """Classify a run that ended without an exception report (killed, or a bare non-zero exit).

    Args:
        exit_code: exit status when the process exited normally.
        signal_name: e.g. ``SIGKILL`` when it was killed by a signal.
        timed_out: True when the wall-clock limit fired and the tree was killed.
        cpu_time_s: CPU seconds the run used.
        limits: the run's limits.

    """
    if timed_out:
        return ScriptError(
            kind="timeout", message=f"The script ran longer than {limits.timeout_s:g} s and was "
            "stopped.", hint="Make it faster: avoid Python loops over rows, use vectorised "
            "GeoPandas/NumPy operations and spatial indexes (sjoin), or sample the data.",
        )
    if signal_name == "SIGXCPU" or (
        signal_name == "SIGKILL" and cpu_time_s >= limits.cpu_s - 0.5
    ):
        return ScriptError(
            kind="cpu_limit", message=f"The script used more than {limits.cpu_s} s of CPU time.",
            hint="Make it faster: vectorise, use spatial indexes, or process less data.",
        )
    if signal_name == "SIGXFSZ":
        return ScriptError(
            kind="file_size_limit", message="A file grew past the file-size limit.",
            hint="Write smaller files or summarise before writing.",
        )
    if signal_name is not None:
        return ScriptError(
            kind="killed", message=f"The script was killed by {signal_name}"
            + (" (a crash inside native code, e.g. ctypes)." if signal_name in
               ("SIGSEGV", "SIGBUS", "SIGILL", "SIGABRT") else "."),
            hint="Avoid ctypes and low-level tricks; use the analysis libraries' APIs.",
        )
    return ScriptError(
        kind="exception", message=f"The script exited with status {exit_code}.",
        hint="Do not call sys.exit with a non-zero status; report problems through the "
        'protocol object with "status": "error".',
    )


def signal_from_exit(exit_code: int) -> str | None:
    """Name the signal bubblewrap reports as exit status 128+N, or None for a plain exit.

    >>> signal_from_exit(137), signal_from_exit(1)
    ('SIGKILL', None)
    """
    if 128 < exit_code < 128 + 65:
        try:
            return signals.Signals(exit_code - 128).name
        except ValueError:
            return None
    return None


def tail_excerpt(text: str, limit: int) -> TextExcerpt:
    """Keep the last ``limit`` characters (stdout: the end holds the result and last prints)."""
    if len(text) <= limit:
        return TextExcerpt(text=text, total_chars=len(text), truncated=False)
    cut = len(text) - limit
    return TextExcerpt(
        text=text[cut:], total_chars=len(text), truncated=True,
        note=f"the first {cut} of {len(text)} characters were cut; only the end is shown",
    )


def head_tail_excerpt(text: str, limit: int) -> TextExcerpt:
    """Keep a quarter of ``limit`` from the start and the rest from the end (stderr).

    The end of stderr holds the exception type, message and the script's frames (the bootstrap
    prints only frames inside the script); the start often holds the first warning.
    """
    if len(text) <= limit:
        return TextExcerpt(text=text, total_chars=len(text), truncated=False)
    head = limit // 4
    tail = limit - head
    cut = len(text) - head - tail
    marker = f"\n[... {cut} characters cut ...]\n"
    return TextExcerpt(
        text=text[:head] + marker + text[-tail:], total_chars=len(text), truncated=True,
        note=f"{cut} of {len(text)} characters cut from the middle",
    )
