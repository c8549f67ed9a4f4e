"""AskResult without a run: it prints as ``geoask ask`` does, and refuses a missing folder."""

from __future__ import annotations

import pytest

from geoask.app.result import AskResult
from geoask.base.result_view import result_text
from geoask.errors import ConfigurationError
from geoask.vocabulary.answers import FinalAnswer


def result(tmp_path) -> AskResult:
    answer = FinalAnswer(answer_type="scalar", summary="209 airports",
                         data_payload={"value": 209})
    return AskResult(status="answered", answer=answer, message="209 airports in Texas",
                     evidence=["sql-1: texas: 1 rows"], run_id="run-1",
                     artifact_folder=str(tmp_path))


def test_print_shows_the_report_geoask_ask_prints(tmp_path, capsys):
    asked = result(tmp_path)
    print(asked)
    printed = capsys.readouterr().out
    assert printed == result_text(asked) + "\n"
    assert "209" in printed and "evidence:" in printed and f"artifacts: {tmp_path}" in printed


def test_to_geopackage_refuses_a_missing_folder_and_creates_none(tmp_path):
    missing = tmp_path / "nonexistent" / "dir"
    with pytest.raises(ConfigurationError, match="does not exist; create it first") as caught:
        result(tmp_path).to_geopackage(str(missing / "x.gpkg"))
    assert str(missing) in str(caught.value) and "\n" not in str(caught.value)
    assert not (tmp_path / "nonexistent").exists()
