"""What the real and the fake session share: staging a cell's inputs, a cell's outcome.

Pure functions over files and texts; :mod:`sandbox.session` and :mod:`sandbox.fake` call them.
"""

from __future__ import annotations

import contextlib
import filecmp
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from geoask.errors import SandboxError
from sandbox import diagnosis
from sandbox.models import OutcomeStatus, SandboxLimits, SandboxOutcome, ScriptError
from sandbox.protocol import ProtocolViolation, parse_cell_protocol


def check_cell_timeout(timeout_s: float | None) -> None:
    """Refuse a cell wall clock that is not a positive finite number of seconds (None: default).

    >>> check_cell_timeout(0)
    Traceback (most recent call last):
    geoask.errors.SandboxError: a cell's timeout_s must be a positive number of seconds, not 0
    """
    if timeout_s is not None and not (0 < timeout_s < float("inf")):
        raise SandboxError(
            f"a cell's timeout_s must be a positive number of seconds, not {timeout_s!r}")


def stage_inputs(folder: Path, inputs: Sequence[Path]) -> list[Path]:
    """Copy ``inputs`` into ``folder`` (a session's ``/input``); return the new copies.

    A name added before with the same content is skipped (cells may pass the same file again).

    Raises:
        SandboxError: an input is missing, two share a name, or a name was added before with
            other content.

    """
    names = [path.name for path in inputs]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise SandboxError(f"two inputs share the file name {duplicates[0]!r}; rename one")
    added = []
    for path in inputs:
        if not path.is_file():
            raise SandboxError(f"input file {path} does not exist or is not a file")
        target = folder / path.name
        if target.exists():
            if not filecmp.cmp(target, path, shallow=False):
                raise SandboxError(
                    f"the session already has an input named {path.name!r} with other content; "
                    "rename the new file")
            continue
        shutil.copyfile(path, target)
        added.append(target)
    return added


def cell_outcome(
    stdout: str, stderr: str, report: dict[str, object] | None, *, tail_chars: int = 4000,
    stderr_chars: int = 4000, wall_time_s: float = 0.0, cpu_time_s: float = 0.0,
    peak_memory_mib: float = 0.0,
) -> SandboxOutcome:
    """The outcome of a cell that ended normally (its process alive), from its output.

    Args:
        stdout: the cell's whole standard output (or its tail holding the final object).
        stderr: the cell's standard error.
        report: the error report of an uncaught exception (see
            :func:`sandbox.bootstrap.error_report`), None when the cell ran through.
        tail_chars: characters of the end of stdout the outcome keeps.
        stderr_chars: characters of stderr the outcome keeps.
        wall_time_s: the cell's elapsed time (s).
        cpu_time_s: the CPU time the cell used (s).
        peak_memory_mib: the session process's peak resident set so far (MiB).

    """
    base = {
        "wall_time_s": round(wall_time_s, 4), "cpu_time_s": round(cpu_time_s, 4),
        "peak_memory_mib": round(peak_memory_mib, 1),
        "stdout": diagnosis.tail_excerpt(stdout, tail_chars),
        "stderr": diagnosis.head_tail_excerpt(stderr, stderr_chars),
    }
    error: ScriptError
    if report is not None:
        error = diagnosis.classify_report(report)
    else:
        try:
            protocol = parse_cell_protocol(stdout)
        except ProtocolViolation as violation:
            error = ScriptError(kind="protocol", message=str(violation),
                                hint="End the cell by printing the protocol object.")
        else:
            status: OutcomeStatus = (
                "script_reported_error" if protocol is not None and protocol.status == "error"
                else "success")
            return SandboxOutcome(status=status, protocol=protocol, exit_code=0,
                                  **base)  # type: ignore[arg-type]
    return SandboxOutcome(status=diagnosis.status_for(error.kind), error=error,
                          **base)  # type: ignore[arg-type]


def ending_error(
    reply: object, *, exit_code: int | None, signal_name: str | None, cell_cpu_s: float,
    cell_limits: SandboxLimits, session_timeout_s: float | None,
) -> ScriptError:
    """Classify a cell that ended its session (no proper reply came back).

    Args:
        reply: why no reply came: ``"timeout"`` (wall clock), ``"cpu"`` (the host saw the CPU
            budget exceeded), ``"exited"`` (the process ended), ``"broken"`` or an
            out-of-order reply (the channel was tampered with).
        exit_code: the process's exit status, None when a signal ended it.
        signal_name: the signal that ended it, e.g. ``SIGSEGV``.
        cell_cpu_s: CPU seconds the cell used.
        cell_limits: the script limits with the cell's wall clock and CPU budget.
        session_timeout_s: the session's wall clock (s) when that, not the cell's own, expired.

    >>> ending_error("cpu", exit_code=None, signal_name="SIGKILL", cell_cpu_s=3.0,
    ...              cell_limits=SandboxLimits(cpu_s=2), session_timeout_s=None).kind
    'cpu_limit'

    """
    if reply not in ("timeout", "cpu", "exited"):
        return ScriptError(kind="killed", message="The cell broke the session's channel to the "
                           "host (a malformed or out-of-order reply).",
                           hint="Do not read or write the session's file descriptors.")
    if reply == "exited" and signal_name is None:
        return ScriptError(kind="killed", message="The cell ended the session's process "
                           f"(exit status {exit_code}).",
                           hint="Do not call os._exit or close the process's files.")
    error = diagnosis.classify_exit(
        exit_code=exit_code, signal_name="SIGXCPU" if reply == "cpu" else signal_name,
        timed_out=reply == "timeout", cpu_time_s=cell_cpu_s, limits=cell_limits)
    if reply == "timeout" and session_timeout_s is not None:
        return error.model_copy(update={"message": "The cell ran into the session's wall "
                                        f"clock of {session_timeout_s:g} s."})
    return error


def remove_unencodable_names(folder: Path) -> None:
    """Delete every file or folder under ``folder`` whose name is not UTF-8 (links unfollowed).

    A session's ``/scratch`` keeps its files between cells; such a name would make every later
    result-giving cell a protocol error.
    """
    for directory, subdirs, names in os.walk(os.fsencode(folder), followlinks=False):
        for name in (*subdirs, *names):
            try:
                name.decode("utf-8")
            except UnicodeDecodeError:
                path = os.path.join(directory, name)
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    with contextlib.suppress(OSError):
                        os.unlink(path)
