"""The seccomp filter every sandboxed process installs before its script runs.

The host builds the BPF program for its machine (:func:`seccomp_program`) and writes it into
the run's ``/job`` (read-only inside, root-owned), where the bootstrap loads it
(:func:`sandbox.bootstrap.install_seccomp_filter`) before any script or cell runs. It refuses
every way of starting a process (fork, vfork, clone without CLONE_THREAD, clone3, execve,
execveat) and a few kernel interfaces an analysis never needs (ptrace, namespaces, mounts, bpf,
io_uring, ...) with EPERM, and kills a process calling in another architecture's convention.
"""

from __future__ import annotations

import errno
import functools
import platform
import struct

FILE_NAME = "seccomp.bpf"
"""The program's file name in the run's ``/job``."""

_CLONE_THREAD = 0x00010000
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_RET_ALLOW = 0x7FFF0000
_RET_KILL_PROCESS = 0x80000000
_RET_ERRNO = 0x00050000
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06
_X32_SYSCALL_BIT = 0x40000000

# (audit arch, {name: number}) per machine; "clone" is checked for CLONE_THREAD.
_SYSCALLS = {
    "x86_64": (0xC000003E, {
        "clone": 56, "fork": 57, "vfork": 58, "execve": 59, "execveat": 322, "clone3": 435,
        "ptrace": 101, "unshare": 272, "setns": 308, "mount": 165, "umount2": 166,
        "pivot_root": 155, "chroot": 161, "bpf": 321, "perf_event_open": 298, "keyctl": 250,
        "add_key": 248, "request_key": 249, "userfaultfd": 323, "process_vm_readv": 310,
        "process_vm_writev": 311, "open_by_handle_at": 304, "io_uring_setup": 425,
        "io_uring_enter": 426, "io_uring_register": 427, "open_tree": 428, "move_mount": 429,
        "fsopen": 430, "fsmount": 432,
    }),
    "aarch64": (0xC00000B7, {
        "clone": 220, "execve": 221, "execveat": 281, "clone3": 435, "ptrace": 117,
        "unshare": 97, "setns": 268, "mount": 40, "umount2": 39, "pivot_root": 41,
        "chroot": 51, "bpf": 280, "perf_event_open": 241, "keyctl": 219, "add_key": 217,
        "request_key": 218, "userfaultfd": 282, "process_vm_readv": 270,
        "process_vm_writev": 271, "open_by_handle_at": 265, "io_uring_setup": 425,
        "io_uring_enter": 426, "io_uring_register": 427, "open_tree": 428, "move_mount": 429,
        "fsopen": 430, "fsmount": 432,
    }),
}


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def seccomp_program(machine: str) -> bytes:
    """Return the BPF program (packed ``sock_filter`` array) for ``machine`` (``uname -m``).

    Raises:
        RuntimeError: the machine has no syscall table here (the sandbox refuses to run).

    """
    if machine not in _SYSCALLS:
        raise RuntimeError(f"no seccomp syscall table for machine {machine!r}")
    arch, numbers = _SYSCALLS[machine]
    eperm = _RET_ERRNO | errno.EPERM
    program = [
        _insn(_LD_W_ABS, 0, 0, 4),  # seccomp_data.arch
        _insn(_JEQ_K, 1, 0, arch),
        _insn(_RET_K, 0, 0, _RET_KILL_PROCESS),
        _insn(_LD_W_ABS, 0, 0, 0),  # seccomp_data.nr
    ]
    if machine == "x86_64":
        program += [_insn(_JGE_K, 0, 1, _X32_SYSCALL_BIT), _insn(_RET_K, 0, 0, eperm)]
    for name, number in numbers.items():
        if name == "clone":
            # clone(flags, ...): threads (CLONE_THREAD) pass, new processes do not.
            program += [
                _insn(_JEQ_K, 0, 4, number),
                _insn(_LD_W_ABS, 0, 0, 16),  # low 32 bits of args[0] (little-endian)
                _insn(_JSET_K, 0, 1, _CLONE_THREAD),
                _insn(_RET_K, 0, 0, _RET_ALLOW),
                _insn(_RET_K, 0, 0, eperm),
            ]
        elif name == "clone3":
            # ENOSYS makes glibc fall back to clone(), where the flags can be inspected.
            program += [
                _insn(_JEQ_K, 0, 1, number),
                _insn(_RET_K, 0, 0, _RET_ERRNO | errno.ENOSYS),
            ]
        else:
            program += [_insn(_JEQ_K, 0, 1, number), _insn(_RET_K, 0, 0, eperm)]
    program.append(_insn(_RET_K, 0, 0, _RET_ALLOW))
    return b"".join(program)


@functools.cache
def machine_program() -> bytes:
    """The program for this machine (the sandbox runs on the host's kernel)."""
    return seccomp_program(platform.machine())
