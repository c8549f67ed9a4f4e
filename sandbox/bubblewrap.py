"""The real sandbox: one script, one fresh bubblewrap process under an unprivileged uid.

Protections and how each is enforced (host side here, in-process side in ``bootstrap.py``):

- **Network**: ``--unshare-net`` gives a network namespace holding only an unconfigured
  loopback; nothing on the host (PostGIS on 127.0.0.1:55432 included) is reachable.
- **Processes**: ``--unshare-pid`` with ``--as-pid-1`` (the script is PID 1 of its own
  namespace: host PIDs do not exist for it, and when it exits the kernel kills everything
  else in the namespace; bwrap reaps it directly, so wait4's rusage gives its CPU time and
  peak RSS); a seccomp filter (:mod:`sandbox.seccomp`) refuses fork/vfork/clone-without-
  CLONE_THREAD/clone3/execve/execveat; RLIMIT_NPROC on a per-run uid caps processes+threads.
- **Disk**: ``/scratch`` and ``/meta`` live on one tmpfs the host mounts per run with a size
  cap (``GEOASK_SANDBOX_SCRATCH_MIB``), ``/tmp`` is a capped tmpfs inside, ``/dev`` is read-only;
  together with RLIMIT_FSIZE no write can fill the host's disk or memory.
- **Files**: a fresh root holding read-only ``/usr`` (system libraries and Debian's Python),
  the read-only runtime venv at ``/runtime``, script, bootstrap and seccomp program at ``/job``,
  copies of the inputs read-only at ``/input``, one writable ``/scratch``, a size-capped
  in-memory ``/tmp``, a private ``/proc`` and minimal ``/dev``. No ``/etc``, ``/home``,
  ``/root``, ``/var`` or repository: they do not exist inside.
- **Secrets**: bwrap itself starts with ``PATH`` only (so even ``/proc/1/environ`` of the
  namespace's init holds nothing) and the script gets ``--clearenv`` plus a fixed allow-list.
  bwrap's options are passed through ``--args FD`` so ``/proc/1/cmdline`` shows no host paths.
- **Identity**: the run's host uid is picked from an unused-by-convention range
  (``GEOASK_SANDBOX_UID_BASE``...); inside, uid/gid 1000 in a user namespace with no
  capabilities, ``--disable-userns`` and ``no_new_privs``.
- **Limits**: ``prlimit`` sets RLIMIT_AS (memory), RLIMIT_CPU (soft; hard = soft+1 s),
  RLIMIT_FSIZE (stdout/stderr files count too), RLIMIT_NOFILE, RLIMIT_NPROC and RLIMIT_CORE=0
  before bwrap starts. The wall clock is enforced here: on expiry bwrap is SIGKILLed, which
  kills the namespace's init (``--die-with-parent``) and so every process in it; any process of
  the run's uid still alive afterwards is counted and killed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from geoask.errors import SandboxError
from geoask.settings import Settings
from sandbox import diagnosis, seccomp
from sandbox.ahead import StartedRun
from sandbox.artifacts import collect_artifacts
from sandbox.host import (
    Finished,
    allocate_uid,
    files_mib,
    first_untraversable_ancestor,
    kill_uid_processes,
    mount_tmpfs,
    private_file,
    read_head_tail,
    read_report,
    read_tail,
    release_uid,
    reported_peak_mib,
    unmount,
    wait,
)
from sandbox.isolation import bwrap_options, prlimit_options, sandbox_environment
from sandbox.models import OutcomeStatus, SandboxLimits, SandboxOutcome, ScriptError
from sandbox.protocol import ProtocolViolation, first_unencodable_name, parse_protocol
from sandbox.ready import READY
from sandbox.runtime import PRELOADED_IMPORTS, pinned_requirements, read_stamp, requirements_hash
from sandbox.session import BubblewrapSession

BOOTSTRAP_SOURCE = Path(__file__).with_name("bootstrap.py")
PROTOCOL_TAIL_BYTES = 8 * 1024 * 1024
STDERR_READ_BYTES = 1024 * 1024

FAILED_RUN_FILES_NOTE = "files written to /scratch are kept only from a successful run"


class BubblewrapSandbox:
    """Runs each script in a fresh bubblewrap sandbox (see the module docstring).

    Args:
        runtime_dir: the venv built by :func:`sandbox.runtime.ensure_runtime`.
        work_dir: host folder for per-run folders (created; must be traversable by any uid).
        artifacts_url: fsspec URL; artifacts go to ``<artifacts_url>/<run id>/<name>``.
        default_limits: limits used when :meth:`run` gets none.
        uid_base, uid_count: host uid range a run picks its unprivileged uid from.
        stdout_tail_chars, stderr_chars: excerpt sizes kept in the outcome.
        bwrap: the bubblewrap executable.
        runtime_hash: requirements hash the runtime must carry (see
            :func:`sandbox.runtime.requirements_hash`); None skips the staleness check.
        session_limits: bounds of a session when :meth:`open_session` gets none.
        cell_timeout_s, cell_cpu_s: per-cell wall clock and CPU time of a session (s).
        ready: runs :meth:`start` keeps started ahead per limits (:mod:`sandbox.ready`).

    """

    def __init__(
        self,
        runtime_dir: Path,
        work_dir: Path,
        artifacts_url: str,
        *,
        default_limits: SandboxLimits | None = None,
        uid_base: int = 200_000,
        uid_count: int = 60_000,
        stdout_tail_chars: int = 4000,
        stderr_chars: int = 4000,
        bwrap: str = "bwrap",
        runtime_hash: str | None = None,
        session_limits: SandboxLimits | None = None,
        cell_timeout_s: float = 120.0,
        cell_cpu_s: int = 60,
        ready: int = 0,
    ) -> None:
        self.runtime_dir, self.work_dir = runtime_dir, work_dir
        self.artifacts_url = artifacts_url.rstrip("/")
        self.default_limits = default_limits or SandboxLimits()
        self.uid_base, self.uid_count = uid_base, uid_count
        self.stdout_tail_chars, self.stderr_chars = stdout_tail_chars, stderr_chars
        self.bwrap, self.runtime_hash = bwrap, runtime_hash
        self.session_limits = session_limits or self.default_limits
        self.cell_timeout_s, self.cell_cpu_s = cell_timeout_s, cell_cpu_s
        self.ready = ready

    @classmethod
    def from_settings(cls, settings: Settings) -> BubblewrapSandbox:
        """Build a sandbox from the ``GEOASK_SANDBOX_*`` settings."""
        return cls(
            settings.sandbox_runtime_path,
            settings.sandbox_work_path,
            settings.sandbox_artifacts,
            default_limits=SandboxLimits.from_settings(settings),
            uid_base=settings.sandbox_uid_base,
            uid_count=settings.sandbox_uid_count,
            stdout_tail_chars=settings.sandbox_stdout_tail_chars,
            stderr_chars=settings.sandbox_stderr_chars,
            runtime_hash=requirements_hash(pinned_requirements(), settings.sandbox_base_python),
            session_limits=SandboxLimits.for_session(settings),
            cell_timeout_s=settings.sandbox_cell_timeout_s,
            cell_cpu_s=settings.sandbox_cell_cpu_s,
            ready=settings.sandbox_ready,
        )

    def run(
        self, script: str, inputs: Sequence[Path] = (), limits: SandboxLimits | None = None
    ) -> SandboxOutcome:
        """Run ``script`` in a fresh sandbox; see :meth:`sandbox.models.Sandbox.run`.

        Raises:
            SandboxError: bwrap, prlimit or the runtime is missing, must run as root, an input
                is missing or two inputs share a file name.

        """
        limits = limits or self.default_limits
        bwrap, prlimit = self.check_prerequisites()
        run_id = uuid.uuid4().hex[:16]
        uid = self.allocate_uid()
        run_dir = self.work_dir / run_id
        try:
            self.prepare_run_dir(run_dir, script, inputs, uid, limits)
            finished = self._execute(bwrap, prlimit, run_dir, uid, limits)
            return self.read_outcome(run_dir, run_id, finished, limits)
        finally:
            kill_uid_processes(uid)
            unmount(run_dir / "rw")
            shutil.rmtree(run_dir, ignore_errors=True)
            release_uid(uid)

    def start(self, limits: SandboxLimits | None = None) -> StartedRun:
        """Start the sandbox of one script before the script exists; see :mod:`sandbox.ahead`.

        One kept ready by :data:`sandbox.ready.READY` when :attr:`ready` > 0 and one is.

        Raises:
            SandboxError: as :meth:`run`, before anything was started.

        """
        return READY.take(self, limits or self.default_limits, PRELOADED_IMPORTS, self.ready)

    def open_session(self, limits: SandboxLimits | None = None) -> BubblewrapSession:
        """Start a persistent session; see :meth:`sandbox.models.Sandbox.open_session`.

        Raises:
            SandboxError: as :meth:`run`, or the session's process did not start.

        """
        return BubblewrapSession(self, limits or self.session_limits)

    # -- steps -------------------------------------------------------------------------------

    def allocate_uid(self) -> int:
        """Pick a free uid from this sandbox's range (see :func:`sandbox.host.allocate_uid`)."""
        return allocate_uid(self.uid_base, self.uid_count)

    def check_prerequisites(self) -> tuple[str, str]:
        """Return the paths of bwrap and prlimit after checking everything a run needs.

        Raises:
            SandboxError: a tool or the (current) runtime is missing, not root, or a folder
                the run's uid must reach is not searchable.

        """
        bwrap = shutil.which(self.bwrap)
        if bwrap is None:
            raise SandboxError(
                f"bubblewrap ({self.bwrap}) is not installed; install it with "
                "`apt-get install bubblewrap`"
            )
        prlimit = shutil.which("prlimit")
        if prlimit is None:
            raise SandboxError("prlimit (util-linux) is not installed; it sets the limits")
        if not (self.runtime_dir / "bin" / "python").exists():
            raise SandboxError(
                f"the sandbox runtime is missing at {self.runtime_dir}; build it with "
                "`geoask sandbox setup`"
            )
        if self.runtime_hash is not None and read_stamp(self.runtime_dir) != self.runtime_hash:
            raise SandboxError(
                f"the sandbox runtime at {self.runtime_dir} was built for other requirements; "
                "rebuild it with `geoask sandbox setup`"
            )
        if os.geteuid() != 0:
            raise SandboxError(
                "the sandbox must be started as root: it switches each run to its own "
                "unprivileged uid so that RLIMIT_NPROC applies"
            )
        for folder, setting in ((self.runtime_dir, "GEOASK_SANDBOX_RUNTIME_DIR"),
                                (self.work_dir, "GEOASK_SANDBOX_WORK_DIR")):
            blocked = first_untraversable_ancestor(folder)
            if blocked is not None:
                raise SandboxError(
                    f"{blocked} is not searchable by other users (mode "
                    f"{blocked.stat().st_mode & 0o777:o}), so the sandbox's unprivileged uid "
                    f"cannot reach {folder}; set {setting} to a folder outside it or "
                    f"`chmod o+x {blocked}`"
                )
        return bwrap, prlimit

    def prepare_run_dir(
        self, run_dir: Path, script: str, inputs: Sequence[Path], uid: int,
        limits: SandboxLimits,
    ) -> None:
        """Create ``run_dir`` (job, input, and the capped rw/{scratch,meta}) for ``uid``.

        Raises:
            SandboxError: an input is missing, two share a name, or the tmpfs mount failed.

        """
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.work_dir.chmod(0o755)
        run_dir.mkdir(mode=0o755)
        for name in ("job", "input"):  # readable by root and the run's uid (group) only
            (run_dir / name).mkdir(mode=0o750)
            os.chown(run_dir / name, 0, uid)
        writable = run_dir / "rw"
        writable.mkdir(mode=0o700)
        os.chown(writable, uid, uid)  # the mount below (if any) gets the same owner
        if limits.scratch_mib > 0:
            mount_tmpfs(writable, limits.scratch_mib, uid)
        for name in ("scratch", "meta"):
            (writable / name).mkdir(mode=0o700)
            os.chown(writable / name, uid, uid)
        shutil.copyfile(BOOTSTRAP_SOURCE, run_dir / "job" / "bootstrap.py")
        (run_dir / "job" / seccomp.FILE_NAME).write_bytes(seccomp.machine_program())
        self.stage_job(run_dir, script, inputs, uid)

    @staticmethod
    def stage_job(run_dir: Path, script: str, inputs: Sequence[Path], uid: int) -> None:
        """Write the script and copy the inputs into ``run_dir`` (readable by ``uid`` only).

        Raises:
            SandboxError: an input is missing or two share a file name.

        """
        names = [Path(path).name for path in inputs]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise SandboxError(f"two inputs share the file name {duplicates[0]!r}; rename one")
        for path in inputs:
            if not Path(path).is_file():
                raise SandboxError(f"input file {path} does not exist or is not a file")
        (run_dir / "job" / "script.py").write_text(script, encoding="utf-8")
        for path in inputs:
            target = run_dir / "input" / Path(path).name
            shutil.copyfile(path, target)
        for path in [*(run_dir / "job").iterdir(), *(run_dir / "input").iterdir()]:
            os.chown(path, 0, uid)
            path.chmod(0o640)

    def _execute(
        self, bwrap: str, prlimit: str, run_dir: Path, uid: int, limits: SandboxLimits
    ) -> Finished:
        options = bwrap_options(
            runtime_dir=self.runtime_dir, run_dir=run_dir, limits=limits,
            environment=sandbox_environment(),
        )
        args_fd = os.memfd_create("bwrap-args")
        os.write(args_fd, b"".join(option.encode() + b"\0" for option in options))
        os.lseek(args_fd, 0, os.SEEK_SET)
        command = [
            prlimit, *prlimit_options(limits), "--", bwrap, "--args", str(args_fd),
            "/runtime/bin/python", "-I", "/job/bootstrap.py",
        ]
        with private_file(run_dir / "stdout") as stdout, \
                private_file(run_dir / "stderr") as stderr:
            started = time.monotonic()
            try:
                process = subprocess.Popen(
                    command, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr,
                    pass_fds=(args_fd,), env={"PATH": "/usr/bin:/bin"}, cwd="/",
                    user=uid, group=uid, extra_groups=[], start_new_session=True,
                )
            except OSError as error:
                raise SandboxError(f"could not start bubblewrap: {error}") from error
            finally:
                os.close(args_fd)
            return wait(process, uid, limits, started)

    def read_outcome(
        self, run_dir: Path, run_id: str, finished: Finished, limits: SandboxLimits
    ) -> SandboxOutcome:
        """The outcome of the run in ``run_dir`` that ended as ``finished``.

        Raises:
            SandboxError: bubblewrap or the runtime failed before the script ran.

        """
        if not (run_dir / "rw" / "meta" / "started").exists() and not finished.timed_out:
            detail = read_tail(run_dir / "stderr", 2000).strip()
            raise SandboxError(
                "the sandbox could not start (bubblewrap or the runtime failed before the "
                f"script ran): {detail or 'no message'}"
            )
        stdout_text = read_tail(run_dir / "stdout", PROTOCOL_TAIL_BYTES)
        stdout_total = (run_dir / "stdout").stat().st_size
        stderr_text = read_head_tail(run_dir / "stderr", STDERR_READ_BYTES)
        stdout = diagnosis.tail_excerpt(stdout_text, self.stdout_tail_chars)
        if stdout_total > len(stdout_text.encode()):
            stdout = stdout.model_copy(update={
                "total_chars": stdout_total, "truncated": True,
                "note": f"stdout had {stdout_total} bytes; only the end is shown",
            })
        stderr = diagnosis.head_tail_excerpt(stderr_text, self.stderr_chars)
        report = read_report(run_dir / "rw" / "meta" / "error.json")
        base: dict[str, Any] = {
            "exit_code": finished.exit_code,
            "signal": finished.signal_name, "wall_time_s": round(finished.wall_time_s, 4),
            "cpu_time_s": round(finished.cpu_time_s, 4),
            # peak RSS of the sandboxed processes (sampled, and as the bootstrap reports it)
            # + the RAM its files in /scratch (a tmpfs) hold
            "peak_memory_mib": round(
                max(finished.peak_memory_mib, reported_peak_mib(run_dir / "rw" / "meta"
                                                                / "usage.json"))
                + files_mib(run_dir / "rw" / "scratch"), 1),
            "stdout": stdout,
            "stderr": stderr, "leftover_processes": finished.leftover_processes,
        }
        error: ScriptError
        if finished.timed_out or finished.signal_name is not None:
            error = diagnosis.classify_exit(
                exit_code=finished.exit_code, signal_name=finished.signal_name,
                timed_out=finished.timed_out, cpu_time_s=finished.cpu_time_s, limits=limits,
            )
        elif report is not None and finished.exit_code != 0:
            # the bootstrap writes the report just before exiting non-zero; a script that exits
            # 0 after writing /meta/error.json itself does not get to forge its outcome
            error = diagnosis.classify_report(report)
        elif finished.exit_code == 0:
            try:
                protocol = parse_protocol(stdout_text)
            except ProtocolViolation as violation:
                error = ScriptError(kind="protocol", message=str(violation),
                                    hint="End the script by printing the protocol object.")
            else:
                bad_name = first_unencodable_name(run_dir / "rw" / "scratch")
                if bad_name is None:
                    status: OutcomeStatus = (
                        "success" if protocol.status == "success" else "script_reported_error"
                    )
                    artifacts, note = collect_artifacts(run_dir / "rw" / "scratch",
                                                        f"{self.artifacts_url}/{run_id}")
                    return SandboxOutcome(status=status, protocol=protocol, artifacts=artifacts,
                                          artifacts_note=note, **base)
                error = ScriptError(
                    kind="protocol", message=f"the scratch file name '{bad_name}' is not UTF-8 "
                    "text, so it cannot be listed or kept",
                    hint="Name output files with plain text (e.g. result.json).")
        else:
            error = diagnosis.classify_exit(
                exit_code=finished.exit_code, signal_name=None, timed_out=False,
                cpu_time_s=finished.cpu_time_s, limits=limits,
            )
        # A failed run's files may be cut short (a size limit, a kill): none is kept.
        return SandboxOutcome(status=diagnosis.status_for(error.kind), error=error,
                              artifacts_note=FAILED_RUN_FILES_NOTE, **base)
