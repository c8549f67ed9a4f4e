"""Prefect artifacts posted from a background thread, so a question never waits on the UI.

A question publishes about fifteen Prefect artifacts (SQL, previews, scripts, intent, plan,
trace, run summary, links). Each is one HTTP request the Prefect server answers in ~20 ms on
this machine - about half the wall time of a warm SQL-only question when they were posted
inline. :func:`submit` captures everything that depends on the caller's context (the flow and
task run ids and the API URL, read where the artifact is made) and queues the request; one
daemon thread posts the queue in order over a single client per API URL.

:func:`flush` waits, bounded, until what was queued is posted; ``geoask.service.local.
prefect_api`` calls it when its block ends and an ``atexit`` hook does at interpreter exit, so
a CLI command or a served flow run does not end before its artifacts are on the server.
Artifacts are a view for the UI: the files under the run folder are the record, so a failed
post is logged as a warning and never fails a question.
"""

from __future__ import annotations

import atexit
import contextvars
import logging
import queue
import threading
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prefect.client.schemas.actions import ArtifactCreate

logger = logging.getLogger(__name__)

EXIT_FLUSH_S = 5.0
"""How long interpreter exit waits for queued artifacts (s)."""


class ArtifactPublisher:
    """A FIFO of artifact requests and the one daemon thread that posts them.

    Thread-safe: any thread may :meth:`submit`; :meth:`flush` may be called from several.
    """

    def __init__(self) -> None:
        self._queue: queue.Queue[tuple[contextvars.Context, str, ArtifactCreate]] = (
            queue.Queue())
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._pending = 0
        self._thread: threading.Thread | None = None
        self.failed = 0
        """Requests whose post raised (logged; counted for tests and diagnostics)."""

    def submit(self, api_url: str, request: ArtifactCreate) -> None:
        """Queue ``request`` for the Prefect API at ``api_url``; returns at once.

        It is posted in a copy of the caller's context: Prefect reads its settings (the API
        URL of the event it emits too) from the context, and a new thread's is empty.
        """
        with self._lock:
            self._pending += 1
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._post_forever,
                                                name="geoask-artifacts", daemon=True)
                self._thread.start()
        self._queue.put((contextvars.copy_context(), api_url, request))

    def flush(self, timeout_s: float) -> int:
        """Wait up to ``timeout_s`` for every queued request to be posted; the number left."""
        deadline = time.monotonic() + timeout_s
        with self._idle:
            while self._pending and (left := deadline - time.monotonic()) > 0:
                self._idle.wait(left)
            return self._pending

    def _post_forever(self) -> None:
        clients: dict[str, Any] = {}
        while True:
            context, api_url, request = self._queue.get()
            try:
                context.run(_post, clients, api_url, request)
            except Exception as error:  # any client failure is only logged
                self.failed += 1
                logger.warning("could not create Prefect artifact %s: %s", request.key, error)
                client = clients.pop(api_url, None)
                if client is not None:
                    _close(client)
            finally:
                with self._idle:
                    self._pending -= 1
                    self._idle.notify_all()


def _post(clients: dict[str, Any], api_url: str, request: ArtifactCreate) -> None:
    """Create ``request`` with the open client of ``api_url`` (opened at its first use)."""
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_AUTH_STRING, PREFECT_API_URL, temporary_settings

    client = clients.get(api_url)
    if client is None:  # a client of its own: the caller's context may hold its run's client
        auth = PREFECT_API_AUTH_STRING.value()  # the caller's: its API's basic-auth secret

        def open_client() -> Any:
            with temporary_settings(updates={PREFECT_API_URL: api_url,
                                             PREFECT_API_AUTH_STRING: auth}):
                return get_client(sync_client=True).__enter__()

        client = clients[api_url] = contextvars.Context().run(open_client)
    client.create_artifact(artifact=request)


def _close(client: Any) -> None:
    try:
        client.__exit__(None, None, None)
    except Exception:  # a broken connection may fail to close; nothing else to do
        logger.debug("closing a Prefect client failed", exc_info=True)


PUBLISHER = ArtifactPublisher()
"""The process's publisher (one thread, started at the first artifact)."""


def submit(artifact: Any) -> None:
    """Queue a ``prefect.artifacts`` artifact (Markdown/Table/LinkArtifact) for the current run.

    The flow and task run ids and the API URL are read here, in the caller's context.
    Without a ``PREFECT_API_URL`` (Prefect's ephemeral in-process API) it is created inline.

    Raises:
        Exception: only from that inline creation (the caller logs it).

    """
    from prefect.client.schemas.actions import ArtifactCreate
    from prefect.settings import PREFECT_API_URL
    from prefect.utilities.context import get_task_and_flow_run_ids

    api_url = PREFECT_API_URL.value()
    if not api_url:
        artifact.create()
        return
    task_run_id, flow_run_id = get_task_and_flow_run_ids()
    PUBLISHER.submit(api_url, ArtifactCreate(
        type=artifact.type, key=artifact.key, description=artifact.description,
        data=artifact.format(_sync=True), flow_run_id=flow_run_id, task_run_id=task_run_id))


def flush(timeout_s: float) -> int:
    """Wait up to ``timeout_s`` (s) for queued artifacts to be posted; the number not posted.

    A positive result is logged as a warning (the run's files keep everything).
    """
    left = PUBLISHER.flush(timeout_s)
    if left:
        logger.warning("%d Prefect artifact(s) were not published within %.0f s (the run "
                       "folders keep their content)", left, timeout_s)
    return left


atexit.register(flush, EXIT_FLUSH_S)
