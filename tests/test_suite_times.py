"""benchmark/suite_times.py: seconds per test file from pytest's JUnit XML, and a comparison."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmark" / "suite_times.py"
spec = importlib.util.spec_from_file_location("suite_times", SCRIPT)
assert spec and spec.loader
suite_times = importlib.util.module_from_spec(spec)
spec.loader.exec_module(suite_times)


def report(path: Path, cases: list[tuple[str, float]]) -> Path:
    rows = "".join(f'<testcase classname="{c}" name="t{i}" time="{t}"/>'
                   for i, (c, t) in enumerate(cases))
    path.write_text(f'<?xml version="1.0"?><testsuites><testsuite name="pytest">{rows}'
                    "</testsuite></testsuites>")
    return path


def test_seconds_are_summed_per_file(tmp_path):
    xml = report(tmp_path / "a.xml", [("tests.service.test_api_runs", 2.5),
                                      ("tests.service.test_api_runs", 1.0),
                                      ("tests.test_docs", 0.25)])
    assert suite_times.file_seconds(xml) == {"tests/service/test_api_runs.py": 3.5,
                                             "tests/test_docs.py": 0.25}


def test_a_comparison_lists_both_and_the_change_slowest_first(tmp_path):
    before = suite_times.file_seconds(report(tmp_path / "b.xml", [("tests.test_a", 10.0),
                                                                   ("tests.test_b", 30.0)]))
    after = suite_times.file_seconds(report(tmp_path / "c.xml", [("tests.test_a", 12.0),
                                                                  ("tests.test_b", 20.0)]))
    lines = suite_times.table(before, after)
    assert lines[1].split() == ["30.0", "20.0", "-10.0", "tests/test_b.py"]
    assert lines[2].split() == ["10.0", "12.0", "+2.0", "tests/test_a.py"]
    assert lines[-1].split() == ["40.0", "32.0", "-8.0", "total"]
    assert suite_times.table(before, None)[0].split() == ["30.0", "s", "tests/test_b.py"]
