"""The Python API: ``from geoask import ask`` - a cheap import, clear errors, the typed result.

The end-to-end test runs a benchmark question with the offline ``reference`` model through the
same composition root as ``geoask ask`` (database, guard, sandbox, review and answer checks run
for real) and checks the result's answer, its artifacts (intent, plan, both maps) and its
notebook and terminal views.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import geoask
from geoask.base.result_view import result_text
from geoask.cases.loader import DEFAULT_CASES_DIR, load_cases
from geoask.errors import ConfigurationError
from geoask.settings import get_settings

HEAVY = ("prefect", "geopandas", "pydantic_ai", "chromadb", "psycopg", "shapely", "flows")
CASE = next(item.case for item in load_cases(DEFAULT_CASES_DIR, ())
            if item.case.id == "airports-024")


@pytest.mark.parametrize("statement", ["import geoask", "from geoask import ask"])
def test_importing_geoask_and_its_api_pulls_in_no_heavy_library(statement):
    probe = (f"import sys; {statement}; "
             f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}))")
    completed = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                               check=True, timeout=60)
    assert completed.stdout.strip() == "[]", completed.stdout


def test_the_package_offers_ask_and_nothing_it_does_not_have():
    from geoask.app.api import ask, ask_async

    assert geoask.ask is ask and "ask" in geoask.__all__
    assert geoask.ask_async is ask_async and "ask_async" in geoask.__all__
    with pytest.raises(AttributeError, match="no attribute 'asks'"):
        _ = geoask.asks  # type: ignore[attr-defined]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"question": "   "}, "the question is empty"),
    ({"question": "How many airports \udcff in Texas?"}, "not valid UTF-8"),
    ({"question": "How many airports?", "variant": "WEIRD"}, "unknown variant 'WEIRD'"),
    ({"question": 123}, "question must be text (str), not int"),
    ({"question": b"How many airports?"}, "question must be text (str), not bytes"),
    ({"question": "How many airports?", "variant": 5}, "variant must be text (str), not int"),
    ({"question": "How many airports?", "variant": ["FULL"]}, "variant must be text (str)"),
    ({"question": "How many airports?", "model": 42}, "model must be text (str), not int"),
    ({"question": "How many airports\x00 in Texas?"}, "contains a NUL character"),
    ({"question": "How many airports? " * 300}, "at most 4,096 are accepted"),
    ({"question": "How many airports? " * 300, "via_api": True}, "at most 4,096 are accepted"),
])
def test_bad_input_is_a_clear_configuration_error(kwargs, message):
    kwargs = {"model": "reference", **kwargs}
    with pytest.raises(ConfigurationError, match=re.escape(message)):
        geoask.ask(**kwargs)


def test_inside_a_running_event_loop_ask_and_ask_async_run_and_raise_as_in_a_script():
    async def both() -> list[str]:
        messages = []
        for call in (lambda: geoask.ask("   ", model="reference"),
                     lambda: asyncio.wait_for(geoask.ask_async("   ", model="reference"), 60)):
            with pytest.raises(ConfigurationError) as caught:
                outcome = call()
                if asyncio.iscoroutine(outcome):
                    await outcome
            messages.append(str(caught.value))
        return messages

    assert asyncio.run(both()) == ["the question is empty; ask something about the data"] * 2


def test_without_a_model_ask_says_what_to_set(monkeypatch):
    monkeypatch.delenv("GEOASK_MODEL", raising=False)
    get_settings.cache_clear()
    try:
        with pytest.raises(ConfigurationError, match="GEOASK_MODEL") as caught:
            geoask.ask("How many airports are in Texas?")
        assert "--model reference" in str(caught.value)
    finally:
        get_settings.cache_clear()


@pytest.mark.db
@pytest.mark.sandbox
def test_ask_returns_the_typed_result_with_its_maps_and_views(api_settings):
    result = geoask.ask(CASE.question, model="reference")
    assert result.status == "answered", result.message
    assert result.answer is not None and result.answer.answer_type.value == "entity_list"
    ids = sorted(entity["id"] for entity in result.answer.data_payload["entities"])
    assert ids == sorted(CASE.expected.value)
    folder = Path(result.artifact_folder)
    assert folder.parent == Path(api_settings.artifact_root) and folder.name == result.run_id
    assert json.loads((folder / "intent.json").read_text())["operation"]
    assert json.loads((folder / "plan-1.json").read_text())["answer_type"] == "entity_list"
    assert result.maps == [str(folder / "map.png"), str(folder / "map.html")]
    page = (folder / "map.html").read_text(encoding="utf-8")
    layers = json.loads(re.search(r'id="geoask-layers">(.*?)</script>', page).group(1))
    answer_layer = [layer for layer in layers if layer["answer"]]
    assert [sorted(f["properties"]["iata"] for f in layer["data"]["features"])
            for layer in answer_layer] == [ids]
    context = {f["properties"]["iata"] for layer in layers if not layer["answer"]
               for f in layer["data"]["features"] if "iata" in f["properties"]}
    # RDU and the candidates its bounding-box screen fetched: a strict superset of the answer
    assert "RDU" in context and set(ids) < context - {"RDU"}

    assert repr(result) == result_text(result) and result.message in repr(result)
    view = result._repr_html_()
    assert all(f"<td>{code}</td>" in view for code in ids)
    assert 'src="data:image/png;base64,' in view and "interactive map" in view
