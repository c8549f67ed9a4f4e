"""Trigger a deployment through the Prefect API and wait for its result (``--via-api``).

>>> qualified_deployment_name("answer-question/answer-question")
'answer-question/answer-question'
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, cast

import httpx

from geoask.errors import ServiceError
from geoask.settings import Settings, get_settings

if TYPE_CHECKING:
    from prefect.client.schemas.objects import FlowRun

FINAL_STATES = frozenset({"COMPLETED", "FAILED", "CRASHED", "CANCELLED"})


def qualified_deployment_name(name: str) -> str | None:
    """``flow/deployment`` when ``name`` is already qualified, else None (look it up)."""
    return name if "/" in name else None


@contextmanager
def api_settings(settings: Settings) -> Iterator[str]:
    """Point Prefect's client at the server (results readable); yield its API URL.

    The server is ``GEOASK_SERVER_API_URL``, else the running geoask server recorded in
    ``<home>/prefect/server.json``, else ``http://127.0.0.1:<GEOASK_SERVER_PORT>/api``.

    Raises:
        ServiceError: no healthy server answers at that URL.

    """
    from prefect.settings import (
        PREFECT_API_AUTH_STRING,
        PREFECT_API_URL,
        PREFECT_HOME,
        PREFECT_LOCAL_STORAGE_PATH,
        temporary_settings,
    )

    from geoask.service.local import api_auth_string, running_server
    from geoask.service.server import is_healthy

    recorded = None if settings.server_api_url else running_server(settings)
    url = recorded.api_url if recorded else settings.prefect_api_url
    if not is_healthy(url):
        raise ServiceError(f"no Prefect server answers at {url}; start one with `geoask server` "
                           "(or set GEOASK_SERVER_API_URL / GEOASK_SERVER_PORT to yours)")
    with temporary_settings(updates={
        PREFECT_API_URL: url,
        PREFECT_API_AUTH_STRING: api_auth_string(settings, url),
        PREFECT_HOME: settings.prefect_home,
        PREFECT_LOCAL_STORAGE_PATH: settings.prefect_home / "storage",
    }):
        yield url


def run_deployment_and_wait(name: str, parameters: dict[str, Any], timeout_s: float,
                            *, settings: Settings | None = None,
                            poll_interval_s: float = 0.5) -> Any:
    """Start a run of deployment ``name`` with ``parameters``, wait, return the flow's result.

    Args:
        name: ``flow-name/deployment-name``, or a deployment name alone (``answer-question``,
            ``nightly-benchmark``), looked up on the server.
        parameters: the flow run's parameters (JSON-serialisable).
        timeout_s: how long to wait for a final state (s); the run is cancelled after that.
        settings: geoask settings (API URL); default the process-wide settings.
        poll_interval_s: how often the run's state is read (s).

    Returns:
        The flow's return value (read from the server's result storage).

    Raises:
        ServiceError: no server, unknown deployment, the run failed/crashed/was cancelled
            (the message carries the run's state message and id), or it timed out.

    """
    from prefect.deployments import run_deployment

    settings = settings or get_settings()
    with api_settings(settings):
        target = qualified_deployment_name(name) or _lookup(name)
        try:
            flow_run = cast("FlowRun", run_deployment(
                name=target, parameters=parameters, timeout=timeout_s,
                poll_interval=poll_interval_s))
        except httpx.HTTPStatusError as error:  # a parameter refused, a secret missing...
            raise ServiceError(refusal_message(target, error.response)) from None
        state = flow_run.state
        state_type = state.type.value if state else "UNKNOWN"
        if state_type not in FINAL_STATES:
            _cancel(flow_run.id)
            raise ServiceError(f"flow run {flow_run.name} ({flow_run.id}) of {target} did not "
                               f"finish within {timeout_s:.0f} s and was cancelled; raise "
                               "GEOASK_API_RUN_TIMEOUT_S or check that `geoask server` (or a "
                               "worker) is serving the deployment")
        if state_type != "COMPLETED":
            raise ServiceError(f"flow run {flow_run.name} ({flow_run.id}) of {target} ended "
                               f"{state_type}: {state.message if state else ''}")
        assert state is not None
        try:
            return state.result()
        except Exception as error:  # storage missing, unreadable, or a type not importable here
            raise ServiceError(unreadable_result_message(flow_run.name, flow_run.id, error)
                               ) from None


def refusal_message(target: str, response: httpx.Response) -> str:
    """One line for a run of ``target`` that the API refused (its own reason, one line).

    >>> refusal_message("run-benchmark/nightly-benchmark", httpx.Response(409, json={
    ...     "detail": "Error creating flow run: Validation failed for field 'repeat'. Failure "
    ...               "reason: 500 is greater than the maximum of 20"}))[:91]
    'the Prefect API refused a run of run-benchmark/nightly-benchmark (HTTP 409): Error creating'
    """
    try:
        detail = str(response.json().get("detail") or response.text)
    except ValueError:
        detail = response.text
    if response.status_code in (401, 403):
        detail = ("not authenticated: set PREFECT_API_AUTH_STRING to the server's "
                  "PREFECT_SERVER_API_AUTH_STRING (geoask's own: api_auth_string in "
                  "<home>/prefect/server.json)")
    return (f"the Prefect API refused a run of {target} (HTTP {response.status_code}): "
            + " ".join(detail.split())[:500])


def unreadable_result_message(run_name: str, run_id: Any, error: BaseException) -> str:
    """What to tell the user when a completed run's result cannot be read here (one line).

    A result whose type cannot be imported (``ImportError``, ``AttributeError``) names code
    this process does not have: the served flow was loaded from a file path, or the server
    runs another version of it. Anything else (a missing or unreadable file) means the result
    storage is not shared with this machine.

    >>> unreadable_result_message("x", 1, ModuleNotFoundError("No module named 'm'"))[:61]
    "flow run x (1) completed but its result names code that can't"
    """
    cause = f"{type(error).__name__}: {error}"
    if isinstance(error, ImportError | AttributeError):
        return (f"flow run {run_name} ({run_id}) completed but its result names code that "
                f"can't be imported here ({cause}); the served flow must be importable by "
                "module name in this process too (geoask server serves "
                "flows.answer_question; a --answer-flow or deployment given as a file path "
                "is not), and client and server must run the same geoask checkout")
    return (f"flow run {run_name} ({run_id}) completed but its result could not be read "
            f"({cause}); results are persisted where the run executed "
            "(PREFECT_LOCAL_STORAGE_PATH, default <home>/prefect/storage), so run the client on "
            "that machine with the same GEOASK_SERVER_HOME, or give the server and its workers "
            "a shared result storage (PREFECT_DEFAULT_RESULT_STORAGE_BLOCK)")


def _lookup(name: str) -> str:
    from prefect import get_client
    from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterName

    with get_client(sync_client=True) as client:
        found = client.read_deployments(
            deployment_filter=DeploymentFilter(name=DeploymentFilterName(any_=[name])))
        if not found:
            raise ServiceError(f"the server has no deployment named {name!r}; start "
                               "`geoask server` (it serves answer-question and "
                               "nightly-benchmark) or deploy deployments/prefect.yaml")
        flow = client.read_flow(found[0].flow_id)
        return f"{flow.name}/{found[0].name}"


def _cancel(flow_run_id: Any) -> None:
    from prefect import get_client
    from prefect.states import Cancelling

    with get_client(sync_client=True) as client:
        client.set_flow_run_state(flow_run_id, Cancelling(), force=True)


def ask_via_api(question: str, *, variant: str | None = None, model: str | None = None,
                settings: Settings | None = None, conversation: str | None = None) -> Any:
    """Run deployment ``answer-question`` for ``question`` and return its ``QuestionResult``.

    ``model``/``variant`` None leave the choice to the deployment's defaults (the serving
    process's ``GEOASK_MODEL``, else ``reference``; ``GEOASK_VARIANT``);
    ``conversation`` makes the question that conversation's next turn.

    Raises:
        ServiceError: see :func:`run_deployment_and_wait`; also when the run returned
            something other than a question result.

    """
    from geoask.service.deployments import ANSWER_DEPLOYMENT
    from geoask.vocabulary.question_result import QuestionResult

    settings = settings or get_settings()
    result = run_deployment_and_wait(
        f"{ANSWER_DEPLOYMENT}/{ANSWER_DEPLOYMENT}",
        {name: value for name, value in (("question", question), ("variant", variant),
                                         ("model", model), ("conversation", conversation))
         if value is not None},  # None: the deployment's default (the served model, variant)
        settings.api_run_timeout_s, settings=settings)
    if isinstance(result, dict):
        result = QuestionResult.model_validate(result)
    if not isinstance(result, QuestionResult):
        raise ServiceError(f"the answer-question run returned {type(result).__name__}, not a "
                           "question result; is the served flow geoask's answer-question?")
    return result
