"""Settings of geoask: the bubblewrap sandbox of the Python steps (sandbox/).

One group of :class:`geoask.settings.Settings` (a ``GEOASK_*`` variable per field).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field


class SandboxSettings(BaseModel):
    """The bubblewrap sandbox of the Python steps (sandbox/)."""

    sandbox_base_python: Path = Field(
        default=Path("/usr/bin/python3.11"),
        description="Debian's Python the sandbox runtime venv is built from (readable by any uid).",
    )
    sandbox_runtime_dir: Path | None = Field(
        default=None,
        description="Sandbox runtime venv (analysis libraries only); "
        "default <home>/sandbox-runtime.",
    )
    sandbox_work_dir: Path | None = Field(
        default=None,
        description="Folder for per-script input/scratch folders; default <home>/sandbox-runs.",
    )
    sandbox_artifacts_url: str | None = Field(
        default=None,
        description="fsspec URL that files written to scratch are copied to, one sub-folder "
        "per run; default <home>/artifacts/sandbox.",
    )
    sandbox_ready: int = Field(
        default=1, ge=0,
        description="Sandboxes a long-lived process keeps started ahead, per limits, from its "
        "second Python step on (sandbox/ready.py); 0 = each step starts its own.",
    )
    sandbox_memory_mib: int = Field(
        default=2048, ge=256,
        description="Address-space limit of a sandboxed script (MiB, RLIMIT_AS).",
    )
    sandbox_cpu_s: int = Field(
        default=60, ge=1, description="CPU-time limit of a sandboxed script (s, RLIMIT_CPU)."
    )
    sandbox_timeout_s: float = Field(
        default=120.0, gt=0,
        description="Wall-clock limit of a sandboxed script (s); the whole tree is killed.",
    )
    sandbox_file_size_mib: int = Field(
        default=256, ge=1,
        description="Largest file a sandboxed script may write, stdout included "
        "(MiB, RLIMIT_FSIZE).",
    )
    sandbox_open_files: int = Field(
        default=256, ge=32, description="Open-file limit of a sandboxed script (RLIMIT_NOFILE)."
    )
    sandbox_max_tasks: int = Field(
        default=64, ge=8,
        description="Processes+threads the sandbox's unprivileged uid may hold (RLIMIT_NPROC).",
    )
    sandbox_scratch_mib: int = Field(
        default=512, ge=0,
        description="Size cap of a run's writable /scratch (MiB; a tmpfs the host mounts per "
        "run, needs root); 0 = a plain folder on disk with only the per-file limit.",
    )
    sandbox_tmp_mib: int = Field(
        default=64, ge=1, description="Size of the sandbox's private /tmp (MiB, in memory)."
    )
    sandbox_uid_base: int = Field(
        default=200_000, ge=1000,
        description="First host uid of the range a sandbox run picks its unprivileged uid from.",
    )
    sandbox_uid_count: int = Field(
        default=60_000, ge=1, description="Size of the sandbox uid range."
    )
    sandbox_session_timeout_s: float = Field(
        default=900.0, gt=0,
        description="Wall-clock limit of a persistent sandbox session, start to close (s).",
    )
    sandbox_session_cpu_s: int = Field(
        default=300, ge=1,
        description="CPU-time limit of a persistent sandbox session, all cells (s, RLIMIT_CPU).",
    )
    sandbox_cell_timeout_s: float = Field(
        default=120.0, gt=0,
        description="Wall-clock limit of one cell of a sandbox session (s); a cell past it "
        "ends the session.",
    )
    sandbox_cell_cpu_s: int = Field(
        default=60, ge=1,
        description="CPU-time limit of one cell of a sandbox session (s); a cell past it ends "
        "the session.",
    )
    sandbox_stdout_tail_chars: int = Field(
        default=4000, ge=200, description="How much of the end of stdout an outcome keeps."
    )
    sandbox_stderr_chars: int = Field(
        default=4000, ge=200, description="How much of stderr an outcome keeps."
    )
