"""``geoask model``: a local llama.cpp server for a GGUF model (``make local-model``).

``geoask model serve`` starts it on 127.0.0.1 (or finds it running) and prints the
``GEOASK_*`` lines that point geoask at it; ``geoask model stop`` ends it; ``geoask model
status`` says whether it answers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from geoask.models.local_server import (
    DEFAULT_ALIAS,
    DEFAULT_CONTEXT,
    DEFAULT_GGUF,
    DEFAULT_PORT,
    DEFAULT_THREADS,
    answers,
    env_lines,
    read_state,
    start_server,
    stop_server,
)
from geoask.settings import get_settings

app = typer.Typer(help="Serve a local language model (llama.cpp) for the agents.",
                  no_args_is_help=True)
TOOLS = Path(__file__).resolve().parents[3] / ".tools"
"""Where ``make local-model`` builds ``llama.cpp-<version>/llama-server``."""


def _built_server() -> Path:
    """The ``llama-server`` of ``make local-model`` (the newest version built)."""
    built = sorted(TOOLS.glob("llama.cpp-*/llama-server"),
                   key=lambda path: [int(part) for part in path.parent.name.split("-")[1].split(".")
                                     if part.isdigit()])
    return built[-1] if built else TOOLS / "llama.cpp-<version>" / "llama-server"


def _models_dir() -> Path:
    folder = get_settings().home / "models"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@app.command("serve")
def serve(
    gguf: Annotated[str, typer.Option(help="GGUF file in <home>/models/.")] = DEFAULT_GGUF,
    port: Annotated[int | None, typer.Option(
        min=1, max=65535, help=f"Port on 127.0.0.1 (default {DEFAULT_PORT}).")] = None,
    context: Annotated[int | None, typer.Option(
        min=512, help=f"Context window, tokens (default {DEFAULT_CONTEXT}).")] = None,
    alias: Annotated[str | None, typer.Option(
        help=f"Model name the server answers to (default {DEFAULT_ALIAS}).")] = None,
    threads: Annotated[int, typer.Option(min=1, help="CPU threads (default: half the cores).")
                       ] = DEFAULT_THREADS,
    server: Annotated[Path | None, typer.Option(
        help="The llama-server binary (default: the one make local-model built).")] = None,
) -> None:
    """Start the llama.cpp server (or find it running) and print the settings to use.

    A server already running is used only when it has the port, context and alias given.
    """
    state = start_server(_models_dir(), server or _built_server(), gguf=gguf, port=port,
                         context_tokens=context, alias=alias, threads=threads)
    typer.echo(f"llama.cpp server (pid {state.pid}) answers at {state.base_url}; use:")
    for line in env_lines(state):
        typer.echo(f"export {line}")


@app.command("stop")
def stop() -> None:
    """Stop the server that ``geoask model serve`` started."""
    state = stop_server(_models_dir())
    typer.echo("no local model server is running" if state is None
               else f"stopped the llama.cpp server (pid {state.pid})")


@app.command("status")
def status() -> None:
    """Say whether the local server runs and answers (exit 1 when it does not)."""
    state = read_state(_models_dir())
    if state is None or not answers(state):
        typer.echo("no local model server answers" if state is None
                   else f"the server (pid {state.pid}) does not answer at {state.base_url}")
        raise typer.Exit(1)
    typer.echo(f"llama.cpp server (pid {state.pid}) answers at {state.base_url}")
    for line in env_lines(state):
        typer.echo(line)
