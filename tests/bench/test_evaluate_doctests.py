"""The examples in the docstrings of the evaluator, reference model, metrics, report and a
benchmark run's parameters hold."""

import doctest
import importlib

import pytest

EVALUATOR = ["geoask.bench.evaluate", "geoask.bench.evaluate.units",
             "geoask.bench.evaluate.values", "geoask.bench.evaluate.entities",
             "geoask.bench.evaluate.answer_types", "geoask.bench.evaluate.causes"]
REFERENCE = ["geoask.cases.steps", "geoask.models.reference.intent",
             "geoask.models.reference.answer", "geoask.models.reference.faults",
             "geoask.models.reference.replay"]


@pytest.mark.parametrize("name", [*EVALUATOR, *REFERENCE, "geoask.bench.metrics",
                                  "geoask.bench.report", "geoask.bench.parameters"])
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.failed == 0
    if name != "geoask.bench.report":
        assert result.attempted > 0
