"""The docstring examples of the sandbox modules hold (the session's fake, cell rules, protocol)."""

import doctest
import importlib

import pytest

MODULES = ["sandbox.fake", "sandbox.cells", "sandbox.protocol", "sandbox.diagnosis",
           "sandbox.models", "sandbox.host"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0
    assert result.failed == 0
