"""Runtime stamp logic and the in-memory fake (no sandbox needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sandbox.fake import FakeSandbox, success_outcome
from sandbox.models import SandboxLimits
from sandbox.runtime import (
    ANALYSIS_REQUIREMENTS,
    STAMP_NAME,
    read_stamp,
    requirements_hash,
    runtime_is_current,
)

PYTHON = Path("/usr/bin/python3")


def test_hash_ignores_order_but_not_content() -> None:
    base = requirements_hash(ANALYSIS_REQUIREMENTS, PYTHON)
    assert requirements_hash(tuple(reversed(ANALYSIS_REQUIREMENTS)), PYTHON) == base
    assert requirements_hash((*ANALYSIS_REQUIREMENTS, "rasterio>=1.3"), PYTHON) != base
    changed = tuple(r.replace("numpy>=1.26", "numpy>=2.0") for r in ANALYSIS_REQUIREMENTS)
    assert requirements_hash(changed, PYTHON) != base


def test_runtime_is_current_only_with_matching_stamp_and_python(tmp_path: Path) -> None:
    expected = requirements_hash(ANALYSIS_REQUIREMENTS, PYTHON)
    assert not runtime_is_current(tmp_path, expected)
    (tmp_path / STAMP_NAME).write_text(json.dumps({"requirements_hash": expected}))
    assert read_stamp(tmp_path) == expected
    assert not runtime_is_current(tmp_path, expected)  # no interpreter yet
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "python").write_text("")
    assert runtime_is_current(tmp_path, expected)
    assert not runtime_is_current(tmp_path, "0" * 64)
    (tmp_path / STAMP_NAME).write_text("not json")
    assert read_stamp(tmp_path) is None


def test_fake_records_calls_and_returns_scripted_outcomes() -> None:
    fake = FakeSandbox(respond=lambda script: success_outcome({"len": len(script)}, "measured"))
    limits = SandboxLimits(timeout_s=5)
    outcome = fake.run("abc", [Path("/data/a.geojson")], limits)
    assert outcome.ok and outcome.protocol is not None
    assert outcome.protocol.result == {"len": 3}
    assert fake.calls[0].inputs == (Path("/data/a.geojson"),)
    assert fake.calls[0].limits == limits


def test_pinned_requirements_are_this_environments_exact_versions() -> None:
    from importlib import metadata

    from sandbox.runtime import pinned_requirements

    pins = dict(pin.split("==") for pin in pinned_requirements())
    for name in ("geopandas", "shapely", "pandas", "numpy", "pyproj", "scikit-learn"):
        assert pins[name] == metadata.version(name)
    assert "numpy" in pins and "python-dateutil" in pins  # dependencies of the named ones
    assert "sqlglot" not in pins and "prefect" not in pins  # only the analysis closure


def test_pinned_requirements_refuse_a_package_that_is_not_installed() -> None:
    import pytest

    from geoask.errors import SandboxError
    from sandbox.runtime import pinned_requirements

    with pytest.raises(SandboxError, match="not installed in geoask's environment"):
        pinned_requirements(("no-such-analysis-library>=1",))


def test_failure_detail_is_one_line_for_every_caller() -> None:
    from sandbox.models import ScriptError

    assert success_outcome({"n": 1}).failure_detail() is None
    error = ScriptError(kind="missing_field", message="KeyError: 'n'", line=3,
                        hint="check the field", missing_field="n")
    failed = success_outcome({}).model_copy(
        update={"status": "exception", "protocol": None, "error": error})
    assert failed.failure_detail() == "missing_field line 3: KeyError: 'n'; hint: check the field"
    assert failed.missing_fields == ["n"]
    bare = success_outcome({}).model_copy(update={"status": "protocol_error", "protocol": None})
    assert bare.failure_detail() == "sandbox status protocol_error"
    assert bare.missing_fields == []


MEMORY_SCRIPTS = {
    "allocates": (
        "b = bytearray(200 * 1024 * 1024)\nfor i in range(0, len(b), 4096):\n    b[i] = 1\n"),
    "writes to /scratch": (
        "with open('/scratch/big.bin', 'wb') as f:\n"
        "    for _ in range(200):\n        f.write(b'x' * (1024 * 1024))\n"),
}
PROTOCOL_LINE = (
    'import json\nprint(json.dumps({"status": "success", "summary": "ok", "result": {}}))\n')


@pytest.mark.parametrize("kind", sorted(MEMORY_SCRIPTS))
def test_peak_memory_counts_what_the_run_held(real_sandbox, kind):
    limits = SandboxLimits(memory_mib=1024, scratch_mib=512)
    small = real_sandbox.run(PROTOCOL_LINE, [], limits)
    big = real_sandbox.run(MEMORY_SCRIPTS[kind] + PROTOCOL_LINE, [], limits)
    assert small.status == big.status == "success", big.error
    assert big.peak_memory_mib >= small.peak_memory_mib + 190, (small, big)


def test_peak_memory_is_the_sandboxed_process_not_the_host(real_sandbox):
    import numpy as np

    host_ballast = np.ones(300 * 1024 * 1024 // 8)  # the host holds 300 MiB more than usual
    outcome = real_sandbox.run(PROTOCOL_LINE, [], SandboxLimits(memory_mib=1024))
    assert outcome.status == "success" and host_ballast[0] == 1
    # a Python that imports json holds a few tens of MiB, never the host's hundreds
    assert 0 < outcome.peak_memory_mib < 100, outcome.peak_memory_mib
