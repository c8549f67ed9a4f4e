"""The Python API: ``from geoask import ask``; the same run as ``geoask ask``.

>>> from geoask import ask                                         # doctest: +SKIP
>>> result = ask("How many airports are in Texas?", model="reference")  # doctest: +SKIP
>>> result.status, result.answer.data_payload                      # doctest: +SKIP
('answered', {'value': ..., 'unit': 'count'})
>>> result.gdf.explore(); result.to_geopackage("run.gpkg")        # doctest: +SKIP

In a notebook (ipykernel runs an event loop) ``ask`` runs the question in a worker thread of
its own, so it works there as in a script; ``await ask_async(...)`` is the same run for async
code. Interrupting the kernel (KeyboardInterrupt) or cancelling ``ask_async``'s task stops that
run as Ctrl-C stops a script's: a KeyboardInterrupt is raised in its thread too, and ``ask``
returns once the run has ended (at the next Python line it runs: a database query or a sandbox
in flight ends first), rather than after the whole question.

:func:`ask` builds the run's services through the composition root
(:func:`geoask.run.composition.open_services`, the one assembly the flow, the CLI and the
benchmark use too) and runs the ``answer-question`` flow in this process, or, with
``via_api=True``, as the served deployment. The result is the flow's ``QuestionResult``
(status, answer with ``answer_type``/``data_payload``, message, evidence, run id, artifact
folder, map files); in a notebook it shows as a table with the answer map inline
(:func:`geoask.base.result_view.result_html`), in a terminal as ``geoask ask`` prints it. Importing
this module is cheap: Prefect, geopandas and the agents are imported on the first call.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import ctypes
import functools
import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from geoask.app.result import AskResult
    from geoask.vocabulary.question_result import QuestionResult


async def ask_async(question: str, *, model: str | None = None, variant: str | None = None,
                    via_api: bool = False, verbose: bool = False,
                    conversation: str | None = None,
                    wait_for_artifacts: bool = True) -> AskResult:
    """:func:`ask` for async code: the same run, in a worker thread, awaited.

    Arguments, result and errors are :func:`ask`'s.
    """
    worker = _Worker(functools.partial(
        _ask, question, model=model, variant=variant, via_api=via_api, verbose=verbose,
        conversation=conversation, wait_for_artifacts=wait_for_artifacts))
    try:
        return await asyncio.wrap_future(worker.future)
    except asyncio.CancelledError:
        worker.interrupt()  # the thread ends by itself; the event loop is not held up
        raise


def ask(question: str, *, model: str | None = None, variant: str | None = None,
        via_api: bool = False, verbose: bool = False,
        conversation: str | None = None, wait_for_artifacts: bool = True) -> AskResult:
    """Answer ``question`` about the database through the whole pipeline.

    Args:
        question: the natural-language question.
        model: a model for every agent (``openai:gpt-4o``, ``openai-compatible:<name>``,
            ``reference`` for the offline replay of the benchmark's programs); None:
            ``GEOASK_MODEL`` and the per-role overrides.
        variant: FULL, POSTGIS, NO_STCA, NO_PLANNER, BASE, REACT or PLAN_EXECUTE; None:
            ``GEOASK_VARIANT``.
        via_api: run the ``answer-question`` deployment of the geoask Prefect server
            (``GEOASK_SERVER_API_URL``, else the recorded local one, started in the background
            when none runs) instead of in this process.
        verbose: also show Prefect's run log lines on the terminal.
        conversation: a conversation id (letters, digits, ``_.-``): the question is that
            conversation's next turn - the agents see its last turns and may reuse their
            artifacts, and the turn is recorded under ``<artifact root>/conversations/``.
            A new id starts a conversation. None: a standalone question.
        wait_for_artifacts: return only once the run's Prefect artifacts (posted in the
            background) are on the server; False returns at once (the warm worker of
            ``geoask server`` does, its process lives on to post them).

    Returns:
        The :class:`geoask.app.result.AskResult` (a ``QuestionResult``): ``status``
        answered/rejected/failed; ``answer`` (answer_type, data_payload, summary) when
        answered; ``run_id``, ``artifact_folder``, ``maps`` (URLs of ``map.png``/``map.html``)
        and ``geopackage``; the run's data as ``.gdf``, ``.df``, ``.sql``, ``.scripts``,
        ``.open_map()`` and ``.to_geopackage(path)``.

    Raises:
        ConfigurationError: the question is empty, not text or longer than
            ``question_max_chars``, the variant or conversation id is unusable, or no model
            is configured (the message says what to set).
        GeoaskError: the run could not start or ended for good (database unreachable, model
            endpoint down, ...; see ``flows.answer_question.answer_question``).

    """
    run = functools.partial(_ask, question, model=model, variant=variant, via_api=via_api,
                            verbose=verbose, conversation=conversation,
                            wait_for_artifacts=wait_for_artifacts)
    if not _loop_running():
        return run()
    # A running event loop (ipykernel, an async app): the agents' and Prefect's synchronous
    # calls would each try to drive it; the run gets a thread without a loop instead.
    worker = _Worker(run)
    try:
        return worker.future.result()
    except KeyboardInterrupt:  # the kernel's interrupt: stop the run as in a script
        worker.interrupt()
        worker.thread.join()
        raise


_RUNS_AT_ONCE = threading.BoundedSemaphore(min(32, (os.cpu_count() or 1) + 4))
"""Question runs at once in worker threads: as many as asyncio's default executor ran for
``ask_async`` (a gather of 20 questions runs 6 at a time on 2 cores, the rest wait)."""


class _Worker:
    """A question run in a thread of its own (with the caller's context) that can be stopped.

    ``future`` holds its result or error; :meth:`interrupt` raises KeyboardInterrupt in the
    thread, so the run unwinds as a script's does on Ctrl-C (a thread cannot be killed, and a
    pool's thread left running would go on asking the model and the database for a question
    nobody waits for).
    """

    def __init__(self, run: Callable[[], AskResult]) -> None:
        """Start ``run`` in a new thread."""
        self.future: concurrent.futures.Future[AskResult] = concurrent.futures.Future()
        self.future.set_running_or_notify_cancel()
        context = contextvars.copy_context()
        self.thread = threading.Thread(target=context.run, args=(self._target, run),
                                       name="geoask-ask")
        self.thread.start()

    def _target(self, run: Callable[[], AskResult]) -> None:
        try:
            with _RUNS_AT_ONCE:
                self.future.set_result(run())
        except BaseException as error:  # KeyboardInterrupt too: the caller re-raises its own
            self.future.set_exception(error)

    def interrupt(self) -> None:
        """Raise KeyboardInterrupt in the run's thread (at its next Python line)."""
        if self.thread.ident is not None and self.thread.is_alive():
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self.thread.ident),
                                                       ctypes.py_object(KeyboardInterrupt))


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _ask(question: str, *, model: str | None, variant: str | None, via_api: bool,
         verbose: bool, conversation: str | None, wait_for_artifacts: bool) -> AskResult:
    """:func:`ask` in a thread without a running event loop."""
    from geoask.app.result import AskResult
    from geoask.run.request import check_request
    from geoask.settings import get_settings

    settings = get_settings()
    request = check_request(question, settings, model=model, variant=variant,
                            conversation=conversation)
    from geoask.service.local import ensure_server, prefect_api

    if via_api:
        from geoask.service.client import ask_via_api

        ensure_server(settings, deployment="answer-question")
        result: QuestionResult = ask_via_api(question, variant=variant, model=model,
                                             conversation=conversation)
        return AskResult.of(result)
    from flows.answer_question import answer_question
    from geoask.run.composition import open_services
    from geoask.run.stops import creating_run

    services = open_services(settings, request.variant, model)  # before Prefect: errors come fast

    with (prefect_api(settings, verbose=verbose, wait_for_artifacts=wait_for_artifacts),
          creating_run()):  # a stop's sweep waits for the run to exist (its body ends this)
        return AskResult.of(answer_question(question, variant=variant, model=model,
                                            services=services, conversation=conversation))
