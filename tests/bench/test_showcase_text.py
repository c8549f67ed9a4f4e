"""``geoask bench showcase`` prints the terminal answer, not the raw payload; ``--json`` both."""

from __future__ import annotations

import json

from geoask.bench.runs import CaseRun
from geoask.bench.showcase import showcase_text

PAYLOAD = {"items": [{"rank": 1, "id": "CT", "value": 40640.123456789},
                     {"rank": 2, "id": "MA", "value": 37992.5}], "unit": "USD"}


def run(**changes) -> CaseRun:
    return CaseRun(case_id="states-006", variant="FULL", repeat=0, model="reference",
                   status="answered", time_s=1.25, message="CT\x1b]0;x\x07 is first.",
                   answer={"answer_type": "ranked_list", "data_payload": PAYLOAD,
                           "summary": "CT is first."},
                   evidence=["sql-1: top_2000: 2 rows"], names={"CT": "Connecticut"},
                   artifact_folder="/runs/r", **changes)


def test_the_showcase_reads_as_the_terminal_answer_with_names_and_rounded_values():
    lines = showcase_text("Top states?", run()).splitlines()
    assert lines[1:3] == ["=== states-006: Top states?", "status answered in 1.2 s"]
    table = lines[lines.index("answer (ranked_list):") + 1:][:3]
    assert [row.split() for row in table] == [["rank", "id", "name", "value", "[USD]"],
                                              ["1", "CT", "Connecticut", "40640.12"],
                                              ["2", "MA", "37992.5"]]
    text = "\n".join(lines)
    assert "40640.123456789" not in text and '"data_payload"' not in text
    assert "\\x1b]0;x\\x07" in text and "\x1b" not in text  # escapes shown, not run


def test_json_keeps_the_full_precision_payload():
    text = showcase_text("Top states?", run(), as_json=True)
    start = text.index("{")
    end = text.index("\nevidence trail:")
    assert json.loads(text[start:end])["data_payload"] == PAYLOAD
