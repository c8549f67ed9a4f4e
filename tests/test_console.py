"""Terminal output of Prefect logs: one line per failure, warnings only when asked."""

from __future__ import annotations

import logging
import sys

from geoask.base.console import _console_handlers, _without_traceback, quiet_console


def _record_with_traceback() -> logging.LogRecord:
    try:
        raise ValueError("boom")
    except ValueError:
        return logging.LogRecord("prefect.flow_runs", logging.ERROR, __file__, 1,
                                 "Encountered exception", None, sys.exc_info())


def test_console_copy_drops_the_traceback_but_the_original_keeps_it():
    seen: list[logging.LogRecord] = []
    original = _record_with_traceback()
    _without_traceback(seen.append)(original)
    assert seen[0].exc_info is None and seen[0].getMessage() == "Encountered exception"
    assert original.exc_info is not None  # other handlers (the run log) still get it


def test_quiet_console_raises_the_console_level_only():
    handlers = list(_console_handlers())
    assert handlers, "Prefect's console handler should be configured"
    before = [h.level for h in handlers]
    try:
        quiet_console(logging.WARNING)
        assert all(h.level == logging.WARNING for h in _console_handlers())
    finally:
        for handler, level in zip(handlers, before, strict=True):
            handler.setLevel(level)


def test_quiet_console_by_default_shows_no_prefect_record_not_even_an_error():
    handlers = list(_console_handlers())
    before = [h.level for h in handlers]
    try:
        quiet_console()
        record = _record_with_traceback()  # an ERROR of a failed run
        assert not any(h.level <= record.levelno for h in _console_handlers())
    finally:
        for handler, level in zip(handlers, before, strict=True):
            handler.setLevel(level)


def test_one_line_logs_apply_when_prefect_is_imported_later():
    """Called before Prefect is imported (as geoask.app.cli.main does), it applies on import."""
    import subprocess

    code = ("import sys\n"
            "from geoask.base.console import one_line_console_logs, _configured_console_handlers\n"
            "one_line_console_logs()\n"
            "assert 'prefect' not in sys.modules\n"
            "from prefect import flow\n"
            "handlers = list(_configured_console_handlers())\n"
            "print(len(handlers), all(h._geoask_one_line for h in handlers))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)
    count, patched = done.stdout.split()
    assert int(count) >= 1 and patched == "True", done.stderr
