"""Flow runs in flight are marked Crashed on the Prefect server when geoask is stopped.

``geoask ask`` and ``geoask bench`` end at once on SIGINT/SIGTERM (:mod:`geoask.base.interrupt`),
from a worker thread that Prefect's own signal handling never sees, so without this the
question and benchmark runs they had started stayed ``Running`` (or ``Pending``) in the
dashboard forever. :func:`geoask.service.local.prefect_api` enters :func:`crash_runs_on_stop`:
every flow run the block starts carries a tag naming this process (``geoask-process-<pid>-
<hex>``), and on a stop :func:`mark_stopped_runs` (a stop hook) sets each unfinished run with
that tag to ``Crashed`` ("stopped by SIGTERM: ...") within the stop hooks' time bound.
Runs of other processes on the same server are never touched.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import threading
import time
from collections.abc import Iterator

from geoask.base.interrupt import add_stop_hook

CREATION_WAIT_S = 3.0
"""How long a stop's sweep follows runs being created (:func:`creating_run`) (s): within the
stop hooks' bound (:data:`geoask.base.interrupt.HOOK_TIMEOUT_S`), above the ~2 s a question run's
creation took in a loaded benchmark."""

TAG_PREFIX = "geoask-process-"
"""Start of the tag :func:`crash_runs_on_stop` gives the runs of this process."""
_tagged: dict[str, tuple[str, str | None]] = {}
"""Process tag -> the API URL its runs were started against and that API's auth string."""
_lock = threading.Lock()
_created_one = threading.Condition(_lock)
_creating = 0
"""Threads inside :func:`creating_run` whose run's body has not started yet."""
_thread = threading.local()


@contextlib.contextmanager
def creating_run() -> Iterator[None]:
    """Count this thread as creating a flow run until the run's body starts or the block ends.

    Enter it before checking :func:`geoask.base.interrupt.stop_requested`: then a stop either
    finds the thread counted, and its sweep (:func:`mark_stopped_runs`) waits for the run to
    exist before the last search, or the check sees the stop and no run is created. Without
    it a run created just after the sweep stayed ``Pending`` on the server.
    """
    global _creating
    with _lock:
        _creating += 1
    _thread.creating = True
    try:
        yield
    finally:
        run_started()


def run_started() -> None:
    """Stop counting this thread: its run exists now (call first thing in a flow's body).

    :func:`without_process_tags` calls it; a flow that does not enter that block (the
    benchmark's own run) calls it itself. Outside :func:`creating_run` it does nothing.
    """
    global _creating
    if getattr(_thread, "creating", False):
        _thread.creating = False
        with _created_one:
            _creating -= 1
            _created_one.notify_all()


@contextlib.contextmanager
def crash_runs_on_stop(api_url: str) -> Iterator[str]:
    """Tag the flow runs started in the block; a stop marks the unfinished ones Crashed.

    Yields the tag. The API's basic-auth secret is read here (``PREFECT_API_AUTH_STRING`` of
    the block's settings): a stop hook runs outside them.
    """
    from prefect import tags
    from prefect.settings import PREFECT_API_AUTH_STRING

    tag = f"{TAG_PREFIX}{os.getpid()}-{secrets.token_hex(3)}"
    with _lock:
        _tagged[tag] = (api_url, PREFECT_API_AUTH_STRING.value())
    add_stop_hook(mark_stopped_runs)
    try:
        with tags(tag):
            yield tag
    finally:
        with _lock:
            _tagged.pop(tag, None)


@contextlib.contextmanager
def without_process_tags() -> Iterator[None]:
    """Runs created in the block do not carry :func:`crash_runs_on_stop`'s process tags.

    Prefect asks the server for tag concurrency slots at every task run that has a tag (one
    more request per task, ~20 % of a warm question's wall time); a flow enters this block
    around its tasks, so only its own run carries the tag, which is all the stop sweep needs.
    Outside :func:`crash_runs_on_stop` (or outside Prefect) it changes nothing. Entering it
    also ends this thread's :func:`creating_run`: the run's body has started.
    """
    from prefect.context import TagsContext

    run_started()

    current = TagsContext.get().current_tags
    process_tags = {tag for tag in current if tag.startswith(TAG_PREFIX)}
    if not process_tags:
        yield
        return
    with TagsContext(current_tags=current - process_tags):
        yield


def mark_stopped_runs(signal_name: str) -> None:
    """Set every unfinished flow run tagged by :func:`crash_runs_on_stop` to ``Crashed``.

    Scheduled, pending and running runs get the message ``stopped by <signal_name>: ...``;
    the search is repeated once no thread is inside :func:`creating_run` any more, so a run
    being created meanwhile is caught, or at :data:`CREATION_WAIT_S` after the sweep began
    (with 1.5 s of waiting, question runs whose creation took 2 s under load stayed
    ``Pending`` or ``Running``). A thread entering :func:`creating_run` after the stop sees it
    and makes no run. Each search is one request per API URL (all of its process tags at
    once) and the runs it finds are set together, so both fit in the stop hooks' time bound
    on a loaded server (one request at a time, ~0.15 s each under a benchmark's load, they
    could not: an attack pass found a question run left ``Running`` after 3 of 3 stops).
    Errors of the API are left to the caller (:func:`geoask.base.interrupt.run_stop_hooks` ignores
    them: a stop never waits on an unreachable server).
    """
    import asyncio

    with _lock:
        tagged = dict(_tagged)
    by_api: dict[tuple[str, str | None], list[str]] = {}
    for tag, api in tagged.items():
        by_api.setdefault(api, []).append(tag)
    message = f"stopped by {signal_name}: geoask was stopped before this run finished"

    async def search() -> None:
        await asyncio.gather(*(_crash_unfinished(api, tags, message)
                               for api, tags in by_api.items()))

    deadline = time.monotonic() + CREATION_WAIT_S
    asyncio.run(search())
    with _created_one:  # once for all tags: the runs being created now exist
        _created_one.wait_for(lambda: _creating == 0, max(0.0, deadline - time.monotonic()))
    asyncio.run(search())


async def _crash_unfinished(api: tuple[str, str | None], tags: list[str], message: str
                            ) -> None:
    """Set the unfinished runs carrying any of ``tags`` on ``api`` (URL, auth) to Crashed."""
    import asyncio

    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        FlowRunFilter,
        FlowRunFilterState,
        FlowRunFilterStateType,
        FlowRunFilterTags,
    )
    from prefect.client.schemas.objects import StateType
    from prefect.settings import PREFECT_API_AUTH_STRING, PREFECT_API_URL, temporary_settings
    from prefect.states import Crashed

    unfinished = FlowRunFilterState(type=FlowRunFilterStateType(
        any_=[StateType.SCHEDULED, StateType.PENDING, StateType.RUNNING]))
    runs_filter = FlowRunFilter(tags=FlowRunFilterTags(any_=tags), state=unfinished)
    api_url, auth = api
    with temporary_settings(updates={PREFECT_API_URL: api_url, PREFECT_API_AUTH_STRING: auth}):
        async with get_client() as client:
            runs = await client.read_flow_runs(flow_run_filter=runs_filter)
            await asyncio.gather(*(client.set_flow_run_state(run.id, Crashed(message=message),
                                                             force=True) for run in runs))
