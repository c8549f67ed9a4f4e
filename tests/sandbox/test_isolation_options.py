"""The bubblewrap and prlimit options carry every protection (no sandbox needed to check)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sandbox.isolation import bwrap_options, prlimit_options, sandbox_environment
from sandbox.models import SandboxLimits
from sandbox.seccomp import seccomp_program

LIMITS = SandboxLimits(memory_mib=2048, cpu_s=30, file_size_mib=16, open_files=64, max_tasks=32,
                       tmp_mib=8)


def options() -> list[str]:
    return bwrap_options(runtime_dir=Path("/rt"), run_dir=Path("/runs/x"), limits=LIMITS,
                         environment=sandbox_environment())


@pytest.mark.parametrize("flag", ["--unshare-all", "--unshare-user", "--disable-userns",
                                  "--die-with-parent", "--new-session", "--clearenv",
                                  "--as-pid-1"])
def test_isolation_flag_present(flag: str) -> None:
    assert flag in options()


def bind_pairs(kind: str) -> list[tuple[str, str]]:
    opts = options()
    return [(opts[i + 1], opts[i + 2]) for i, opt in enumerate(opts) if opt == kind]


def test_only_scratch_and_meta_are_writable_binds() -> None:
    assert bind_pairs("--bind") == [("/runs/x/rw/scratch", "/scratch"),
                                    ("/runs/x/rw/meta", "/meta")]
    assert ("/runs/x/input", "/input") in bind_pairs("--ro-bind")
    assert ("/rt", "/runtime") in bind_pairs("--ro-bind")
    mounted = {target for _, target in bind_pairs("--ro-bind") + bind_pairs("--bind")}
    assert not mounted & {"/etc", "/home", "/root", "/var", "/work", "/run", "/sys"}


def test_root_and_dev_are_remounted_read_only() -> None:
    opts = options()
    remounted = [opts[i + 1] for i, opt in enumerate(opts) if opt == "--remount-ro"]
    assert remounted == ["/", "/dev"]


def test_tmp_is_size_capped() -> None:
    opts = options()
    index = opts.index("--tmpfs")
    assert opts[index - 2:index] == ["--size", str(8 * 1024 * 1024)]


def test_environment_is_an_allow_list_without_caller_values(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    environment = sandbox_environment()
    assert "OPENAI_API_KEY" not in environment
    assert not any(value == os.environ.get("HOME") for value in environment.values())
    assert environment["MPLBACKEND"] == "Agg"
    opts = options()
    names = [opts[i + 1] for i, opt in enumerate(opts) if opt == "--setenv"]
    assert sorted(names) == sorted(environment)


def test_prlimit_options() -> None:
    assert prlimit_options(LIMITS) == [
        f"--as={2048 * 1024 * 1024}", "--cpu=30:31", f"--fsize={16 * 1024 * 1024}",
        "--nofile=64", "--nproc=32", "--core=0",
    ]


def test_seccomp_program_is_whole_instructions_and_mentions_execve() -> None:
    program = seccomp_program("x86_64")
    assert len(program) % 8 == 0 and 10 < len(program) // 8 < 4096
    assert (59).to_bytes(4, "little") in program  # execve
    with pytest.raises(RuntimeError):
        seccomp_program("riscv64")
