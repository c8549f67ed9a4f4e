"""``geoask server [--port P] [--no-serve] [--answer-flow MODULE:FLOW]``: server + deployments.

Starts a Prefect server on 127.0.0.1 (telemetry off; its database in the embedded PostgreSQL
cluster, see :func:`geoask.service.server.prepare_server_database`), waits for it to be
healthy, records it in ``<home>/prefect/server.json`` (so ``geoask ask``/``bench`` use it),
then serves the deployments ``answer-question`` and ``nightly-benchmark`` in the foreground,
with the warm question worker ``geoask ask`` hands its questions to (``GEOASK_SERVER_WORKER``,
:mod:`geoask.service.worker`) and the workspace page (:mod:`geoask.service.workspace`; its URL
with its token is printed). Ctrl-C (or SIGTERM) stops serving and the server. The dashboard is at
``http://127.0.0.1:<port>``. ``geoask server stop`` stops the recorded server (one started in
the background by ``ask``/``bench``, or a foreground one); ``geoask server status`` shows it.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import sys
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING, Any

import typer

from geoask.base.interrupt import run_stop_hooks
from geoask.errors import ServiceError

if TYPE_CHECKING:
    from prefect import Flow

    from geoask.service.state_file import ServerState
    from geoask.service.worker import QuestionWorker
    from geoask.service.workspace import Workspace
    from geoask.settings import Settings

app = typer.Typer(help="Start a local Prefect server (dashboard + API) and serve the geoask "
                       "deployments until Ctrl-C.")


@app.callback(invoke_without_command=True)
def server(
    ctx: typer.Context,
    port: int | None = typer.Option(
        None, "--port", "-p", envvar="GEOASK_SERVER_PORT",
        help="Port on 127.0.0.1 (default 4200)."),
    serve: bool = typer.Option(
        True, "--serve/--no-serve",
        help="Serve the deployments (default) or run only the server and dashboard."),
    answer_flow: str | None = typer.Option(
        None, "--answer-flow",
        help="Serve another flow as answer-question, given as package.module:flow_name "
             "(served by module name) or path/to/file.py:flow_name (served by path; e.g. a "
             "wrapper that injects a scripted model for offline tests)."),
    limit: int | None = typer.Option(
        None, "--limit", min=1, help="Most flow runs executed at once (default: no limit)."),
    background: bool = typer.Option(
        False, "--background", hidden=True,
        help="Started detached by geoask ask/bench (recorded as mode background)."),
) -> None:
    """Start the Prefect server on 127.0.0.1 and serve answer-question and nightly-benchmark."""
    if ctx.invoked_subcommand is not None:
        return
    from geoask.service.local import masked_url, running_server
    from geoask.service.server import PrefectServer, client_environment
    from geoask.service.state_file import ServerState, process_started_at, write_state
    from geoask.settings import get_settings

    settings = get_settings()
    if port is not None:
        settings = settings.model_copy(update={"server_port": port})
    # a bad --answer-flow fails at once, before the server's start-up
    flow = _load_flow(answer_flow) if serve and answer_flow else None
    running = running_server(settings)
    if running is not None:
        raise ServiceError(f"a geoask Prefect server ({running.mode}, pid {running.pid}) "
                           f"already runs at {running.dashboard_url}; stop it with `geoask "
                           "server stop` first (or set GEOASK_SERVER_HOME to another folder)")
    prefect_server = PrefectServer(settings)
    # SIGTERM ends the foreground serve like Ctrl-C, so the server child is always stopped.
    signal.signal(signal.SIGTERM, _interrupt(settings))
    started = False
    worker: QuestionWorker | None = None
    workspace: Workspace | None = None
    try:
        started_in = prefect_server.start()
        started = True
        state = ServerState(
            api_url=prefect_server.api_url, pid=os.getpid(), port=prefect_server.port,
            mode="background" if background else "foreground",
            log_path=str(prefect_server.log_path),
            database=masked_url(prefect_server.database_url or ""),
            started_at=process_started_at(os.getpid()), prefect_pid=prefect_server.pid,
            prefect_started_at=(process_started_at(prefect_server.pid)
                                if prefect_server.pid else None),
            api_auth_string=prefect_server.auth_string)
        write_state(settings, state)
        typer.echo(f"Prefect server healthy after {started_in:.1f} s; dashboard "
                   f"{prefect_server.dashboard_url}, API {prefect_server.api_url}")
        os.environ.update(client_environment(settings, prefect_server.api_url,
                                             prefect_server.auth_string))
        if serve:
            if settings.server_worker and flow is None:  # the worker runs geoask's own flow
                worker = _start_worker(settings, state)
            workspace = _start_workspace(settings)
            _serve(settings, flow, limit)
        else:
            typer.echo("serving no deployments (--no-serve); Ctrl-C stops the server")
            signal.pause()
    except KeyboardInterrupt:
        typer.echo("stopping")
    finally:
        _remove_own_state(settings)  # first: its clients stop at once (geoask.service.watch)
        if workspace is not None:
            workspace.stop()
        if worker is not None:
            worker.stop()
            run_stop_hooks("a geoask server shutdown")  # its questions' runs: Crashed
        prefect_server.stop()
        if started:
            typer.echo("Prefect server stopped")


@app.command("stop")
def stop_command() -> None:
    """Stop the recorded geoask Prefect server (background or foreground); idempotent."""
    from geoask.service.local import stop_server
    from geoask.settings import get_settings

    stopped = stop_server(get_settings())
    typer.echo(f"Prefect server at {stopped.dashboard_url} ({stopped.mode}) stopped."
               if stopped else "no geoask Prefect server was running.")


@app.command("status")
def status_command() -> None:
    """Print the recorded geoask Prefect server: URL, mode, pid, database, log."""
    from geoask.service.local import running_server
    from geoask.settings import get_settings

    state = running_server(get_settings())
    if state is None:
        typer.echo("no geoask Prefect server is running (`geoask ask`/`bench` start one).")
        return
    from geoask.service.state_file import state_path

    typer.echo(f"running ({state.mode}, pid {state.pid}): dashboard {state.dashboard_url}, "
               f"API {state.api_url}\ndatabase: {state.database}\nlog: {state.log_path}")
    if state.workspace_link:
        typer.echo(f"workspace page: {state.workspace_link}")
    if state.api_auth_string:
        typer.echo(f"API and dashboard need its password: api_auth_string in "
                   f"{state_path(get_settings())} (readable only by you)")


def _start_worker(settings: Settings, state: ServerState) -> QuestionWorker:
    """Start the warm question worker and record it in the server state."""
    from geoask.service.state_file import write_state
    from geoask.service.worker import QuestionWorker

    worker = QuestionWorker(settings)
    url = worker.start()
    write_state(settings, dataclasses.replace(state, worker_url=url, worker_token=worker.token))
    typer.echo(f"question worker ready at {url}")
    return worker


def _start_workspace(settings: Settings) -> Workspace:
    """Start the workspace page, record it in the server state and print its URL."""
    from geoask.service.state_file import read_state, write_state
    from geoask.service.workspace import Workspace

    workspace = Workspace(settings)
    url = workspace.start()
    state = read_state(settings)
    if state is not None and state.pid == os.getpid():
        state = dataclasses.replace(state, workspace_url=url, workspace_token=workspace.token)
        write_state(settings, state)
    # the token goes to the terminal of whoever started the server, never to a log file
    typer.echo(f"workspace page: {url}/?token={workspace.token}" if sys.stdout.isatty() else
               f"workspace page: {url} (`geoask server status` prints it with its token)")
    return workspace


def _remove_own_state(settings: Settings) -> None:
    from geoask.service.state_file import remove_state

    remove_state(settings, os.getpid())


def _serve(settings: Settings, answer_flow: Flow[..., Any] | None, limit: int | None
           ) -> None:
    from prefect.settings import (
        PREFECT_API_AUTH_STRING,
        PREFECT_API_URL,
        PREFECT_HOME,
        PREFECT_LOCAL_STORAGE_PATH,
        PREFECT_RESULTS_PERSIST_BY_DEFAULT,
        temporary_settings,
    )

    from geoask.service.deployments import (
        answer_deployment,
        benchmark_deployment,
        serve_deployments,
    )

    with temporary_settings(updates={
        PREFECT_API_URL: os.environ["PREFECT_API_URL"],
        PREFECT_API_AUTH_STRING: os.environ.get("PREFECT_API_AUTH_STRING"),
        PREFECT_HOME: settings.prefect_home,
        PREFECT_LOCAL_STORAGE_PATH: settings.prefect_home / "storage",
        PREFECT_RESULTS_PERSIST_BY_DEFAULT: True,
    }):
        deployments = [answer_deployment(answer_flow, settings)]
        nightly = benchmark_deployment(settings)
        if nightly is not None:
            deployments.append(nightly)
        names = ", ".join(d.name for d in deployments)
        typer.echo(f"serving {names}; Ctrl-C stops")
        serve_deployments(deployments, limit=limit,
                          poll_interval_s=settings.server_poll_interval_s)


def _load_flow(entrypoint: str) -> Flow[..., Any]:
    from geoask.service.deployments import load_flow

    try:
        return load_flow(entrypoint)
    except ServiceError as error:
        raise ServiceError(f"--answer-flow: {error}") from None


def _interrupt(settings: Settings) -> Callable[[int, FrameType | None], None]:
    """The SIGTERM handler: delete this server's record at once, then stop like Ctrl-C.

    Commands running flows on this server watch the record (:mod:`geoask.service.watch`) and
    end within a second instead of waiting out the shutdown of serving and of the server.
    """
    def stop(signum: int, frame: FrameType | None) -> None:
        _remove_own_state(settings)
        raise KeyboardInterrupt

    return stop
