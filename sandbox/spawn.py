"""Start the isolated bootstrap with a channel: for a session and for a run started ahead.

:class:`sandbox.session.BubblewrapSession` and :class:`sandbox.ahead.StartedRun` start their
process here, isolated exactly as :meth:`sandbox.bubblewrap.BubblewrapSandbox.run` isolates a
script (:mod:`sandbox.isolation`: the same bwrap options and prlimit limits, the run's own
uid); the host talks to the bootstrap over a socket pair passed as its stdin.
"""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Sequence
from pathlib import Path

from geoask.errors import SandboxError
from sandbox.host import private_file
from sandbox.isolation import bwrap_options, prlimit_options, sandbox_environment
from sandbox.models import SandboxLimits


def spawn_with_channel(
    runtime_dir: Path, run_dir: Path, uid: int, limits: SandboxLimits, tools: tuple[str, str],
    bootstrap_args: Sequence[str],
) -> tuple[subprocess.Popen[bytes], socket.socket]:
    """Start ``bootstrap.py *bootstrap_args`` isolated, a socket pair as its stdin.

    The isolation of :meth:`sandbox.bubblewrap.BubblewrapSandbox.run` (the same bwrap options,
    prlimit limits and uid); ``tools`` are the paths of bwrap and prlimit. Returns the process
    and the host's end of the channel. Call it from a thread that outlives the process: bwrap's
    ``--die-with-parent`` follows the thread that started it.

    Raises:
        SandboxError: bubblewrap could not be started.

    """
    bwrap, prlimit = tools
    options = bwrap_options(runtime_dir=runtime_dir, run_dir=run_dir, limits=limits,
                            environment=sandbox_environment())
    args_fd = os.memfd_create("bwrap-args")
    os.write(args_fd, b"".join(option.encode() + b"\0" for option in options))
    os.lseek(args_fd, 0, os.SEEK_SET)
    command = [
        prlimit, *prlimit_options(limits), "--", bwrap, "--args", str(args_fd),
        "/runtime/bin/python", "-I", "/job/bootstrap.py", *bootstrap_args,
    ]
    host_end, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        with private_file(run_dir / "stdout") as stdout, \
                private_file(run_dir / "stderr") as stderr:
            process = subprocess.Popen(
                command, stdin=child_end.fileno(), stdout=stdout, stderr=stderr,
                pass_fds=(args_fd,), env={"PATH": "/usr/bin:/bin"}, cwd="/",
                user=uid, group=uid, extra_groups=[], start_new_session=True,
            )
    except OSError as error:
        host_end.close()
        raise SandboxError(f"could not start bubblewrap: {error}") from error
    finally:
        os.close(args_fd)
        child_end.close()
    return process, host_end
