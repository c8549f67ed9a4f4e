"""parse_protocol against the table in tests/fixtures/sandbox/protocol_cases.yaml."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from sandbox.protocol import ProtocolViolation, parse_protocol

CASES = yaml.safe_load(
    (Path(__file__).resolve().parents[1] / "fixtures" / "sandbox" / "protocol_cases.yaml")
    .read_text()
)


def test_table_has_valid_and_invalid_cases() -> None:
    assert any("valid" in case for case in CASES) and any("invalid" in case for case in CASES)


@pytest.mark.parametrize("case", CASES, ids=[case["title"] for case in CASES])
def test_protocol_case(case: dict) -> None:
    if "valid" in case:
        assert parse_protocol(case["stdout"]).model_dump() == case["valid"]
    else:
        with pytest.raises(ProtocolViolation) as raised:
            parse_protocol(case["stdout"])
        assert case["invalid"] in str(raised.value)
