"""Run files written after the answer, in one background thread: a question never waits on them.

A run's views that nothing in the run reads - the GeoPackage of its layers
(:func:`geoask.maps.geopackage.write_geopackage`) - are written here after the flow has
returned its result, so the time to the printed answer does not grow with them. :func:`flush`
waits, bounded, until what was queued is written; ``geoask.service.local.prefect_api`` calls it
when its block ends (with the artifact flush) and an ``atexit`` hook does at interpreter exit, so
a CLI command does not end before its run's files are on disk. A failed write is logged as a
warning: the file is a view, the answer stands without it.
"""

from __future__ import annotations

import atexit
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait

logger = logging.getLogger(__name__)

EXIT_FLUSH_S = 30.0
"""How long interpreter exit waits for queued writes (s)."""

_executor = ThreadPoolExecutor(1, thread_name_prefix="geoask-run-files")
_pending: set[Future[None]] = set()
_lock = threading.Lock()


def submit(what: str, write: Callable[[], object]) -> None:
    """Queue ``write`` (named ``what`` in a warning when it fails)."""
    def run() -> None:
        try:
            write()
        except Exception as error:
            first = next((line for line in str(error).splitlines() if line.strip()), "")
            logger.warning("could not write %s: %s: %s", what, type(error).__name__, first)

    future = _executor.submit(run)
    with _lock:
        _pending.add(future)
    future.add_done_callback(_forget)


def flush(timeout_s: float) -> int:
    """Wait at most ``timeout_s`` for the queued writes; return how many are still pending."""
    with _lock:
        pending = set(_pending)
    _, not_done = wait(pending, timeout=timeout_s)
    return len(not_done)


def _forget(future: Future[None]) -> None:
    with _lock:
        _pending.discard(future)


atexit.register(flush, EXIT_FLUSH_S)
