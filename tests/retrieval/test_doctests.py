import doctest
import importlib

import pytest

MODULES = ["geoask.retrieval.retriever", "geoask.retrieval.documents", "geoask.retrieval.render",
           "geoask.retrieval.filters"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0
    assert result.failed == 0
