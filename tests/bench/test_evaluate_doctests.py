"""The examples in the evaluator's, metrics' and report's docstrings run and hold."""

import doctest
import importlib

import pytest

EVALUATOR = ["geoask.bench.evaluate", "geoask.bench.evaluate.units",
             "geoask.bench.evaluate.values", "geoask.bench.evaluate.entities",
             "geoask.bench.evaluate.answer_types", "geoask.bench.evaluate.causes"]


@pytest.mark.parametrize("name", [*EVALUATOR, "geoask.bench.metrics", "geoask.bench.report"])
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0
    if name != "geoask.bench.report":
        assert result.attempted > 0
