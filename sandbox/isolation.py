"""How a run is isolated: the script's environment, bubblewrap's options, prlimit's limits.

Pure functions of the limits and folders (see :mod:`sandbox.bubblewrap` for what each
protection is for); tested without starting a sandbox.
"""

from __future__ import annotations

from pathlib import Path

from sandbox.models import SandboxLimits

SANDBOX_UID = 1000
"""uid and gid of the script inside its user namespace."""


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

