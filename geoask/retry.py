"""Which failures Prefect may retry: transient I/O only, never a semantic error.

Use ``@task(**TRANSIENT_RETRIES)``: up to three retries after 2, 5 and 15 s, and only when the
task raised a dropped/refused database connection (``psycopg.OperationalError`` other than a
statement timeout) or a transient model-service error (429, 5xx, timeouts, dropped
connections). Everything else fails at once and goes back to the caller or the state manager.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import psycopg

if TYPE_CHECKING:
    from prefect import Task
    from prefect.client.schemas.objects import TaskRun
    from prefect.states import State


def is_transient(error: BaseException) -> bool:
    """True for errors worth retrying unchanged.

    Lost or refused database connections, and model-service failures: HTTP 408/409/429/5xx,
    timeouts and dropped connections (``geoask.llm.is_transient_model_error``, which also
    reads the ``transient`` flag of a ``ModelCallError``).
    """
    if isinstance(error, psycopg.errors.QueryCanceled):  # statement timeout: not transient
        return False
    if isinstance(error, psycopg.OperationalError):
        return True
    return _is_transient_model_error(error)


def _is_transient_model_error(error: BaseException) -> bool:
    try:
        from geoask.llm import is_transient_model_error
    except ImportError:  # the model layer is optional for database-only commands
        return False
    return is_transient_model_error(error)


def retry_on_transient(task: Task[..., Any], task_run: TaskRun, state: State) -> bool:
    """Prefect ``retry_condition_fn``: retry only when the failure is transient."""
    error = state.result(raise_on_failure=False)
    return isinstance(error, BaseException) and is_transient(error)


TRANSIENT_RETRIES: dict[str, Any] = {
    "retries": 3,
    "retry_delay_seconds": [2, 5, 15],
    "retry_condition_fn": retry_on_transient,
}
