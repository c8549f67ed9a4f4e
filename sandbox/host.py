"""Host-side helpers of the bubblewrap sandbox: waiting, the run's uid, tmpfs, bounded reads.

Used by :class:`sandbox.bubblewrap.BubblewrapSandbox`; nothing here starts a sandbox.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import select
import signal as signals
import stat
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from geoask.errors import SandboxError
from sandbox import diagnosis
from sandbox.models import SandboxLimits

_UIDS_LOCK = threading.Lock()
_UIDS_IN_USE: set[int] = set()


def allocate_uid(uid_base: int, uid_count: int) -> int:
    """Pick a uid in ``[uid_base, uid_base + uid_count)`` no run here uses and no process holds.

    Raises:
        SandboxError: none found in 100 tries.

    """
    with _UIDS_LOCK:
        for _ in range(100):
            uid = uid_base + secrets.randbelow(uid_count)
            if uid not in _UIDS_IN_USE and not uid_pids(uid):
                _UIDS_IN_USE.add(uid)
                return uid
    raise SandboxError(
        "no free sandbox uid found; widen GEOASK_SANDBOX_UID_COUNT or check for stuck "
        "sandbox processes"
    )


def release_uid(uid: int) -> None:
    """Give ``uid`` back to the pool (after its processes were killed)."""
    with _UIDS_LOCK:
        _UIDS_IN_USE.discard(uid)


@dataclass
class Finished:
    """How a run ended, as seen from the host.

    Attributes:
        exit_code: the script's exit code (None when a signal ended it).
        signal_name: ``SIGKILL`` etc. when a signal ended it (also on a wall-clock kill).
        timed_out: True when the wall-clock limit killed the run.
        wall_time_s, cpu_time_s: elapsed and CPU time (s).
        peak_memory_mib: peak resident memory (MiB).
        leftover_processes: processes of the run's uid still alive after it (0 when sound).

    """

    exit_code: int | None
    signal_name: str | None
    timed_out: bool
    wall_time_s: float
    cpu_time_s: float
    peak_memory_mib: float
    leftover_processes: int


def wait(process: subprocess.Popen[bytes], uid: int, limits: SandboxLimits,
          started: float) -> Finished:
    """Wait for bwrap with the wall-clock limit; kill the tree on expiry."""
    timed_out, sampled_rss = wait_sampling(process.pid, uid, limits.timeout_s)
    sampled_cpu = 0.0
    if timed_out:
        sampled_cpu, last_rss = sample_uid_usage(uid)
        sampled_rss = max(sampled_rss, last_rss)
        # Kill the sandboxed processes first so that bwrap reaps them (no zombies) and exits
        # on its own; kill bwrap too if it does not follow within a second.
        kill_uid_processes(uid, sparing=process.pid)
        if not wait_exit(process.pid, 1.0):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signals.SIGKILL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.monotonic() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    # Give the namespace's init a moment to be reaped after bwrap's death, then count what is
    # left; a correct sandbox leaves nothing.
    leftover = count_uid_processes(uid, settle_s=0.5 if timed_out else 0.0)
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
    # not usage.ru_maxrss: the child started from this process inherits its high-water mark
    # (hundreds of MiB of host Python); the sandboxed processes are sampled while they run
    # and the bootstrap reports its own peak (see peak_memory_mib)
    if timed_out:
        signal_name = "SIGKILL"
    return Finished(exit_code, signal_name, timed_out, wall, cpu, sampled_rss, leftover)


#: Seconds between samples of the sandboxed processes' resident memory while waiting.
SAMPLE_INTERVAL_S = 0.05


def wait_sampling(pid: int, uid: int, timeout_s: float) -> tuple[bool, float]:
    """Wait up to ``timeout_s`` for ``pid`` to exit, sampling the run uid's peak RSS meanwhile.

    Returns ``(timed_out, largest VmHWM seen in MiB)``; the child is not reaped here.
    """
    deadline = time.monotonic() + timeout_s
    peak = 0.0
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return True, peak
        if wait_exit(pid, min(SAMPLE_INTERVAL_S, remaining)):
            return False, peak
        peak = max(peak, sample_uid_usage(uid)[1])


def reported_peak_mib(path: Path) -> float:
    """The bootstrap's own peak resident set (``/meta/usage.json``), MiB; 0.0 if absent."""
    try:
        with open(path, encoding="utf-8") as handle:
            usage = json.loads(handle.read(4096))
        return max(float(usage["maxrss_kib"]), float(usage["children_maxrss_kib"])) / 1024
    except (OSError, ValueError, KeyError, TypeError):
        return 0.0


def wait_exit(pid: int, timeout_s: float) -> bool:
    """True when ``pid`` (our child) exits within ``timeout_s`` (it is not reaped here)."""
    pidfd = os.pidfd_open(pid)
    try:
        ready, _, _ = select.select([pidfd], [], [], timeout_s)
    finally:
        os.close(pidfd)
    return bool(ready)


def uid_pids(uid: int) -> list[int]:
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


def sample_uid_usage(uid: int) -> tuple[float, float]:
    """Return (CPU seconds, largest RSS MiB) of the uid's live processes (for timed-out runs)."""
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = rss = 0.0
    for pid in uid_pids(uid):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            cpu += (int(fields[11]) + int(fields[12])) / ticks
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    rss = max(rss, int(line.split()[1]) / 1024.0)
    return cpu, rss


def count_uid_processes(uid: int, settle_s: float) -> int:
    """Processes of ``uid`` still alive, after waiting up to ``settle_s`` (s) for none."""
    deadline = time.monotonic() + settle_s
    while True:
        count = len(uid_pids(uid))
        if count == 0 or time.monotonic() >= deadline:
            return count
        time.sleep(0.02)


def kill_uid_processes(uid: int, sparing: int | None = None, wait_s: float = 0.0) -> None:
    """SIGKILL every process of the run's uid except ``sparing`` (the range is the sandbox's).

    ``wait_s`` > 0: then wait up to that long until none is alive (a killed process lingers
    for a moment before it is gone), so a caller can say the uid holds no process.
    """
    for pid in uid_pids(uid):
        if pid == sparing:
            continue
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signals.SIGKILL)
    deadline = time.monotonic() + wait_s
    while wait_s > 0 and time.monotonic() < deadline and any(
            pid != sparing for pid in uid_pids(uid)):
        time.sleep(0.01)


def private_file(path: Path) -> BinaryIO:
    """Create ``path`` for writing with mode 0600 (the sandbox writes through the open fd)."""
    return os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb")


def mount_tmpfs(folder: Path, size_mib: int, uid: int) -> None:
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


def unmount(folder: Path) -> None:
    """Unmount ``folder`` if something is mounted there (lazily if it is still busy)."""
    if not os.path.ismount(folder):
        return
    completed = subprocess.run(["umount", str(folder)], capture_output=True, check=False)
    if completed.returncode != 0:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True, check=False)


def first_untraversable_ancestor(folder: Path) -> Path | None:
    """Return the first existing ancestor of ``folder`` lacking o+x, or None if all have it."""
    for ancestor in reversed(folder.absolute().parents):
        if ancestor.exists() and not ancestor.stat().st_mode & stat.S_IXOTH:
            return ancestor
    return None


def files_mib(folder: Path) -> float:
    """MiB the files under ``folder`` occupy (allocated blocks; links not followed).

    The run's ``/scratch`` is a tmpfs: its pages are RAM but in no process's resident set, so
    they are added to the run's memory. 0.0 if ``folder`` cannot be read.
    """
    used = 0
    for directory, _subdirs, names in os.walk(folder, followlinks=False):
        for name in names:
            with contextlib.suppress(OSError):
                used += os.lstat(os.path.join(directory, name)).st_blocks * 512
    return used / (1024 * 1024)


def read_tail(path: Path, max_bytes: int) -> str:
    """The last ``max_bytes`` bytes of ``path`` as text (invalid UTF-8 replaced)."""
    with open(path, "rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        handle.seek(max(0, size - max_bytes))
        return handle.read().decode("utf-8", errors="replace")


def read_head_tail(path: Path, max_bytes: int) -> str:
    """At most ``max_bytes`` of ``path``: a quarter from the head, the rest from the tail."""
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


def read_report(path: Path) -> dict[str, Any] | None:
    """The bootstrap's JSON report at ``path`` (first MiB), or None if absent or unreadable.

    Strings are :func:`escaped_text`: an exception message may hold lone surrogates.
    """
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.loads(handle.read(1024 * 1024))
    except (OSError, ValueError):
        return None
    return escaped_text(data) if isinstance(data, dict) else None


def escaped_text(value: Any) -> Any:
    r"""``value`` with every lone surrogate in its strings escaped (``\\udcff``), so it encodes.

    >>> escaped_text({"message": "bad \udcff"})
    {'message': 'bad \\udcff'}
    """
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {escaped_text(key): escaped_text(item) for key, item in value.items()}
    if isinstance(value, list):
        return [escaped_text(item) for item in value]
    return value

