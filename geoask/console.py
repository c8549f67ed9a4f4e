"""What Prefect prints on the terminal during a geoask command.

Prefect's console handler prints every log record of every run; the Prefect run log (UI/API)
keeps everything regardless. geoask shows the user one line per failure (its own error says
what to do) and, for many-run commands such as the benchmark, only warnings.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator


def _console_handlers() -> Iterator[logging.Handler]:
    from prefect.logging.configuration import setup_logging
    from prefect.logging.handlers import PrefectConsoleHandler

    setup_logging()
    loggers = [logging.getLogger(), *(logging.getLogger(name)
                                      for name in list(logging.root.manager.loggerDict))]
    for logger in loggers:
        for handler in getattr(logger, "handlers", []):
            if isinstance(handler, PrefectConsoleHandler):
                yield handler


def one_line_console_logs() -> None:
    """Print Prefect's records on the terminal without tracebacks (the run log keeps them)."""
    for handler in _console_handlers():
        if not getattr(handler, "_geoask_one_line", False):
            handler.emit = _without_traceback(handler.emit)  # type: ignore[method-assign,assignment]
            handler._geoask_one_line = True  # type: ignore[attr-defined]


def quiet_console(level: int = logging.WARNING) -> None:
    """Show only records at ``level`` or above on the terminal (e.g. during a benchmark)."""
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
