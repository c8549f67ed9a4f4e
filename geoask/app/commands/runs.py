"""``geoask runs show RUN_ID [--calls]``: a question run's outcome, model calls and transcripts.

A run is the folder ``<GEOASK_ARTIFACT_ROOT>/<run id>`` (a folder's path works too). Without
``--calls`` it prints the question's outcome and one line per model call; with it, each call's
whole transcript (``calls/<n>-<role>.json``: instructions, prompt, raw responses, the
validator's retry messages, errors), as the run page's collapsed section shows it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from geoask.errors import ConfigurationError
from geoask.models.recorded import load_transcripts
from geoask.records.call_pages import call_header, call_text
from geoask.settings import get_settings

app = typer.Typer(help="Show a question run's folder: its answer, log and the transcript of "
                       "every model call.", no_args_is_help=True)


@app.callback()
def _runs() -> None:
    """Show a question run's folder: its answer, log and the transcript of every model call."""


def run_folder_of(run: str) -> Path:
    """The folder of run ``run`` (an id under the artifact root, or a path).

    Raises:
        ConfigurationError: no such run folder.

    """
    root = get_settings().artifact_root_url
    for folder in (Path(run).expanduser(), Path(root) / run):
        if (folder / "execution_log.json").is_file() or (folder / "calls").is_dir():
            return folder
    raise ConfigurationError(f"no run {run!r} under {root} (give a run id or a run folder)")


@app.command("show")
def show(
    run: Annotated[str, typer.Argument(help="Run id (folder under GEOASK_ARTIFACT_ROOT) or path.")],
    calls: Annotated[bool, typer.Option("--calls", help="Print every call's transcript.")] = False,
) -> None:
    """Print a run's outcome and its model calls (``--calls``: their whole transcripts)."""
    folder = run_folder_of(run)
    log_file = folder / "execution_log.json"
    if log_file.is_file():
        log = json.loads(log_file.read_text())
        typer.echo(f"run {log['run_id']} ({log['variant']}): {log['outcome']} - {log['question']}")
        typer.echo(f"folder: {folder}")
    for transcript in load_transcripts(folder):
        typer.echo(call_text(transcript) if calls else call_header(transcript))
