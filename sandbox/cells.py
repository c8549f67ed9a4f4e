"""What the real and the fake session share: staging a cell's inputs, a cell's outcome.

Pure functions over files and texts; :mod:`sandbox.session` and :mod:`sandbox.fake` call them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from geoask.errors import SandboxError
from sandbox import diagnosis
from sandbox.models import OutcomeStatus, SandboxOutcome, ScriptError
from sandbox.protocol import ProtocolViolation, parse_cell_protocol


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
            if target.read_bytes() != path.read_bytes():
                raise SandboxError(
                    f"the session already has an input named {path.name!r} with other content; "
                    "rename the new file")
            continue
        target.write_bytes(path.read_bytes())
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
