"""The ``geoask`` command line.

Run ``geoask --help``. Sub-commands live next to what they drive (``geoask/app/commands/db.py``,
``geoask/app/commands/catalog.py``, ...) and are registered here by module name: a sub-command's
module
is imported only when that sub-command runs (or its own help is shown), so ``geoask --help``
and ``geoask sql check`` do not import the catalog, the retrieval stack or Prefect. User-facing
errors (:class:`geoask.errors.GeoaskError`) are printed as one message, never as a traceback.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator, MutableMapping
from typing import Any, Final

import typer
import typer.main
from typer import _click
from typer.core import TyperGroup

from geoask.base import heap
from geoask.base.console import one_line_console_logs
from geoask.base.tls import check_certificate_files
from geoask.errors import GeoaskError

SUBCOMMANDS: Final[dict[str, tuple[str, str]]] = {
    "db": ("geoask.app.commands.db", "Start, stop, inspect and load the PostGIS database."),
    "catalog": ("geoask.app.commands.catalog",
                "Show, search, draft and check the semantic catalog."),
    "sandbox": ("geoask.app.commands.sandbox",
                "Run generated Python analysis code in an isolated sandbox."),
    "sql": ("geoask.app.commands.sql",
            "Check SQL with the read-only guard, or run it and export the result."),
    "bench": ("geoask.app.commands.bench",
              "The benchmark: run it (no sub-command), verify or fill the cases, show examples."),
    "ask": ("geoask.app.ask", "Answer a natural-language question about the database (exit 0 "
                              "answered, 1 error, 2 usage error, 3 rejected, 4 no answer)."),
    "chat": ("geoask.app.chat", "Ask questions as one conversation: follow-ups see earlier "
                                "turns and reuse their results."),
    "model": ("geoask.app.commands.model",
              "Serve a local language model (llama.cpp) for the agents."),
    "runs": ("geoask.app.commands.runs", "Show a question run's folder: its answer, log and "
                                         "the transcript of every model call."),
    "server": ("geoask.service.cli", "Start a local Prefect server (dashboard + API) and serve "
                                     "the geoask deployments until Ctrl-C."),
}
"""Sub-command -> (module whose ``app`` it is, its one-line help as ``geoask --help`` lists it).

A test keeps each help line equal to the sub-app's own.
"""

_loaded: dict[str, _click.Command] = {}


def load_subcommand(name: str) -> _click.Command:
    """The click command of sub-command ``name``, built as ``add_typer`` would (cached).

    Raises:
        KeyError: ``name`` is not in :data:`SUBCOMMANDS`.

    """
    if name not in _loaded:
        module, _ = SUBCOMMANDS[name]
        holder = typer.Typer()
        holder.add_typer(importlib.import_module(module).app, name=name)
        group = typer.main.get_command(holder)
        assert isinstance(group, TyperGroup)
        _loaded[name] = group.commands[name]
    return _loaded[name]


class _Commands(MutableMapping[str, _click.Command]):
    """The sub-commands: reading one imports its module; iterating names imports nothing."""

    def __init__(self, eager: MutableMapping[str, _click.Command]) -> None:
        self.eager = dict(eager)

    def __getitem__(self, name: str) -> _click.Command:
        if name in self.eager:
            return self.eager[name]
        if name in SUBCOMMANDS:
            return load_subcommand(name)
        raise KeyError(name)

    def __setitem__(self, name: str, command: _click.Command) -> None:
        self.eager[name] = command

    def __delitem__(self, name: str) -> None:
        del self.eager[name]

    def __iter__(self) -> Iterator[str]:
        yield from SUBCOMMANDS
        yield from (name for name in self.eager if name not in SUBCOMMANDS)

    def __len__(self) -> int:
        return len(SUBCOMMANDS) + sum(name not in SUBCOMMANDS for name in self.eager)


class _LazyGroup(TyperGroup):
    """The root group: lists sub-commands from :data:`SUBCOMMANDS`, imports one when it runs."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands = _Commands(self.commands)

    def list_commands(self, ctx: _click.Context) -> list[str]:
        """Sub-command names, in registration order (imports nothing)."""
        return list(self.commands)

    def get_command(self, ctx: _click.Context, cmd_name: str) -> _click.Command | None:
        """The loaded command, or for one not loaded yet a stand-in carrying its help line."""
        if cmd_name in SUBCOMMANDS and cmd_name not in _loaded:
            return TyperGroup(name=cmd_name, help=SUBCOMMANDS[cmd_name][1])
        return self.commands.get(cmd_name)

    def resolve_command(self, ctx: _click.Context, args: list[str]
                        ) -> tuple[str | None, _click.Command | None, list[str]]:
        """Import the sub-command about to run, then resolve it as usual."""
        if args and args[0] in SUBCOMMANDS:
            load_subcommand(args[0])
        return super().resolve_command(ctx, args)


app = typer.Typer(
    name="geoask",
    cls=_LazyGroup,
    help="Answer questions about spatial data in PostGIS by generating, checking and running code.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    """Answer questions about spatial data in PostGIS by generating, checking and running code."""


def main() -> None:
    """Console entry point: run the app, turning geoask errors into a message and exit code."""
    one_line_console_logs()
    try:
        check_certificate_files()  # before Prefect's import trips over a bad one
        with heap.owned():
            app()
    except GeoaskError as error:
        typer.secho(f"error: {error}", err=True, fg=typer.colors.RED)
        sys.exit(error.exit_code)
