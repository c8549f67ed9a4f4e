"""The real sandbox: one script, one fresh bubblewrap process under an unprivileged uid.

Protections and how each is enforced (host side here, in-process side in ``bootstrap.py``):

- **Network**: ``--unshare-net`` gives a network namespace holding only an unconfigured
  loopback; nothing on the host (PostGIS on 127.0.0.1:55432 included) is reachable.
- **Processes**: ``--unshare-pid`` with ``--as-pid-1`` (the script is PID 1 of its own
  namespace: host PIDs do not exist for it, and when it exits the kernel kills everything
  else in the namespace; bwrap reaps it directly, so wait4's rusage gives its CPU time and
  peak RSS); a seccomp filter refuses fork/vfork/clone-without-CLONE_THREAD/clone3/execve/
  execveat with EPERM; RLIMIT_NPROC on a per-run unprivileged host uid caps processes+threads.
- **Disk**: ``/scratch`` and ``/meta`` live on one tmpfs the host mounts per run with a size
  cap (``GEOASK_SANDBOX_SCRATCH_MIB``), ``/tmp`` is a capped tmpfs inside, ``/dev`` is read-only;
  together with RLIMIT_FSIZE no write can fill the host's disk or memory.
- **Files**: a fresh root holding read-only ``/usr`` (system libraries and Debian's Python),
  the read-only runtime venv at ``/runtime``, the script and bootstrap read-only at ``/job``,
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

import contextlib
import json
import mimetypes
import os
import secrets
import select
import shutil
import signal as signals
import stat
import subprocess
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import fsspec

from geoask.errors import SandboxError
from geoask.settings import Settings
from sandbox import diagnosis
from sandbox.models import Artifact, OutcomeStatus, SandboxLimits, SandboxOutcome, ScriptError
from sandbox.protocol import ProtocolViolation, parse_protocol
from sandbox.runtime import pinned_requirements, read_stamp, requirements_hash

BOOTSTRAP_SOURCE = Path(__file__).with_name("bootstrap.py")
SANDBOX_UID = 1000
MAX_ARTIFACTS = 200
PROTOCOL_TAIL_BYTES = 8 * 1024 * 1024
STDERR_READ_BYTES = 1024 * 1024

_UIDS_LOCK = threading.Lock()
_UIDS_IN_USE: set[int] = set()

mimetypes.add_type("application/geo+json", ".geojson")
mimetypes.add_type("application/vnd.apache.parquet", ".parquet")
mimetypes.add_type("application/geopackage+sqlite3", ".gpkg")


def sandbox_environment() -> dict[str, str]:
    """Return the whole environment a script sees (nothing is inherited from the caller)."""
    return {
        "PATH": "/runtime/bin:/usr/bin:/bin",
        # /tmp here is the sandbox's private, size-capped tmpfs, not the host's.
        "HOME": "/tmp",  # noqa: S108
        "TMPDIR": "/tmp",  # noqa: S108
        "USER": "sandbox",
        "LOGNAME": "sandbox",
        "LANG": "C.UTF-8",
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": "/tmp/matplotlib",  # noqa: S108
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "NUMEXPR_NUM_THREADS": "1",
        "POLARS_MAX_THREADS": "2",
        "PROJ_NETWORK": "OFF",
        # jemalloc (polars) and Arrow's pool reserve address space generously; under RLIMIT_AS
        # jemalloc's background threads fail and polars aborts. Keep them frugal.
        "_RJEM_MALLOC_CONF": "background_thread:false",
        "ARROW_DEFAULT_MEMORY_POOL": "system",
        "GEOASK_INPUT_DIR": "/input",
        "GEOASK_SCRATCH_DIR": "/scratch",
    }


def bwrap_options(
    *, runtime_dir: Path, run_dir: Path, limits: SandboxLimits, environment: dict[str, str]
) -> list[str]:
    """Build bubblewrap's options (everything before the command).

    Args:
        runtime_dir: host folder of the runtime venv (mounted read-only at ``/runtime``).
        run_dir: host folder holding ``job/``, ``input/`` and ``rw/{scratch,meta}``.
        limits: for the size of ``/tmp``.
        environment: the script's whole environment.

    """
    options = [
        "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
        "--as-pid-1",
        "--new-session", "--cap-drop", "ALL", "--hostname", "sandbox",
        "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID),
        "--ro-bind", "/usr", "/usr",
        "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
        "--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin",
        "--proc", "/proc", "--dev", "/dev",
        "--size", str(limits.tmp_mib * 1024 * 1024), "--tmpfs", "/tmp",  # noqa: S108
        "--ro-bind", str(runtime_dir), "/runtime",
        "--ro-bind", str(run_dir / "job"), "/job",
        "--ro-bind", str(run_dir / "input"), "/input",
        "--bind", str(run_dir / "rw" / "scratch"), "/scratch",
        "--bind", str(run_dir / "rw" / "meta"), "/meta",
        "--remount-ro", "/",
        # /dev is an unsized tmpfs (tmpfs pages escape RLIMIT_AS): no files there, /dev/shm
        # included. The device nodes (null, zero, urandom, ...) are separate mounts and work.
        "--remount-ro", "/dev",
        "--chdir", "/scratch",
        "--clearenv",
    ]
    for name, value in environment.items():
        options += ["--setenv", name, value]
    return options


def prlimit_options(limits: SandboxLimits) -> list[str]:
    """Return ``prlimit`` options applying ``limits`` (RLIMIT_CPU hard = soft + 1 s)."""
    mib = 1024 * 1024
    return [
        f"--as={limits.memory_mib * mib}",
        f"--cpu={limits.cpu_s}:{limits.cpu_s + 1}",
        f"--fsize={limits.file_size_mib * mib}",
        f"--nofile={limits.open_files}",
        f"--nproc={limits.max_tasks}",
        "--core=0",
    ]


@dataclass
class _Finished:
    exit_code: int | None
    signal_name: str | None
    timed_out: bool
    wall_time_s: float
    cpu_time_s: float
    peak_memory_mib: float
    leftover_processes: int


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
    ) -> None:
        self.runtime_dir = runtime_dir
        self.work_dir = work_dir
        self.artifacts_url = artifacts_url.rstrip("/")
        self.default_limits = default_limits or SandboxLimits()
        self.uid_base = uid_base
        self.uid_count = uid_count
        self.stdout_tail_chars = stdout_tail_chars
        self.stderr_chars = stderr_chars
        self.bwrap = bwrap
        self.runtime_hash = runtime_hash

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
        bwrap, prlimit = self._check_prerequisites()
        run_id = uuid.uuid4().hex[:16]
        uid = self._allocate_uid()
        run_dir = self.work_dir / run_id
        try:
            self._prepare_run_dir(run_dir, script, inputs, uid, limits)
            finished = self._execute(bwrap, prlimit, run_dir, uid, limits)
            return self._outcome(run_dir, run_id, finished, limits)
        finally:
            _kill_uid_processes(uid)
            _unmount(run_dir / "rw")
            shutil.rmtree(run_dir, ignore_errors=True)
            with _UIDS_LOCK:
                _UIDS_IN_USE.discard(uid)

    # -- steps -------------------------------------------------------------------------------

    def _allocate_uid(self) -> int:
        """Pick a uid from the range that no run in this process uses and no process holds."""
        with _UIDS_LOCK:
            for _ in range(100):
                uid = self.uid_base + secrets.randbelow(self.uid_count)
                if uid not in _UIDS_IN_USE and not _uid_pids(uid):
                    _UIDS_IN_USE.add(uid)
                    return uid
        raise SandboxError(
            "no free sandbox uid found; widen GEOASK_SANDBOX_UID_COUNT or check for stuck "
            "sandbox processes"
        )

    def _check_prerequisites(self) -> tuple[str, str]:
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
            blocked = _first_untraversable_ancestor(folder)
            if blocked is not None:
                raise SandboxError(
                    f"{blocked} is not searchable by other users (mode "
                    f"{blocked.stat().st_mode & 0o777:o}), so the sandbox's unprivileged uid "
                    f"cannot reach {folder}; set {setting} to a folder outside it or "
                    f"`chmod o+x {blocked}`"
                )
        return bwrap, prlimit

    def _prepare_run_dir(
        self, run_dir: Path, script: str, inputs: Sequence[Path], uid: int,
        limits: SandboxLimits,
    ) -> None:
        names = [Path(path).name for path in inputs]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise SandboxError(f"two inputs share the file name {duplicates[0]!r}; rename one")
        for path in inputs:
            if not Path(path).is_file():
                raise SandboxError(f"input file {path} does not exist or is not a file")
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
            _mount_tmpfs(writable, limits.scratch_mib, uid)
        for name in ("scratch", "meta"):
            (writable / name).mkdir(mode=0o700)
            os.chown(writable / name, uid, uid)
        shutil.copyfile(BOOTSTRAP_SOURCE, run_dir / "job" / "bootstrap.py")
        (run_dir / "job" / "script.py").write_text(script, encoding="utf-8")
        for path in inputs:
            target = run_dir / "input" / Path(path).name
            shutil.copyfile(path, target)
        for path in [*(run_dir / "job").iterdir(), *(run_dir / "input").iterdir()]:
            os.chown(path, 0, uid)
            path.chmod(0o640)

    def _execute(
        self, bwrap: str, prlimit: str, run_dir: Path, uid: int, limits: SandboxLimits
    ) -> _Finished:
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
        with _private_file(run_dir / "stdout") as stdout, \
                _private_file(run_dir / "stderr") as stderr:
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
            return _wait(process, uid, limits, started)

    def _outcome(
        self, run_dir: Path, run_id: str, finished: _Finished, limits: SandboxLimits
    ) -> SandboxOutcome:
        if not (run_dir / "rw" / "meta" / "started").exists() and not finished.timed_out:
            detail = _read_tail(run_dir / "stderr", 2000).strip()
            raise SandboxError(
                "the sandbox could not start (bubblewrap or the runtime failed before the "
                f"script ran): {detail or 'no message'}"
            )
        stdout_text = _read_tail(run_dir / "stdout", PROTOCOL_TAIL_BYTES)
        stdout_total = (run_dir / "stdout").stat().st_size
        stderr_text = _read_head_tail(run_dir / "stderr", STDERR_READ_BYTES)
        stdout = diagnosis.tail_excerpt(stdout_text, self.stdout_tail_chars)
        if stdout_total > len(stdout_text.encode()):
            stdout = stdout.model_copy(update={
                "total_chars": stdout_total, "truncated": True,
                "note": f"stdout had {stdout_total} bytes; only the end is shown",
            })
        stderr = diagnosis.head_tail_excerpt(stderr_text, self.stderr_chars)
        report = _read_report(run_dir / "rw" / "meta" / "error.json")
        artifacts, artifacts_note = self._collect_artifacts(run_dir / "rw" / "scratch", run_id)
        base: dict[str, Any] = {
            "artifacts": artifacts, "artifacts_note": artifacts_note,
            "exit_code": finished.exit_code,
            "signal": finished.signal_name, "wall_time_s": round(finished.wall_time_s, 4),
            "cpu_time_s": round(finished.cpu_time_s, 4),
            "peak_memory_mib": round(finished.peak_memory_mib, 1), "stdout": stdout,
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
                status: OutcomeStatus = (
                    "success" if protocol.status == "success" else "script_reported_error"
                )
                return SandboxOutcome(status=status, protocol=protocol, **base)
        else:
            error = diagnosis.classify_exit(
                exit_code=finished.exit_code, signal_name=None, timed_out=False,
                cpu_time_s=finished.cpu_time_s, limits=limits,
            )
        return SandboxOutcome(status=diagnosis.status_for(error.kind), error=error, **base)

    def _collect_artifacts(self, scratch: Path,
                           run_id: str) -> tuple[list[Artifact], str | None]:
        files: list[tuple[str, Path, int]] = []
        past_cap = not_regular = 0
        for directory, subdirs, names in os.walk(scratch, followlinks=False):
            not_regular += sum(Path(directory, d).is_symlink() for d in subdirs)
            subdirs[:] = [d for d in subdirs if not Path(directory, d).is_symlink()]
            for name in sorted(names):
                path = Path(directory, name)
                info = path.lstat()
                if not stat.S_ISREG(info.st_mode):
                    not_regular += 1
                elif len(files) >= MAX_ARTIFACTS:
                    past_cap += 1
                else:
                    files.append((path.relative_to(scratch).as_posix(), path, info.st_size))
        notes = []
        if past_cap:
            notes.append(f"{past_cap} files past the first {MAX_ARTIFACTS} were not collected")
        if not_regular:
            notes.append(f"{not_regular} links, pipes or devices were skipped")
        note = "; ".join(notes) or None
        if not files:
            return [], note
        filesystem, root = fsspec.core.url_to_fs(f"{self.artifacts_url}/{run_id}")
        artifacts = []
        for name, path, size in files:
            target = f"{root}/{name}"
            filesystem.makedirs(target.rsplit("/", 1)[0], exist_ok=True)
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
            with os.fdopen(fd, "rb") as source, filesystem.open(target, "wb") as sink:
                shutil.copyfileobj(source, sink)
            media_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
            artifacts.append(Artifact(
                name=name, uri=filesystem.unstrip_protocol(target), size_bytes=size,
                media_type=media_type,
            ))
        return artifacts, note


# -- process handling ------------------------------------------------------------------------


def _wait(process: subprocess.Popen[bytes], uid: int, limits: SandboxLimits,
          started: float) -> _Finished:
    """Wait for bwrap with the wall-clock limit; kill the tree on expiry."""
    timed_out = not _wait_exit(process.pid, limits.timeout_s)
    sampled_cpu = sampled_rss = 0.0
    if timed_out:
        sampled_cpu, sampled_rss = _sample_uid_usage(uid)
        # Kill the sandboxed processes first so that bwrap reaps them (no zombies) and exits
        # on its own; kill bwrap too if it does not follow within a second.
        _kill_uid_processes(uid, sparing=process.pid)
        if not _wait_exit(process.pid, 1.0):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signals.SIGKILL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.monotonic() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    # Give the namespace's init a moment to be reaped after bwrap's death, then count what is
    # left; a correct sandbox leaves nothing.
    leftover = _count_uid_processes(uid, settle_s=0.5 if timed_out else 0.0)
    exit_code: int | None = None
    signal_name: str | None = None
    if os.WIFSIGNALED(status):
        signal_name = signals.Signals(os.WTERMSIG(status)).name
    else:
        exit_code = os.WEXITSTATUS(status)
        signal_name = diagnosis.signal_from_exit(exit_code)
        if signal_name is not None:
            exit_code = None
    cpu = max(usage.ru_utime + usage.ru_stime, sampled_cpu)
    peak = max(usage.ru_maxrss / 1024.0, sampled_rss)
    if timed_out:
        signal_name = "SIGKILL"
    return _Finished(exit_code, signal_name, timed_out, wall, cpu, peak, leftover)


def _wait_exit(pid: int, timeout_s: float) -> bool:
    """True when ``pid`` (our child) exits within ``timeout_s`` (it is not reaped here)."""
    pidfd = os.pidfd_open(pid)
    try:
        ready, _, _ = select.select([pidfd], [], [], timeout_s)
    finally:
        os.close(pidfd)
    return bool(ready)


def _uid_pids(uid: int) -> list[int]:
    """PIDs of live (non-zombie) processes owned by ``uid``."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.stat(f"/proc/{entry}").st_uid != uid:
                continue
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state not in ("Z", "X"):
            pids.append(int(entry))
    return pids


def _sample_uid_usage(uid: int) -> tuple[float, float]:
    """Return (CPU seconds, largest RSS MiB) of the uid's live processes (for timed-out runs)."""
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = rss = 0.0
    for pid in _uid_pids(uid):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            cpu += (int(fields[11]) + int(fields[12])) / ticks
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    rss = max(rss, int(line.split()[1]) / 1024.0)
    return cpu, rss


def _count_uid_processes(uid: int, settle_s: float) -> int:
    deadline = time.monotonic() + settle_s
    while True:
        count = len(_uid_pids(uid))
        if count == 0 or time.monotonic() >= deadline:
            return count
        time.sleep(0.02)


def _kill_uid_processes(uid: int, sparing: int | None = None) -> None:
    """SIGKILL every process of the run's uid except ``sparing`` (the range is the sandbox's)."""
    for pid in _uid_pids(uid):
        if pid == sparing:
            continue
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signals.SIGKILL)


def _private_file(path: Path) -> BinaryIO:
    """Create ``path`` for writing with mode 0600 (the sandbox writes through the open fd)."""
    return os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb")


def _mount_tmpfs(folder: Path, size_mib: int, uid: int) -> None:
    """Mount a size-capped tmpfs owned by ``uid`` on ``folder`` (host side, needs root)."""
    options = f"size={size_mib}m,mode=0700,uid={uid},gid={uid},nosuid,nodev,noexec"
    completed = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "geoask-sandbox", str(folder)],
        capture_output=True, text=True, check=False,
    )
    if completed.returncode != 0:
        raise SandboxError(
            f"could not mount the size-capped scratch space ({completed.stderr.strip()}); "
            "run as root with mount rights, or set GEOASK_SANDBOX_SCRATCH_MIB=0 to use a plain "
            "folder (then only the per-file size limit applies)"
        )


def _unmount(folder: Path) -> None:
    """Unmount ``folder`` if something is mounted there (lazily if it is still busy)."""
    if not os.path.ismount(folder):
        return
    completed = subprocess.run(["umount", str(folder)], capture_output=True, check=False)
    if completed.returncode != 0:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True, check=False)


def _first_untraversable_ancestor(folder: Path) -> Path | None:
    """Return the first existing ancestor of ``folder`` lacking o+x, or None if all have it."""
    for ancestor in reversed(folder.absolute().parents):
        if ancestor.exists() and not ancestor.stat().st_mode & stat.S_IXOTH:
            return ancestor
    return None


def _read_tail(path: Path, max_bytes: int) -> str:
    with open(path, "rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        handle.seek(max(0, size - max_bytes))
        return handle.read().decode("utf-8", errors="replace")


def _read_head_tail(path: Path, max_bytes: int) -> str:
    with open(path, "rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        if size <= max_bytes:
            handle.seek(0)
            return handle.read().decode("utf-8", errors="replace")
        handle.seek(0)
        head = handle.read(max_bytes // 4)
        handle.seek(size - (max_bytes - max_bytes // 4))
        tail = handle.read()
    cut = size - len(head) - len(tail)
    return (head.decode("utf-8", errors="replace") + f"\n[... {cut} bytes cut ...]\n"
            + tail.decode("utf-8", errors="replace"))


def _read_report(path: Path) -> dict[str, Any] | None:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.loads(handle.read(1024 * 1024))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
