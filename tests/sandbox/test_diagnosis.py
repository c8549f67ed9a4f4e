"""Classification of failed runs and stream excerpts (pure functions, no sandbox needed)."""

from __future__ import annotations

import pytest

from sandbox.diagnosis import (
    classify_exit,
    classify_report,
    head_tail_excerpt,
    missing_field_name,
    signal_from_exit,
    status_for,
    tail_excerpt,
)
from sandbox.models import SandboxLimits

MISSING_FIELD_CASES = [
    # (exception type, message, key repr, expected field)
    ("KeyError", "'population'", "'population'", "population"),
    ("KeyError", "0", "0", "0"),
    ("KeyError", "\"['district_code'] not in index\"", "\"['district_code'] not in index\"",
     "district_code"),
    ("KeyError", "\"None of [Index(['a', 'b'], dtype='str')] are in the [columns]\"",
     "\"None of [Index(['a', 'b'], dtype='str')] are in the [columns]\"", "a, b"),
    ("ColumnNotFoundError", 'unable to find column "population"; valid columns: ["name"]', None,
     "population"),
    ("ColumnNotFoundError", '"population" not found', None, "population"),
    ("AttributeError", "'GeoDataFrame' object has no attribute 'area_km2'", None, "area_km2"),
    ("AttributeError", "'DataFrame' object has no attribute 'pop'", None, "pop"),
    ("AttributeError", "'list' object has no attribute 'area'", None, None),
    ("ValueError", "could not convert", None, None),
]


@pytest.mark.parametrize(("exception_type", "message", "key", "expected"), MISSING_FIELD_CASES)
def test_missing_field_name(exception_type, message, key, expected) -> None:
    assert missing_field_name(exception_type, message, key) == expected


def report(exception_type: str, message: str = "boom", **extra) -> dict:
    mro = extra.pop("mro", [exception_type, "Exception", "BaseException", "object"])
    return {"exception_type": exception_type, "exception_mro": mro, "message": message,
            "frames": [{"line": 3, "function": "<module>", "code": "x"},
                       {"line": 9, "function": "f", "code": "y"}], **extra}


REPORT_CASES = [
    (report("SyntaxError", mro=["SyntaxError", "Exception"]), "syntax_error", "exception"),
    (report("IndentationError", mro=["IndentationError", "SyntaxError"]), "syntax_error",
     "exception"),
    (report("ModuleNotFoundError", "No module named 'requests'", module="requests"),
     "missing_module", "exception"),
    (report("KeyError", "'pop'", key="'pop'"), "missing_field", "exception"),
    (report("MemoryError", mro=["MemoryError", "Exception"]), "memory_limit", "limit_exceeded"),
    (report("_ArrayMemoryError", mro=["_ArrayMemoryError", "MemoryError"]), "memory_limit",
     "limit_exceeded"),
    (report("OSError", "[Errno 27] File too large", errno="EFBIG"), "file_size_limit",
     "limit_exceeded"),
    (report("OSError", "[Errno 24] Too many open files", errno="EMFILE"), "open_files_limit",
     "limit_exceeded"),
    (report("RuntimeError", "can't start new thread"), "process_limit", "limit_exceeded"),
    (report("OSError", "[Errno 28] No space left on device", errno="ENOSPC"), "disk_space_limit",
     "limit_exceeded"),
    (report("PermissionError", "[Errno 1] Operation not permitted", errno="EPERM"),
     "forbidden_operation", "exception"),
    (report("OSError", "[Errno 30] Read-only file system", errno="EROFS"),
     "forbidden_operation", "exception"),
    (report("gaierror", "[Errno -3] Temporary failure"), "forbidden_operation", "exception"),
    (report("OSError", "[Errno 101] Network is unreachable", errno="ENETUNREACH"),
     "forbidden_operation", "exception"),
    (report("FileNotFoundError", "[Errno 2] No such file", errno="ENOENT"), "exception",
     "exception"),
    (report("ZeroDivisionError", "division by zero"), "exception", "exception"),
]


@pytest.mark.parametrize(("data", "kind", "status"), REPORT_CASES,
                         ids=[f"{c[0]['exception_type']}-{c[1]}" for c in REPORT_CASES])
def test_classify_report(data: dict, kind: str, status: str) -> None:
    error = classify_report(data)
    assert error.kind == kind
    assert status_for(error.kind) == status
    assert error.exception_type == data["exception_type"]
    assert error.line == 9  # the innermost frame inside the script
    assert error.hint


def test_missing_module_hint_names_the_available_libraries() -> None:
    error = classify_report(report("ModuleNotFoundError", "No module named 'requests'",
                                   module="requests"))
    for library in ("geopandas", "shapely", "pyproj", "sklearn", "polars", "matplotlib"):
        assert library in error.hint
    assert "'requests'" in error.hint


def test_missing_field_is_named_in_error_and_hint() -> None:
    error = classify_report(report("KeyError", "'population'", key="'population'"))
    assert error.missing_field == "population"
    assert "'population'" in error.hint


LIMITS = SandboxLimits(cpu_s=5, timeout_s=10)
EXIT_CASES = [
    # (exit code, signal, timed out, cpu seconds, expected kind)
    (None, "SIGKILL", True, 0.1, "timeout"),
    (None, "SIGXCPU", False, 5.0, "cpu_limit"),
    (None, "SIGKILL", False, 6.0, "cpu_limit"),
    (None, "SIGKILL", False, 0.2, "killed"),
    (None, "SIGSEGV", False, 0.2, "killed"),
    (None, "SIGXFSZ", False, 0.2, "file_size_limit"),
    (3, None, False, 0.2, "exception"),
]


@pytest.mark.parametrize(("exit_code", "signal_name", "timed_out", "cpu", "kind"), EXIT_CASES)
def test_classify_exit(exit_code, signal_name, timed_out, cpu, kind) -> None:
    error = classify_exit(exit_code=exit_code, signal_name=signal_name, timed_out=timed_out,
                          cpu_time_s=cpu, limits=LIMITS)
    assert error.kind == kind
    assert error.message and error.hint


@pytest.mark.parametrize(("code", "name"), [(137, "SIGKILL"), (139, "SIGSEGV"), (152, "SIGXCPU"),
                                            (0, None), (1, None), (128, None), (255, None)])
def test_signal_from_exit(code: int, name: str | None) -> None:
    assert signal_from_exit(code) == name


def test_tail_excerpt_keeps_the_end_and_says_what_was_cut() -> None:
    text = "".join(f"line {i}\n" for i in range(1000))
    excerpt = tail_excerpt(text, 100)
    assert excerpt.truncated and excerpt.total_chars == len(text)
    assert excerpt.text == text[-100:]
    assert str(len(text) - 100) in (excerpt.note or "")
    assert tail_excerpt("short", 100).truncated is False


def test_head_tail_excerpt_keeps_the_exception_at_the_end() -> None:
    text = "Warning: first\n" + "noise\n" * 5000 + "KeyError: 'population'\n"
    excerpt = head_tail_excerpt(text, 400)
    assert excerpt.text.startswith("Warning: first")
    assert excerpt.text.endswith("KeyError: 'population'\n")
    assert "characters cut" in excerpt.text and excerpt.truncated
    assert len(excerpt.text) < 500
