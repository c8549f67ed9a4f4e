"""Runs inside the sandbox before the generated script: seccomp filter, then the script.

Bubblewrap mounts this file read-only at ``/job/bootstrap.py`` and the sandbox runtime runs
``/runtime/bin/python -I /job/bootstrap.py``. Standard library only; geoask itself imports it
only for :func:`error_report` (the fake session classifies errors like the real one).

Order matters: (0) write ``/meta/started`` so the host can tell a failed bwrap setup from a
failed script; (1) copy matplotlib's prebuilt font cache into the private MPLCONFIGDIR;
(2) set ``no_new_privs`` and install the seccomp filter the host wrote to ``/job/seccomp.bpf``
(:mod:`sandbox.seccomp`), which refuses every way of starting a process (fork, vfork, clone
without CLONE_THREAD, clone3, execve, execveat) and a few kernel interfaces an analysis never
needs (ptrace, namespaces, mounts, bpf, io_uring, ...) with EPERM;
(3) compile ``/job/script.py`` and run it as ``__main__``; (4) on an uncaught exception, print a
traceback of the script's own frames to stderr and write a structured report to
``/meta/error.json`` for the host to classify; (5) end without the interpreter's finalization
(:func:`_leave`). The filter is installed while only the main thread exists, so every later
thread inherits it.

With ``--session`` (a persistent session, :mod:`sandbox.session`), step (3) is
:func:`run_session` instead: a cell loop over the socket the host passed as stdin. With
``--ahead MODULE...`` (a sandbox started before its script exists, :mod:`sandbox.ahead`), the
modules are imported and the host's go awaited on that socket before step (3).
"""

from __future__ import annotations

import _io
import atexit
import contextlib
import ctypes
import errno
import faulthandler
import gc
import importlib
import io
import json
import os
import resource
import shutil
import signal
import struct
import sys
import threading
import traceback
from typing import NoReturn

SCRIPT_PATH = "/job/script.py"
SECCOMP_PATH = "/job/seccomp.bpf"
CELL_PATH = "/job/cell.py"
#: Largest request frame the cell loop accepts (bytes of JSON).
MAX_REQUEST_BYTES = 64 * 1024 * 1024
ERROR_REPORT_PATH = "/meta/error.json"
STARTED_MARKER_PATH = "/meta/started"
REPORT_RESERVE_PATH = "/meta/reserve"
USAGE_REPORT_PATH = "/meta/usage.json"
REPORT_RESERVE_BYTES = 256 * 1024
MPL_CACHE_SOURCE = "/runtime/mplconfig"
#: The file objects :func:`_leave` flushes (concrete classes: an ABC check is slow).
_FILE_TYPES = (io.TextIOWrapper, io.BufferedWriter, io.BufferedRandom, io.BufferedRWPair,
               io.FileIO)

_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2


class _SockFprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_void_p))


def install_seccomp_filter(path: str = SECCOMP_PATH) -> None:
    """Set no_new_privs and load the BPF program at ``path`` for this process (irrevocable).

    The host wrote it (:func:`sandbox.seccomp.seccomp_program` for its machine); without it
    nothing runs.

    Raises:
        OSError: the program is missing or malformed, or the kernel refused it.

    """
    with open(path, "rb") as handle:
        program = handle.read()
    if not program or len(program) % 8:
        raise OSError(errno.EINVAL, f"no seccomp program at {path}")
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p).value)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong,
                           ctypes.c_ulong]
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, None, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")


def _prepare_matplotlib() -> None:
    target = os.environ.get("MPLCONFIGDIR")
    if not target or not os.path.isdir(MPL_CACHE_SOURCE):
        return
    os.makedirs(target, exist_ok=True)
    for name in os.listdir(MPL_CACHE_SOURCE):
        if name.endswith(".json"):
            shutil.copyfile(os.path.join(MPL_CACHE_SOURCE, name), os.path.join(target, name))


def error_report(error: BaseException, path: str = SCRIPT_PATH) -> dict[str, object]:
    """Describe ``error`` for the host's classifier, keeping only frames of the code at ``path``.

    Keys: ``exception_type``, ``exception_module``, ``exception_mro``, ``message``, ``frames``
    (``{line, function, code}``, at most 10) and, by type, ``key``, ``module``, ``errno`` - the
    input of :func:`sandbox.diagnosis.classify_report`.
    """
    frames = [
        {"line": frame.lineno, "function": frame.name, "code": (frame.line or "")[:200]}
        for frame in traceback.extract_tb(error.__traceback__)
        if frame.filename == path
    ]
    if isinstance(error, SyntaxError) and error.filename == path:
        frames.append({"line": error.lineno, "function": "<module>",
                       "code": (error.text or "").strip()[:200]})
    report: dict[str, object] = {
        "exception_type": type(error).__name__,
        "exception_module": type(error).__module__,
        "exception_mro": [cls.__name__ for cls in type(error).__mro__],
        "message": str(error)[:2000],
        "frames": frames[-10:],
    }
    if isinstance(error, KeyError) and error.args:
        report["key"] = repr(error.args[0])[:200]
    if isinstance(error, ModuleNotFoundError):
        report["module"] = error.name
    if isinstance(error, OSError) and error.errno is not None:
        report["errno"] = errno.errorcode.get(error.errno, str(error.errno))
    return report


def _print_user_traceback(error: BaseException, path: str = SCRIPT_PATH) -> None:
    lines = ["Traceback (most recent call last, frames in your script):\n"]
    for frame in traceback.extract_tb(error.__traceback__):
        if frame.filename == path:
            lines.append(f'  File "{os.path.basename(path)}", line {frame.lineno}, in '
                         f'{frame.name}\n')
            if frame.line:
                lines.append(f"    {frame.line}\n")
    lines.extend(traceback.format_exception_only(type(error), error))
    sys.stderr.write("".join(lines))


def main() -> int:
    """Prepare the process, run the script (or the session's cells); the exit status.

    A script's run ends in :func:`_leave` (the interpreter's finalization skipped).
    """
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    preload = sys.argv[2:]
    sys.dont_write_bytecode = True
    with open(STARTED_MARKER_PATH, "w", encoding="utf-8") as marker:
        marker.write("started\n")  # tells the host that bwrap's setup succeeded
    # /meta shares the capped tmpfs with /scratch: reserve room for the error report now, so a
    # script that fills /scratch still gets its failure reported.
    with open(REPORT_RESERVE_PATH, "wb") as reserve:
        os.posix_fallocate(reserve.fileno(), 0, REPORT_RESERVE_BYTES)
    faulthandler.enable()
    _prepare_matplotlib()
    install_seccomp_filter()
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    sys.argv = ["script.py"]
    sys.path.insert(0, "/scratch")
    if mode == "--session":
        return run_session()
    if mode == "--ahead" and not await_script(preload):
        return 0
    namespace = {"__name__": "__main__", "__file__": SCRIPT_PATH, "__builtins__": __builtins__}
    _leave(run_script(namespace), namespace)


def await_script(preload: list[str]) -> bool:
    """A sandbox started ahead: import ``preload``, then wait for the host's go.

    The channel is the socket the host passed as stdin (fd 0 becomes ``/dev/null``), framed as
    a session's. True when the host sent ``{"run": true}`` (its script and inputs are in
    place), False when it closed the channel instead (nothing to run).
    """
    channel = _open_channel()
    for name in preload:  # a library that fails here fails again, reported, in the script
        with contextlib.suppress(Exception):
            importlib.import_module(name)
    # The preloaded libraries' objects (~70,000) live as long as the process: never scanned
    # again by a collection during the script, nor by _leave's search for open files.
    gc.freeze()
    request = _receive(channel)
    os.close(channel)
    return request is not None and request.get("run") is True


def run_script(namespace: dict[str, object]) -> int:
    """Run ``/job/script.py`` in ``namespace``; its exit status (1 on an uncaught error)."""
    try:
        with open(SCRIPT_PATH, encoding="utf-8") as handle:
            code = compile(handle.read(), SCRIPT_PATH, "exec")
        exec(code, namespace)  # noqa: S102 - this is the sandboxed process; isolation is outside
    except SystemExit as stop:
        if stop.code is None or isinstance(stop.code, int):
            return int(stop.code or 0)
        with contextlib.suppress(OSError, ValueError):
            print(stop.code, file=sys.stderr)
        return 1
    except BaseException as error:  # every failure is reported to the host
        _print_user_traceback(error)
        with contextlib.suppress(OSError):
            os.unlink(REPORT_RESERVE_PATH)
        try:
            with open(ERROR_REPORT_PATH, "w", encoding="utf-8") as handle:
                json.dump(error_report(error), handle)
        except OSError:
            pass
        return 1
    return 0


def _leave(status: int, namespace: dict[str, object]) -> NoReturn:
    """End the script's process with ``status``, skipping the interpreter's finalization.

    Finalizing pandas, pyarrow and GDAL takes a third of a second; what a script's end must
    still do is done first: non-daemon threads joined, ``atexit`` functions run, the script's
    globals released (``__del__`` runs, e.g. an unclosed writer's; objects only a reference
    cycle holds are not collected), every open file object flushed and every writer over a
    file the script left open (gzip, bz2, lzma) closed, then the peak memory is reported.
    """
    for thread in threading.enumerate():
        if thread is not threading.main_thread() and not thread.daemon:
            thread.join()
    with contextlib.suppress(Exception):
        atexit._run_exitfuncs()
    namespace.clear()
    # the standard streams (the originals too: a script may have replaced them), then the
    # files the script opened (gc.get_objects() leaves out what await_script froze: the
    # streams, opened before, are flushed by name)
    opened = [sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__, *gc.get_objects()]
    _flush(opened)
    # a writer over a file (gzip, bz2, lzma) writes its trailer only when closed, as the
    # finalization skipped here would close one the script left open (in a reference cycle,
    # or at module level of an imported helper): close those, then flush what they wrote
    for item in opened:
        with contextlib.suppress(Exception):
            if isinstance(item, _io._IOBase) and not isinstance(item, _FILE_TYPES) \
                    and not item.closed:
                item.close()
    _flush(opened)
    _report_usage()
    os._exit(status)


def _flush(items: list[object]) -> None:
    """Flush every open file object among ``items`` (errors ignored: the script's end)."""
    for item in items:
        with contextlib.suppress(Exception):
            if isinstance(item, _FILE_TYPES) and not item.closed:
                item.flush()


def _report_usage() -> None:
    """Write this process's peak resident set (KiB) to ``/meta/usage.json`` for the host.

    The host's wait4 cannot see it: a process started from the host inherits the host's
    high-water mark.
    """
    usage = {"maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
             "children_maxrss_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}
    with contextlib.suppress(OSError), open(USAGE_REPORT_PATH, "w", encoding="utf-8") as handle:
        json.dump(usage, handle)


def run_session() -> int:
    """Run cells sent by the host until it closes the channel; return 0.

    The channel is the socket the host passed as stdin (moved off fd 0, which becomes
    ``/dev/null``). Frames are a 4-byte big-endian length and UTF-8 JSON. The loop first
    sends ``{"ready": true, ...usage}``; each request ``{"seq": n, "code": str, "cpu_s": s}``
    gets ``{"seq": n, "error": report | null, ...usage}`` after the cell ran in the one
    namespace all cells share. Before a cell, fds 1 and 2 (the host's stdout/stderr files)
    are emptied, so they hold that cell's output only, and RLIMIT_CPU's soft limit is set to
    ``cpu_s`` past the CPU used so far (SIGXCPU ends the process; the host watches too).
    """
    channel = _open_channel()
    namespace: dict[str, object] = {"__name__": "__main__", "__builtins__": __builtins__}
    _send(channel, {"ready": True, **_usage()})
    while True:
        request = _receive(channel)
        if request is None:
            return 0
        _empty_output()
        _limit_cell_cpu(float(request["cpu_s"]))  # type: ignore[arg-type]
        started = _usage()["cpu_s"]
        report = _run_cell(str(request["code"]), namespace)
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        usage = _usage()
        _send(channel, {"seq": request["seq"], "error": report, **usage,
                        "cell_cpu_s": usage["cpu_s"] - started})


def _run_cell(source: str, namespace: dict[str, object]) -> dict[str, object] | None:
    """Run one cell; return the error report of an uncaught exception, else None."""
    try:
        exec(compile(source, CELL_PATH, "exec"), namespace)  # noqa: S102 - isolated outside
    except SystemExit as stop:
        if stop.code in (None, 0):
            return None
        return error_report(stop, CELL_PATH)
    except BaseException as error:  # every failure is reported to the host
        with contextlib.suppress(OSError, ValueError):
            _print_user_traceback(error, CELL_PATH)
        return error_report(error, CELL_PATH)
    return None


def _open_channel() -> int:
    """The socket the host passed as stdin, moved off fd 0 (which becomes ``/dev/null``)."""
    channel = os.dup(0)
    null = os.open("/dev/null", os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    return channel


def _empty_output() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    for fd in (1, 2):
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)


def _limit_cell_cpu(cpu_s: float) -> None:
    signal.signal(signal.SIGXCPU, signal.SIG_DFL)
    _soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = int(_usage()["cpu_s"] + cpu_s + 0.999)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _usage() -> dict[str, float]:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return {"cpu_s": usage.ru_utime + usage.ru_stime, "maxrss_kib": float(usage.ru_maxrss)}


def _send(channel: int, message: dict[str, object]) -> None:
    payload = json.dumps(message, default=str).encode("utf-8", "backslashreplace")
    data = struct.pack(">I", len(payload)) + payload
    while data:
        data = data[os.write(channel, data):]


def _receive(channel: int) -> dict[str, object] | None:
    header = _read_exact(channel, 4)
    if header is None:
        return None
    (size,) = struct.unpack(">I", header)
    if size > MAX_REQUEST_BYTES:
        return None
    payload = _read_exact(channel, size)
    return None if payload is None else json.loads(payload)


def _read_exact(channel: int, size: int) -> bytes | None:
    chunks = bytearray()
    while len(chunks) < size:
        chunk = os.read(channel, size - len(chunks))
        if not chunk:
            return None
        chunks += chunk
    return bytes(chunks)


if __name__ == "__main__":
    sys.exit(main())
