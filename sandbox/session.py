"""The real persistent session: one bubblewrap-isolated Python process that runs many cells.

Isolation is that of :meth:`sandbox.bubblewrap.BubblewrapSandbox.run`, built by the same code:
the same bwrap options (no network, no host files, private /proc, read-only root), prlimit
limits, seccomp bootstrap, its own unprivileged uid and the capped tmpfs for ``/scratch``. The
process starts once, as ``bootstrap.py --session`` (see :func:`sandbox.bootstrap.run_session`),
and then runs cells sent over a Unix socket pair (its stdin) in one namespace, so a cell costs
an ``exec``, not an interpreter start.

Bounds: the session's ``limits`` give its wall clock (start to close), total CPU time (hard
RLIMIT_CPU) and memory (RLIMIT_AS of the one process). Each cell has a wall clock (the
sandbox's ``cell_timeout_s`` or ``run_cell(timeout_s=)``) and a CPU budget (``cell_cpu_s``,
set as the soft RLIMIT_CPU before the cell and watched from here too), both never beyond what
is left of the session's. A cell past its wall clock or CPU budget, or one that kills the
process, ends the session: every process of its uid is killed, its folders are removed, and
later calls raise ``SandboxError("session ended: ...")``.

Inputs: the host folder mounted read-only at ``/input`` is the session's staging folder; new
inputs are copied there (root-owned, group-readable by the uid) before the cell that needs them.
"""

from __future__ import annotations

import contextlib
import math
import os
import select
import shutil
import signal as signals
import socket
import struct
import subprocess
import threading
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from geoask.errors import SandboxError
from sandbox import diagnosis
from sandbox.artifacts import collect_artifacts
from sandbox.cells import (
    cell_outcome,
    check_cell_timeout,
    ending_error,
    remove_unencodable_names,
    stage_inputs,
)
from sandbox.host import (
    count_uid_processes,
    escaped_text,
    files_mib,
    kill_uid_processes,
    read_head_tail,
    read_tail,
    release_uid,
    sample_uid_usage,
    unmount,
    wait_exit,
)
from sandbox.models import SandboxLimits, SandboxOutcome, ScriptError, SessionHost
from sandbox.protocol import decode_message, first_unencodable_name, reply_number, send_message
from sandbox.spawn import spawn_with_channel

#: Longest wait for the session's process to say it is ready (s).
STARTUP_TIMEOUT_S = 30.0
#: Largest reply frame accepted from the sandboxed process (bytes).
MAX_REPLY_BYTES = 4 * 1024 * 1024
#: How long close() lets the process end by itself before killing it (s).
CLOSE_GRACE_S = 1.0
#: Seconds between checks of a running cell's CPU time and memory.
SAMPLE_INTERVAL_S = 0.05
PROTOCOL_TAIL_BYTES = 8 * 1024 * 1024
STDERR_READ_BYTES = 1024 * 1024
FAILED_CELL_FILES_NOTE = "files written to /scratch are collected only by a successful cell"


class BubblewrapSession:
    """A :class:`sandbox.models.SandboxSession` in bubblewrap (see the module docstring).

    Cells run one at a time (a lock serialises callers). Use it as a context manager or call
    :meth:`close`; a session nobody closes is ended by a timer at its wall clock, and if the
    host process dies, bwrap's ``--die-with-parent`` ends it.

    Attributes:
        session_id: 16 hex digits; artifacts go to ``<artifacts_url>/<session_id>/cell-<n>/``.
        startup_s: seconds from the start to the process's ready message.
        cells: cells sent so far.
        leftover_processes: processes of the uid found alive at teardown (then killed).

    """

    def __init__(self, sandbox: SessionHost, limits: SandboxLimits) -> None:
        """Start the session's process and wait until its cell loop is ready.

        Raises:
            SandboxError: a prerequisite is missing (as :meth:`BubblewrapSandbox.run`), or the
                process ended or stayed silent before it was ready (with its stderr).

        """
        self.sandbox = sandbox
        self.limits = limits
        self.session_id = uuid.uuid4().hex[:16]
        self.cells = 0
        self.startup_s = 0.0
        self.leftover_processes = 0
        self._ended: str | None = None
        self._torn_down = False
        self._collected: dict[str, tuple[int, int]] = {}
        self._cpu_seen = 0.0
        self._peak_mib = 0.0
        self._process: subprocess.Popen[bytes] | None = None
        self._channel: socket.socket | None = None
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        bwrap, prlimit = sandbox.check_prerequisites()
        self.uid = sandbox.allocate_uid()
        self.run_dir = sandbox.work_dir / self.session_id
        try:
            sandbox.prepare_run_dir(self.run_dir, "", (), self.uid, limits)
            started = time.monotonic()
            self._deadline = started + limits.timeout_s
            self._spawn(bwrap, prlimit)
            ready = self._await_reply(min(self._deadline, started + STARTUP_TIMEOUT_S), None)
            if not isinstance(ready, dict) or ready.get("ready") is not True:
                detail = read_tail(self.run_dir / "stderr", 2000).strip()
                raise SandboxError(
                    "the sandbox session could not start (bubblewrap or the runtime failed "
                    f"before the cell loop was ready): {detail or 'no message'}")
            self._cpu_seen = reply_number(ready, "cpu_s")
            self.startup_s = time.monotonic() - started
        except BaseException:
            self._teardown("it failed to start")
            raise
        # ends an idle session at its wall clock (a running cell's own deadline is never later)
        self._timer = threading.Timer(max(0.0, self._deadline - time.monotonic()), self._expire)
        self._timer.daemon = True
        self._timer.start()

    @property
    def ended(self) -> str | None:
        """Why the session ended, or None while cells can still run."""
        return self._ended

    def run_cell(
        self, code: str, inputs: Sequence[Path] = (), timeout_s: float | None = None
    ) -> SandboxOutcome:
        """Run ``code`` in the session; see :meth:`sandbox.models.SandboxSession.run_cell`.

        Raises:
            SandboxError: the session ended, or an input is missing or clashes.

        """
        with self._lock:
            return self._run_cell(code, inputs, timeout_s)

    def _run_cell(
        self, code: str, inputs: Sequence[Path], timeout_s: float | None
    ) -> SandboxOutcome:
        if self._ended is not None:
            raise SandboxError(f"session ended: {self._ended}")
        check_cell_timeout(timeout_s)
        for copy in stage_inputs(self.run_dir / "input", [Path(path) for path in inputs]):
            os.chown(copy, 0, self.uid)
            copy.chmod(0o640)
        started = time.monotonic()
        left = self._deadline - started
        if left <= 0:
            self._teardown(f"its wall clock of {self.limits.timeout_s:g} s ran out")
            raise SandboxError(f"session ended: {self._ended}")
        wall = min(timeout_s or self.sandbox.cell_timeout_s, left)
        cpu = min(float(self.sandbox.cell_cpu_s), max(1.0, self.limits.cpu_s - self._cpu_seen))
        self.cells += 1
        seq = self.cells
        reply: dict[str, Any] | str
        try:
            channel = self._channel_socket()
            channel.settimeout(wall)  # a process that stops reading cannot block the host
            send_message(channel, {"seq": seq, "code": code, "cpu_s": cpu})
        except TimeoutError:
            reply = "timeout"
        except OSError:
            reply = "exited"
        else:
            reply = self._await_reply(started + wall, cpu)
        elapsed = time.monotonic() - started
        if isinstance(reply, dict) and reply.get("seq") == seq:
            return self._finished_cell(seq, reply, elapsed)
        cell_limits = self.limits.model_copy(update={
            "timeout_s": wall, "cpu_s": max(1, math.ceil(cpu))})
        return self._ending_cell(seq, reply, elapsed, cell_limits, session_wall=wall < (
            timeout_s or self.sandbox.cell_timeout_s))

    def close(self) -> None:
        """End the session: the process and every process of its uid; idempotent."""
        with self._lock:
            self._teardown("closed")

    def _expire(self) -> None:
        with self._lock:
            self._teardown(f"its wall clock of {self.limits.timeout_s:g} s ran out")

    def __enter__(self) -> BubblewrapSession:
        """Return the session."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close the session."""
        self.close()

    # -- the process ---------------------------------------------------------------------------

    def _spawn(self, bwrap: str, prlimit: str) -> None:
        self._process, self._channel = spawn_with_channel(
            self.sandbox.runtime_dir, self.run_dir, self.uid, self.limits, (bwrap, prlimit),
            ["--session"])

    def _channel_socket(self) -> socket.socket:
        if self._channel is None:
            raise OSError("the session's channel is closed")
        return self._channel

    def _await_reply(self, deadline: float, cpu_budget: float | None) -> dict[str, Any] | str:
        """The next reply frame, or why none came: "timeout", "cpu", "exited" or "broken"."""
        assert self._process is not None
        channel = self._channel_socket()
        buffer = bytearray()
        pidfd = os.pidfd_open(self._process.pid)
        try:
            while True:
                if len(buffer) >= 4:
                    (size,) = struct.unpack(">I", buffer[:4])
                    if size > MAX_REPLY_BYTES:
                        return "broken"
                    if len(buffer) >= 4 + size:
                        return decode_message(bytes(buffer[4:4 + size]))
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return "timeout"
                ready, _, _ = select.select([channel.fileno(), pidfd], [], [],
                                            min(SAMPLE_INTERVAL_S, remaining))
                if channel.fileno() in ready:
                    chunk = channel.recv(65536)
                    if not chunk:
                        return "exited"
                    buffer += chunk
                elif pidfd in ready:
                    return "exited"
                else:
                    cpu, rss = sample_uid_usage(self.uid)
                    self._peak_mib = max(self._peak_mib, rss)
                    if cpu_budget is not None and cpu - self._cpu_seen > cpu_budget + 1.0:
                        return "cpu"
        finally:
            os.close(pidfd)

    def _stop(self, graceful: bool) -> tuple[int | None, str | None, float]:
        """End the process (EOF first when graceful); return (exit code, signal, CPU s)."""
        process = self._process
        if self._channel is not None:
            self._channel.close()
            self._channel = None
        if process is None:
            return None, None, 0.0
        self._process = None
        if graceful:
            wait_exit(process.pid, CLOSE_GRACE_S)
        sampled_cpu, rss = sample_uid_usage(self.uid)
        self._peak_mib = max(self._peak_mib, rss)
        kill_uid_processes(self.uid, sparing=process.pid)
        if not wait_exit(process.pid, 1.0):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signals.SIGKILL)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        self.leftover_processes = count_uid_processes(self.uid, settle_s=0.5)
        kill_uid_processes(self.uid)
        if os.WIFSIGNALED(status):
            return None, signals.Signals(os.WTERMSIG(status)).name, sampled_cpu
        exit_code = os.WEXITSTATUS(status)
        signal_name = diagnosis.signal_from_exit(exit_code)
        cpu = max(usage.ru_utime + usage.ru_stime, sampled_cpu)
        return (None if signal_name else exit_code), signal_name, cpu

    def _teardown(self, reason: str) -> None:
        """Kill, clean up, then publish ``reason`` (``ended`` is set once nothing runs)."""
        if self._torn_down:
            return
        self._torn_down = True
        if self._timer is not None:
            self._timer.cancel()
        try:
            self._stop(graceful=reason == "closed")
        finally:
            kill_uid_processes(self.uid)
            unmount(self.run_dir / "rw")
            shutil.rmtree(self.run_dir, ignore_errors=True)
            release_uid(self.uid)
            if self._ended is None:
                self._ended = reason

    # -- outcomes ----------------------------------------------------------------------------

    def _streams(self) -> tuple[str, str, int]:
        stdout = read_tail(self.run_dir / "stdout", PROTOCOL_TAIL_BYTES)
        stderr = read_head_tail(self.run_dir / "stderr", STDERR_READ_BYTES)
        return stdout, stderr, (self.run_dir / "stdout").stat().st_size

    def _finished_cell(self, seq: int, reply: dict[str, Any], elapsed: float) -> SandboxOutcome:
        self._cpu_seen = reply_number(reply, "cpu_s")
        self._peak_mib = max(self._peak_mib, reply_number(reply, "maxrss_kib") / 1024)
        stdout, stderr, stdout_total = self._streams()
        report = reply.get("error")
        scratch = self.run_dir / "rw" / "scratch"
        outcome = cell_outcome(
            stdout, stderr, escaped_text(report) if isinstance(report, dict) else None,
            tail_chars=self.sandbox.stdout_tail_chars, stderr_chars=self.sandbox.stderr_chars,
            wall_time_s=elapsed, cpu_time_s=max(0.0, reply_number(reply, "cell_cpu_s")),
            peak_memory_mib=self._peak_mib + files_mib(scratch),
        )
        if stdout_total > len(stdout.encode()):
            outcome.stdout = outcome.stdout.model_copy(update={
                "total_chars": stdout_total, "truncated": True,
                "note": f"stdout had {stdout_total} bytes; only the end is shown"})
        if outcome.status != "success" or outcome.protocol is None:
            if outcome.status != "success":
                outcome.artifacts_note = FAILED_CELL_FILES_NOTE
            return outcome
        bad_name = first_unencodable_name(scratch)
        if bad_name is not None:
            remove_unencodable_names(scratch)  # so that later cells can give results again
            return outcome.model_copy(update={
                "status": "protocol_error", "protocol": None, "error": ScriptError(
                    kind="protocol", message=f"the scratch file name '{bad_name}' is not UTF-8 "
                    "text, so it cannot be listed or kept; it was removed from /scratch",
                    hint="Name output files with plain text (e.g. result.json).")})
        outcome.artifacts, outcome.artifacts_note = collect_artifacts(
            scratch, f"{self.sandbox.artifacts_url}/{self.session_id}/cell-{seq}",
            self._collected)
        return outcome

    def _ending_cell(self, seq: int, reply: dict[str, Any] | str, elapsed: float,
                     limits: SandboxLimits, *, session_wall: bool) -> SandboxOutcome:
        cpu_seen = self._cpu_seen
        if reply not in ("timeout", "cpu") and self._process is not None:
            wait_exit(self._process.pid, 1.0)  # it may still be writing its last words
        exit_code, signal_name, cpu = self._stop(graceful=False)
        stdout, stderr, _total = self._streams()
        cell_cpu = max(0.0, cpu - cpu_seen)
        error = ending_error(reply, exit_code=exit_code, signal_name=signal_name,
                             cell_cpu_s=cell_cpu, cell_limits=limits,
                             session_timeout_s=self.limits.timeout_s if session_wall else None)
        self._teardown(f"cell {seq} ended it: {error.message}")
        return SandboxOutcome(
            status=diagnosis.status_for(error.kind), error=error, exit_code=exit_code,
            signal="SIGKILL" if reply in ("timeout", "cpu") else signal_name,
            wall_time_s=round(elapsed, 4), cpu_time_s=round(cell_cpu, 4),
            peak_memory_mib=round(self._peak_mib, 1),
            stdout=diagnosis.tail_excerpt(stdout, self.sandbox.stdout_tail_chars),
            stderr=diagnosis.head_tail_excerpt(stderr, self.sandbox.stderr_chars),
            leftover_processes=self.leftover_processes, artifacts_note=FAILED_CELL_FILES_NOTE,
        )
