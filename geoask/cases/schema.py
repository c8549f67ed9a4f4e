"""The JSON Schema of a benchmark case file, generated from :class:`geoask.cases.model.CaseFile`.

Run ``python -m geoask.cases.schema`` to rewrite ``benchmark/case.schema.json`` (and
``benchmark/conversation.schema.json``, of :class:`geoask.cases.conversations.ConversationFile`)
after changing the models; a test fails while a file and its model disagree.
"""

from __future__ import annotations

import json
from typing import Any

from geoask.cases.loader import SCHEMA_PATH
from geoask.cases.model import CaseFile

SCHEMA_ID = "https://github.com/geoask/geoask/benchmark/case.schema.json"


def generated_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a case file, from the pydantic model."""
    schema = CaseFile.model_json_schema()
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "geoask benchmark case file",
        **{key: value for key, value in schema.items() if key != "title"},
    }


def schema_text() -> str:
    """The schema as the text stored in ``benchmark/case.schema.json``."""
    return json.dumps(generated_schema(), indent=2, ensure_ascii=False) + "\n"


def conversation_schema_text() -> str:
    """The schema stored in ``benchmark/conversation.schema.json``."""
    from geoask.cases.conversations import conversation_schema

    return json.dumps(conversation_schema(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    from geoask.cases.conversations import CONVERSATION_SCHEMA_PATH

    SCHEMA_PATH.write_text(schema_text(), encoding="utf-8")
    CONVERSATION_SCHEMA_PATH.write_text(conversation_schema_text(), encoding="utf-8")
    print(f"wrote {SCHEMA_PATH} and {CONVERSATION_SCHEMA_PATH}")
