"""``geoask server [--port P] [--no-serve] [--answer-flow MODULE:FLOW]``: server + deployments.

Starts a Prefect server on 127.0.0.1 (telemetry off; SQLite under ``<home>/prefect`` unless
GEOASK_SERVER_DATABASE_URL names a PostgreSQL database), waits for it to be healthy, then serves
the deployments ``answer-question`` and ``nightly-benchmark`` in the foreground. Ctrl-C (or
SIGTERM) stops serving and the server. The dashboard is at ``http://127.0.0.1:<port>``.
"""

from __future__ import annotations

import os
import signal
from types import FrameType
from typing import TYPE_CHECKING, Any

import typer

from geoask.errors import ServiceError

if TYPE_CHECKING:
    from prefect import Flow

    from geoask.settings import Settings

app = typer.Typer(help="Start a local Prefect server (dashboard + API) and serve the geoask "
                       "deployments until Ctrl-C.")


@app.callback(invoke_without_command=True)
def server(
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
) -> None:
    """Start the Prefect server on 127.0.0.1 and serve answer-question and nightly-benchmark."""
    from geoask.service.server import PrefectServer, client_environment
    from geoask.settings import get_settings

    settings = get_settings()
    if port is not None:
        settings = settings.model_copy(update={"server_port": port})
    # a bad --answer-flow fails at once, before the server's start-up
    flow = _load_flow(answer_flow) if serve and answer_flow else None
    prefect_server = PrefectServer(settings)
    # SIGTERM ends the foreground serve like Ctrl-C, so the server child is always stopped.
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        started_in = prefect_server.start()
        typer.echo(f"Prefect server healthy after {started_in:.1f} s; dashboard "
                   f"{prefect_server.dashboard_url}, API {prefect_server.api_url}")
        os.environ.update(client_environment(settings, prefect_server.api_url))
        if serve:
            _serve(settings, flow, limit)
        else:
            typer.echo("serving no deployments (--no-serve); Ctrl-C stops the server")
            signal.pause()
    except KeyboardInterrupt:
        typer.echo("stopping")
    finally:
        prefect_server.stop()
        typer.echo("Prefect server stopped")


def _serve(settings: Settings, answer_flow: Flow[..., Any] | None, limit: int | None
           ) -> None:
    from prefect.settings import (
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
        PREFECT_HOME: settings.prefect_home,
        PREFECT_LOCAL_STORAGE_PATH: settings.prefect_home / "storage",
        PREFECT_RESULTS_PERSIST_BY_DEFAULT: True,
    }):
        deployments = [answer_deployment(answer_flow)]
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


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt
