"""Clean stops on SIGINT/SIGTERM for long commands (``geoask bench``, ``geoask ask``).

:func:`run_until_stopped` runs the command's work in a worker thread while the main thread
waits, so the signal handlers stay geoask's own (Prefect swaps SIGTERM only in the main thread)
and run at once however deep the work is blocked. On SIGINT or SIGTERM the handler

1. marks the stop (:func:`stop_requested`), so nothing finishing after it is recorded;
2. prints one line: what was stopped and what was kept (the caller's ``kept()``), and
   silences logging, so the work failing while its children end prints nothing after it;
3. runs the stop hooks (:func:`add_stop_hook`; e.g. flow runs in flight are marked Crashed
   on the Prefect server, :mod:`geoask.run.stops`), all together within
   :data:`HOOK_TIMEOUT_S`;
4. ends this process's child processes (sandboxes: SIGTERM, then SIGKILL after
   :data:`CHILD_GRACE_S`; psutil finds them), sparing a detached server (:func:`detach`);
5. exits with 128 + the signal number (130 for SIGINT, 143 for SIGTERM) without waiting for
   the questions in flight.

:func:`abort` stops the command the same way from any thread when what it runs on is gone (the
Prefect API or the database stopped answering, :mod:`geoask.service.watch`): one line
``stopped: <reason>; <kept>``, the same hooks and child processes, exit code
:data:`EXIT_INFRASTRUCTURE`.

Everything a command keeps is written atomically (temporary file, then rename), so a stop at
any moment leaves finished results and no half-written file; a question in flight is simply
not recorded and a rerun does it.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any, Final, TypeVar

T = TypeVar("T")

CHILD_GRACE_S: Final = 2.0
"""Seconds child processes get to end after SIGTERM before they are killed (SIGKILL)."""
STOP_SIGNALS: Final = (signal.SIGINT, signal.SIGTERM)
HOOK_TIMEOUT_S: Final = 4.0
"""Seconds all stop hooks together may take before the process exits anyway."""
ABORT_HOOK_TIMEOUT_S: Final = 2.0
"""The same for :func:`abort`: its hooks mostly talk to a server that has just gone away."""
EXIT_INFRASTRUCTURE: Final = 5
"""Exit code of a command ended by :func:`abort` (the Prefect API or the database went away),
and of a benchmark in which any question failed on infrastructure."""

StopHook = Callable[[str], None]
"""Told the signal's name (``"SIGTERM"``) when a stop was requested; must be quick."""

_stop = threading.Event()
_waiting = threading.Event()
"""Set while :func:`run_until_stopped` waits in the main thread (only then can it abort)."""
_aborts: list[str] = []
"""The reason :func:`abort` was given (at most one), for the waiting main thread."""
_abort_lock = threading.Lock()
_hooks: list[StopHook] = []
_detached: set[int] = set()


def add_stop_hook(hook: StopHook) -> None:
    """Run ``hook`` when SIGINT/SIGTERM stops this process (once, however often added)."""
    if hook not in _hooks:
        _hooks.append(hook)


def detach(pid: int) -> None:
    """Spare child process ``pid`` and its descendants when this process is stopped.

    For a server meant to outlive the command, such as the background Prefect server that
    ``geoask ask`` starts.
    """
    _detached.add(pid)


def stop_requested() -> bool:
    """True once SIGINT, SIGTERM or :func:`abort` stopped this process (nothing more is kept)."""
    return _stop.is_set()


def can_abort() -> bool:
    """True while a command waits in :func:`run_until_stopped`, so :func:`abort` would act."""
    return _waiting.is_set()


def abort(reason: str) -> bool:
    """Stop the command waiting in :func:`run_until_stopped` because of ``reason`` (one line).

    Callable from any thread; the main thread carries the stop out within 0.2 s: one line
    ``stopped: <reason>; <what was kept>``, the stop hooks (at most
    :data:`ABORT_HOOK_TIMEOUT_S`), child processes ended, exit :data:`EXIT_INFRASTRUCTURE`.
    Returns False, doing nothing, when no command waits there (a server's worker thread) or
    a stop is already under way.
    """
    with _abort_lock:
        if not _waiting.is_set() or _stop.is_set() or _aborts:
            return False
        _aborts.append(" ".join(reason.split()))
    return True


def run_until_stopped(work: Callable[[], T], kept: Callable[[], str]) -> T:
    """``work()``'s result, or on SIGINT/SIGTERM a clean stop (see the module docstring).

    Args:
        work: what the command does; runs in a worker thread, in a copy of the caller's
            context (``contextvars``), so a Prefect settings context the caller entered -
            ``geoask.service.local.prefect_api``'s server URL - holds inside ``work`` too.
        kept: called on a stop; a short sentence saying what was kept and how to go on
            (e.g. ``"7 of 20 questions finished and kept under out/runs; rerun to resume"``).

    Called outside the main thread (which alone receives signals) it just runs ``work()``.

    Raises:
        Exception: whatever ``work`` raised, re-raised in the calling (main) thread.

    """
    if threading.current_thread() is not threading.main_thread():
        return work()  # signals reach only the main thread: nothing to stop cleanly here
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = work()
        except BaseException as error:  # handed to the main thread as is
            outcome["error"] = error

    previous = {signum: signal.signal(signum, _handler(kept)) for signum in STOP_SIGNALS}
    # A new thread starts in an empty context: without the copy Prefect would fall back to its
    # import-time settings and start a temporary SQLite server instead of using geoask's.
    caller_context = contextvars.copy_context()
    worker = threading.Thread(target=caller_context.run, args=(target,), name="geoask-work",
                              daemon=True)
    try:
        _waiting.set()
        worker.start()
        while worker.is_alive():
            worker.join(0.2)
            if _aborts:
                _stop_process(kept, f"stopped: {_aborts[0]}", _aborts[0],
                              EXIT_INFRASTRUCTURE, ABORT_HOOK_TIMEOUT_S)
    finally:
        _waiting.clear()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def _handler(kept: Callable[[], str]) -> Callable[[int, Any], None]:
    def stop(signum: int, frame: Any) -> None:
        if _stop.is_set():
            return  # a second signal while stopping: the first one is already ending us
        name = signal.Signals(signum).name
        _stop_process(kept, f"stopped by {name}", name, 128 + signum, HOOK_TIMEOUT_S)

    return stop


def _stop_process(kept: Callable[[], str], headline: str, hook_name: str, exit_code: int,
                  hook_timeout_s: float) -> None:
    """The clean stop (see the module docstring): one line, hooks, children, ``os._exit``."""
    _stop.set()
    try:
        detail = kept()
    except Exception as error:  # the line must be printed whatever happens
        detail = f"(what was kept could not be told: {error})"
    # the work goes on failing while its children end: none of that reaches the terminal
    logging.disable(logging.CRITICAL)
    _write(f"{headline}: {detail}\n")
    _silence_stderr()
    run_stop_hooks(hook_name, hook_timeout_s)
    end_child_processes()
    _write("")
    os._exit(exit_code)


def _silence_stderr() -> None:
    """Send what other threads still print to stderr (tracebacks) to /dev/null from now on."""
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.flush()
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stderr.fileno())
        os.close(devnull)


def run_stop_hooks(signal_name: str, timeout_s: float = HOOK_TIMEOUT_S) -> None:
    """Run every stop hook in a daemon thread; give up waiting after ``timeout_s`` seconds.

    A hook that fails or hangs (an unreachable server) never delays the stop beyond that.
    """
    def run_all() -> None:
        for hook in list(_hooks):
            with contextlib.suppress(Exception):
                hook(signal_name)

    runner = threading.Thread(target=run_all, name="geoask-stop-hooks", daemon=True)
    runner.start()
    runner.join(timeout_s)


def end_child_processes(grace_s: float = CHILD_GRACE_S) -> None:
    """Ask every descendant process to end (SIGTERM), kill those left after ``grace_s`` s.

    Processes given to :func:`detach`, and their descendants, are left running.
    """
    import psutil

    spared: set[int] = set()
    for pid in _detached:
        with contextlib.suppress(psutil.Error):
            spared |= {pid, *(p.pid for p in psutil.Process(pid).children(recursive=True))}
    children = [child for child in psutil.Process().children(recursive=True)
                if child.pid not in spared]
    for child in children:
        try:
            child.terminate()
        except psutil.Error:
            continue
    _, alive = psutil.wait_procs(children, timeout=grace_s)
    for child in alive:
        try:
            child.kill()
        except psutil.Error:
            continue


def _write(text: str) -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    if text:
        show_cursor = "\x1b[?25h" if sys.stderr.isatty() else ""  # a progress bar hid it
        os.write(2, (show_cursor + text).encode("utf-8", "replace"))
