"""``geoask sandbox``: build the sandbox runtime and run a script in isolation.

Run ``geoask sandbox setup`` once (idempotent), then
``geoask sandbox run SCRIPT [--input FILE ...] [--timeout S] [--memory MiB]``, which prints the
outcome as JSON, or ``geoask sandbox cells CELL ... [--input FILE ...]``, which runs the files
as cells of one persistent session and prints one outcome per line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError

from geoask.base.capped_input import MAX_SCRIPT_CHARS, read_capped_text
from geoask.errors import SandboxError
from geoask.settings import get_settings

app = typer.Typer(help="Run generated Python analysis code in an isolated sandbox.",
                  no_args_is_help=True)


@app.command("setup")
def setup(
    force: Annotated[
        bool, typer.Option("--force", help="Rebuild even if the runtime is current.")
    ] = False,
) -> None:
    """Build (or check) the sandbox runtime venv with the analysis libraries."""
    from sandbox.runtime import ensure_runtime

    settings = get_settings()
    info = ensure_runtime(
        settings.sandbox_runtime_path, settings.sandbox_base_python, force=force
    )
    state = "built" if info.rebuilt else "already current"
    typer.echo(f"sandbox runtime {state}: {info.root} ({info.requirements_hash[:12]})")


EXIT_SCRIPT_FAILED = 3


@app.command("run")
def run(
    script: Annotated[Path, typer.Argument(help="Python script to run.")],
    inputs: Annotated[
        list[Path] | None,
        typer.Option(
            "--input", "-i", help="Input file, mounted read-only at /input/<name> (repeatable)."
        ),
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option(min=0.1, max=3600,
                     help="Wall-clock limit in seconds, at most 3600 "
                     "(default GEOASK_SANDBOX_TIMEOUT_S)."),
    ] = None,
    memory: Annotated[
        int | None, typer.Option(min=256, max=16384,
                                 help="Memory limit in MiB, 256 to 16384 "
                                 "(default GEOASK_SANDBOX_MEMORY_MIB).")
    ] = None,
) -> None:
    """Run SCRIPT in a fresh sandbox and print the outcome as JSON.

    Exit 0 when the script succeeded, 3 when it failed (the outcome says how), 1 when the
    sandbox could not run.
    """
    from geoask.compute.step import run_compute
    from sandbox.bubblewrap import BubblewrapSandbox
    from sandbox.models import SandboxLimits

    settings = get_settings()
    try:
        source = read_capped_text(script, MAX_SCRIPT_CHARS, what=f"script {script}")
    except (OSError, UnicodeDecodeError) as error:
        raise SandboxError(f"cannot read script {script}: {error}") from error
    limits = SandboxLimits.from_settings(settings)
    changes: dict[str, float | int] = {}
    if timeout is not None:
        changes["timeout_s"] = timeout
    if memory is not None:
        changes["memory_mib"] = memory
    if changes:
        try:
            limits = SandboxLimits.model_validate(limits.model_dump() | changes)
        except ValidationError as error:
            problems = "; ".join(
                f"{'.'.join(map(str, item['loc']))}: {item['msg']}" for item in error.errors()
            )
            raise SandboxError(f"invalid limit: {problems}") from error
    ran = run_compute(source, inputs or [], BubblewrapSandbox.from_settings(settings),
                      limits=limits)
    typer.echo(ran.outcome.model_dump_json(indent=2))
    if ran.failure is not None:
        typer.echo(f"script failed: {ran.failure}", err=True)
        raise typer.Exit(EXIT_SCRIPT_FAILED)


@app.command("cells")
def cells(
    files: Annotated[list[Path], typer.Argument(help="Python files, run in order as cells.")],
    inputs: Annotated[
        list[Path] | None,
        typer.Option(
            "--input", "-i", help="Input file, mounted read-only at /input/<name> (repeatable)."
        ),
    ] = None,
) -> None:
    """Run FILES as the cells of one persistent session; print each outcome as a JSON line.

    Cells share their variables. Exit 0 when every cell succeeded, 3 when one failed (the run
    stops at a cell that ended the session), 1 when the sandbox could not run.
    """
    from geoask.compute.step import run_compute
    from sandbox.bubblewrap import BubblewrapSandbox

    sources = []
    for path in files:
        try:
            sources.append(read_capped_text(path, MAX_SCRIPT_CHARS, what=f"cell {path}"))
        except (OSError, UnicodeDecodeError) as error:
            raise SandboxError(f"cannot read cell {path}: {error}") from error
    failed = False
    with BubblewrapSandbox.from_settings(get_settings()).open_session() as session:
        for index, source in enumerate(sources):
            ran = run_compute(source, (inputs or []) if index == 0 else [], session)
            typer.echo(ran.outcome.model_dump_json())
            if ran.failure is not None:
                failed = True
                typer.echo(f"cell {index + 1} ({files[index]}) failed: {ran.failure}", err=True)
            if session.ended is not None:
                break
    if failed:
        raise typer.Exit(EXIT_SCRIPT_FAILED)
