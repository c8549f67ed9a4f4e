"""Which failures are retried, and which are infrastructure rather than the run's own.

Use ``@task(**TRANSIENT_RETRIES)``: up to three retries after 2, 5 and 15 s, and only when the
task raised a dropped/refused database connection (``psycopg.OperationalError`` other than a
statement timeout). Model-service failures (429, 5xx, timeouts, refused connections) are
retried once, inside the provider SDK (``GEOASK_MODEL_MAX_RETRIES``), never again by Prefect.
Everything else fails at once and goes back to the caller or the state manager.

:func:`is_infrastructure_failure` tells a failure of what a run stands on (database, model
endpoint, sandbox, Prefect API) from a failure of the run itself; the benchmark classifies
those as ``infrastructure`` and redoes them on resume.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import psycopg

from geoask.errors import (
    DatabaseError,
    IndexUnavailableError,
    ModelCallError,
    SandboxError,
    ServiceError,
)

if TYPE_CHECKING:
    from prefect import Task
    from prefect.client.schemas.objects import TaskRun
    from prefect.states import State


def is_transient(error: BaseException) -> bool:
    """True for errors Prefect retries unchanged: a lost or refused database connection.

    A statement timeout is not transient; model-service errors are not retried here (the
    provider SDK already retried them).
    """
    if isinstance(error, psycopg.errors.QueryCanceled):  # statement timeout: not transient
        return False
    return isinstance(error, psycopg.OperationalError)


def is_infrastructure_failure(error: BaseException) -> bool:
    """True when ``error`` is a failure of what a run stands on, not of the run itself.

    That is: the database unreachable or its connection lost (:class:`DatabaseError`, a
    ``psycopg.OperationalError`` other than a statement timeout); the model endpoint down
    (a transient :class:`ModelCallError` - refused connection, DNS failure, timeout, 429/5xx
    after retries - or pydantic-ai's own such exception); the sandbox unable to start
    (:class:`SandboxError`); the schema index's store not opening
    (:class:`IndexUnavailableError`); the Prefect API failing (:class:`ServiceError`, an HTTP error
    status from it, a dropped connection to it).

    >>> is_infrastructure_failure(DatabaseError("could not connect to the database"))
    True
    >>> is_infrastructure_failure(ValueError("a bug"))
    False
    """
    if isinstance(error, DatabaseError | SandboxError | ServiceError | IndexUnavailableError):
        return True
    if isinstance(error, ModelCallError):
        return error.transient
    if is_transient(error) or _is_transient_model_error(error):
        return True
    return is_orchestration_error(error)


def is_orchestration_error(error: BaseException) -> bool:
    """True for a failure of the Prefect API rather than of the question's pipeline.

    That is an HTTP error status from the API (an overloaded server's 503) or a dropped
    connection.
    """
    import httpx
    from prefect.exceptions import PrefectHTTPStatusError

    return isinstance(error, PrefectHTTPStatusError | httpx.TransportError)


def _is_transient_model_error(error: BaseException) -> bool:
    try:
        from geoask.models.llm import is_transient_model_error
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
