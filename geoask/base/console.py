"""What Prefect prints on the terminal during a geoask command.

Prefect's console handler prints every log record of every run; the Prefect run log (UI/API)
keeps everything regardless. geoask shows the user one line per failure (its own error says
what to do) and, for many-run commands such as the benchmark, only warnings.

Nothing here imports Prefect: :func:`one_line_console_logs` patches Prefect's console handlers
when Prefect sets up its logging (on ``import prefect``), so a command that never uses Prefect
(``geoask --help``, ``geoask sql check``) does not pay for importing it.
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import logging
import sys
from collections.abc import Callable, Iterator, Sequence
from types import ModuleType
from typing import Any

LOGGING_CONFIGURATION = "prefect.logging.configuration"
"""The Prefect module whose ``setup_logging`` (re)creates the console handlers."""


def _console_handlers() -> Iterator[logging.Handler]:
    from prefect.logging.configuration import setup_logging

    setup_logging()
    yield from _configured_console_handlers()


def _configured_console_handlers() -> Iterator[logging.Handler]:
    from prefect.logging.handlers import PrefectConsoleHandler

    loggers = [logging.getLogger(), *(logging.getLogger(name)
                                      for name in list(logging.root.manager.loggerDict))]
    for logger in loggers:
        for handler in getattr(logger, "handlers", []):
            if isinstance(handler, PrefectConsoleHandler):
                yield handler


def one_line_console_logs() -> None:
    """Print Prefect's records on the terminal without tracebacks (the run log keeps them).

    Applies now when Prefect's logging is already set up, and again after every later
    ``setup_logging`` (which creates new handlers); when Prefect is not imported yet, it
    applies as soon as it is - without importing Prefect here.
    """
    module = sys.modules.get(LOGGING_CONFIGURATION)
    if module is not None:
        _hook_setup_logging(module)
        _patch_console_handlers()
    elif not any(isinstance(finder, _AfterImport) and not finder.done
                 for finder in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport(LOGGING_CONFIGURATION, _hook_setup_logging))


def _patch_console_handlers() -> None:
    for handler in _configured_console_handlers():
        if not getattr(handler, "_geoask_one_line", False):
            handler.emit = _without_traceback(handler.emit)  # type: ignore[method-assign,assignment]
            handler._geoask_one_line = True  # type: ignore[attr-defined]


def _hook_setup_logging(module: ModuleType) -> None:
    """Make ``module.setup_logging`` patch the console handlers it creates (once)."""
    original = module.setup_logging
    if getattr(original, "_geoask_hooked", False):
        return

    @functools.wraps(original)
    def setup_logging(*args: Any, **kwargs: Any) -> Any:
        config = original(*args, **kwargs)
        _patch_console_handlers()
        return config

    setup_logging._geoask_hooked = True  # type: ignore[attr-defined]
    setattr(module, "setup_logging", setup_logging)  # noqa: B010 - a ModuleType attribute


class _AfterImport(importlib.abc.MetaPathFinder):
    """Calls ``callback(module)`` right after module ``name`` is executed (once)."""

    def __init__(self, name: str, callback: Callable[[ModuleType], None]) -> None:
        self.name = name
        self.callback = callback
        self.done = False

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        """The module's own spec, its loader wrapped to call back after executing it."""
        if fullname != self.name or self.done:
            return None  # (stays in sys.meta_path: removing it mid-lookup would skip a finder)
        self.done = True
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        loader = spec.loader if spec is not None else None
        if spec is None or loader is None or not hasattr(loader, "exec_module"):
            return spec
        execute = loader.exec_module
        callback = self.callback

        def exec_module(module: ModuleType) -> None:
            execute(module)
            callback(module)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


SILENT = logging.CRITICAL + 1
"""A console level above every record: Prefect says nothing on the terminal."""


def quiet_console(level: int = SILENT) -> None:
    """Show only Prefect records at ``level`` or above on the terminal (default: none).

    geoask reports every outcome itself (a failed question, a stopped server), so Prefect's own
    lines - a task run's ``ERROR | Task run ... Failed``, an ``EventsWorker`` warning - only
    repeat it; the run logs in the Prefect UI keep everything, and ``--verbose`` shows them.
    """
    for handler in _console_handlers():
        handler.setLevel(level)


def _without_traceback(emit: Callable[[logging.LogRecord], None]
                       ) -> Callable[[logging.LogRecord], None]:
    def emit_one_line(record: logging.LogRecord) -> None:
        if record.exc_info or record.exc_text:
            record = logging.makeLogRecord({**record.__dict__, "exc_info": None,
                                            "exc_text": None})
        emit(record)

    return emit_one_line
