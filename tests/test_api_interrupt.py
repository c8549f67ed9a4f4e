"""Interrupting ``ask`` in a notebook, or cancelling ``ask_async``, stops the run itself.

In a running event loop (ipykernel) ``ask`` runs the question in a thread of its own; the
kernel's interrupt used to surface only once that thread had answered the whole question, and a
cancelled ``ask_async`` left its run going on. The run here is a stand-in that works in small
steps for a few seconds and records whether it finished or was interrupted.
"""

from __future__ import annotations

import asyncio
import signal
import threading
import time

import pytest

import geoask
from geoask.app import api


@pytest.fixture
def slow_run(monkeypatch):
    """Replace the question run by one that records ``started``, then how it ended."""
    events: list[str] = []
    ended = threading.Event()

    def run(question, **_):
        events.append("started")
        try:
            time.sleep(0.05)  # the caller is waiting on the result by now
            if question == "interrupt":
                # the kernel's interrupt button: SIGINT, which wakes the waiting main thread
                signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
            for _ in range(300):  # ~3 s of work, Python line by Python line
                time.sleep(0.01)
            events.append("finished")
        except KeyboardInterrupt:
            events.append("interrupted")
            raise
        finally:
            ended.set()

    monkeypatch.setattr(api, "_ask", run)
    return events, ended


def test_an_interrupted_ask_in_a_running_loop_stops_its_run(slow_run):
    events, _ = slow_run

    async def cell():  # ipykernel runs a cell's code inside its running event loop
        geoask.ask("interrupt", model="reference")

    loop = asyncio.new_event_loop()
    try:
        with pytest.raises(KeyboardInterrupt):
            loop.run_until_complete(cell())
    finally:
        loop.close()
    assert events == ["started", "interrupted"]  # ask returned only once the run had ended


def test_a_cancelled_ask_async_stops_its_run(slow_run):
    events, ended = slow_run

    async def main():
        task = asyncio.create_task(geoask.ask_async("cancel", model="reference"))
        while not events:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert ended.wait(30)
    assert events == ["started", "interrupted"]


def test_concurrent_ask_async_runs_are_bounded_like_the_default_executor(monkeypatch):
    at_once, most = [], []
    lock = threading.Lock()

    def run(question, **_):
        with lock:
            at_once.append(question)
            most.append(len(at_once))
        time.sleep(0.05)
        with lock:
            at_once.remove(question)

    monkeypatch.setattr(api, "_ask", run)
    monkeypatch.setattr(api, "_RUNS_AT_ONCE", threading.BoundedSemaphore(2))

    async def main():
        await asyncio.gather(*(geoask.ask_async(f"q{i}") for i in range(6)))

    asyncio.run(main())
    assert len(most) == 6 and max(most) == 2
