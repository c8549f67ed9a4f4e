"""The examples in the evaluator's, metrics' and report's docstrings run and hold."""

import doctest
import importlib

import pytest


@pytest.mark.parametrize("name", ["geoask.bench.evaluate", "geoask.bench.metrics",
                                  "geoask.bench.report"])
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0
    if name != "geoask.bench.report":
        assert result.attempted > 0
