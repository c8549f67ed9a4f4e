"""`geoask bench verify` on a handful of shipped cases against the real PostGIS and sandbox."""

from __future__ import annotations

import shutil

import pytest
import yaml
from typer.testing import CliRunner

from geoask.app.cli import app
from geoask.cases.loader import DEFAULT_CASES_DIR

pytestmark = [pytest.mark.db, pytest.mark.sandbox]

HANDFUL = ["airports-001", "airports-004", "airports-005", "airports-006"]


@pytest.fixture
def ready(database):
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    return database


def test_verify_passes_on_shipped_cases(ready):
    args = ["bench", "verify", "--cases", str(DEFAULT_CASES_DIR / "airports.yaml")]
    for case_id in HANDFUL:
        args += ["--only", case_id]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert f"{len(HANDFUL)}/{len(HANDFUL)} cases verified" in result.output
    assert "airports-005 + cross-check" in result.output


def test_verify_fails_on_a_wrong_expected_value(ready, tmp_path):
    raw = yaml.safe_load((DEFAULT_CASES_DIR / "airports.yaml").read_text())
    case = next(c for c in raw["cases"] if c["id"] == "airports-005")
    case["expected"]["value"] += 1
    path = tmp_path / "wrong.yaml"
    path.write_text(yaml.safe_dump({"cases": [case]}))
    result = CliRunner().invoke(app, ["bench", "verify", "--cases", str(path)])
    assert result.exit_code == 1
    assert "FAIL airports-005" in result.output
    assert "reference disagrees" in result.output and "cross-check" in result.output
    assert "0/1 cases verified" in result.output
