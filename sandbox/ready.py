"""Sandboxes started ahead before anyone asks: a process-wide supply for long-lived processes.

A sandbox started ahead (:mod:`sandbox.ahead`) needs about half a second to preload geopandas
and its stack; a Python step whose SQL is quicker still waits for it. In a process that asks
many questions (``geoask bench``, the server's question worker, the scale benchmark, a
notebook) :data:`READY` keeps ``GEOASK_SANDBOX_READY`` such runs started and waiting, so
:meth:`sandbox.bubblewrap.BubblewrapSandbox.start` hands a step one that is already warm.

What does not change: each run still serves one script and is never reused - a fresh process,
uid and folder per step, exactly as :mod:`sandbox.ahead` says; a taken run is replaced by a new
one, never given back. Runs are kept per key: what a started process depends on (the runtime,
work folder, uid range, bwrap, runtime hash, limits and preloaded modules), so a step is never
handed a run with other limits. The supply starts nothing for a key until the process asks for
it a second time: a one-shot ``geoask ask`` (one Python step) starts no spare it would not use.

Every run is started from one long-lived daemon thread owned by the supply, because bwrap's
``--die-with-parent`` follows the starting thread. A run found dead at take (or its folder gone),
or waiting longer than :data:`MAX_WAIT_S`, is closed and replaced, never handed out; the step then
starts its own as without the supply. Ready runs are closed (process, uid, mount, folder) at
:meth:`close`, at process exit and on SIGINT/SIGTERM (a stop hook of :mod:`geoask.base.interrupt`).
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Protocol

from geoask.base.interrupt import add_stop_hook
from sandbox.ahead import AheadHost, StartedRun
from sandbox.models import SandboxLimits

log = logging.getLogger(__name__)

MAX_WAIT_S: Final = 600.0
"""Seconds a ready run may wait for its script; an older one is replaced (bounded staleness:
a runtime rebuilt meanwhile, a machine suspended)."""
SWEEP_S: Final = 30.0
"""Seconds between the supply thread's checks for ready runs that died or waited too long."""


class ReadyHost(AheadHost, Protocol):
    """What the supply reads of a sandbox (``BubblewrapSandbox``) to key its runs."""

    uid_base: int
    uid_count: int
    bwrap: str
    runtime_hash: str | None


ReadyKey = tuple[Path, Path, int, int, str, "str | None", SandboxLimits, tuple[str, ...]]


def ready_key(host: ReadyHost, limits: SandboxLimits, preload: Sequence[str]) -> ReadyKey:
    """What a started run depends on: two requests with equal keys can share a supply."""
    return (host.runtime_dir, host.work_dir, host.uid_base, host.uid_count, host.bwrap,
            host.runtime_hash, limits, tuple(preload))


@dataclass
class _Shelf:
    """The ready runs of one key and how many are wanted."""

    host: ReadyHost
    limits: SandboxLimits
    preload: tuple[str, ...]
    requests: int = 0
    wanted: int = 0
    ready: list[tuple[StartedRun, float]] = field(default_factory=list)


class ReadySupply:
    """Keeps started runs ready per key (see the module docstring); thread-safe."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._shelves: dict[ReadyKey, _Shelf] = {}
        self._discarded: list[StartedRun] = []
        self._busy = False  # the thread is starting or closing a run outside the lock
        self._generation = 0  # bumped by close(): a run started before it is not shelved
        self._thread: threading.Thread | None = None

    def take(self, host: ReadyHost, limits: SandboxLimits, preload: Sequence[str],
             count: int) -> StartedRun:
        """A run for one script with ``limits``: a ready one, else one started now.

        ``count`` runs of this key are kept ready from the second request on (0: none, and
        nothing is started in the background: the run is started here as without a supply).

        Raises:
            SandboxError: as :class:`sandbox.ahead.StartedRun` (starting one here failed).

        """
        run = None
        if count > 0:
            key = ready_key(host, limits, preload)
            with self._cond:
                shelf = self._shelves.setdefault(key, _Shelf(host, limits, tuple(preload)))
                shelf.requests += 1
                while shelf.ready and run is None:
                    candidate, since = shelf.ready.pop(0)
                    if _usable(candidate, since):
                        run = candidate
                    else:
                        self._discarded.append(candidate)
                if shelf.requests > 1:
                    shelf.wanted = count
                self._ensure_thread()
                self._cond.notify_all()
        if run is None:
            return StartedRun(host, limits, preload)
        run.sandbox = host  # the taker reads the outcome (its excerpt sizes, artifacts URL)
        return run

    def ready_count(self) -> int:
        """How many runs are ready now, all keys together."""
        with self._cond:
            return sum(len(shelf.ready) for shelf in self._shelves.values())

    def close(self) -> None:
        """End every ready run and forget what was asked; runs handed out are not touched."""
        with self._cond:
            self._generation += 1
            while self._busy:  # what the thread starts or closes now is gone when it is done
                self._cond.wait()
            runs = [run for shelf in self._shelves.values() for run, _ in shelf.ready]
            runs += self._discarded
            self._shelves.clear()
            self._discarded = []
        for run in runs:
            with contextlib.suppress(Exception):
                run.close()

    def _ensure_thread(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            if self._thread is None:
                atexit.register(self.close)
                add_stop_hook(lambda _signal: self.close())
            self._thread = threading.Thread(target=self._supply, name="geoask-sandbox-ready",
                                            daemon=True)
            self._thread.start()

    def _supply(self) -> None:
        """The supply thread: close discarded runs, start missing ones; lives with the process."""
        while True:
            with self._cond:
                job = self._next_job()
                while job is None:
                    self._cond.wait(SWEEP_S)
                    self._sweep()
                    job = self._next_job()
                generation, self._busy = self._generation, True
            try:
                if isinstance(job, StartedRun):
                    job.close()
                else:
                    self._start_one(job, generation)
            except Exception as error:  # the thread must live on: log it, go on
                log.debug("the sandbox supply failed to start or close a run: %s", error)
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()

    def _start_one(self, shelf: _Shelf, generation: int) -> None:
        run: StartedRun | None = None
        try:
            run = StartedRun(shelf.host, shelf.limits, shelf.preload)
        except Exception as error:  # a step starting its own reports it; wanted none till asked
            log.debug("no sandbox started ahead of need: %s", error)
        with self._cond:
            if run is None:
                shelf.wanted = 0
            elif generation == self._generation:  # not closed meanwhile: shelve it
                shelf.ready.append((run, time.monotonic()))
                run = None
        if run is not None:
            run.close()

    def _next_job(self) -> StartedRun | _Shelf | None:
        if self._discarded:
            return self._discarded.pop()
        return next((shelf for shelf in self._shelves.values()
                     if len(shelf.ready) < shelf.wanted), None)

    def _sweep(self) -> None:
        """Move ready runs that died or waited too long to the discarded ones."""
        for shelf in self._shelves.values():
            ready, shelf.ready = shelf.ready, []
            for run, since in ready:
                if _usable(run, since):
                    shelf.ready.append((run, since))
                else:
                    self._discarded.append(run)


def _usable(run: StartedRun, since: float) -> bool:
    """True when ``run`` (ready since ``since``) is alive, has its folder, and is not too old."""
    return run.alive() and run.run_dir.is_dir() and time.monotonic() - since < MAX_WAIT_S


READY: Final = ReadySupply()
"""The process's supply, shared by every ``BubblewrapSandbox``."""
