"""The examples in the guard's docstrings are true."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import geoask.sql
import geoask.sql.rules

MODULES = sorted(
    {
        f"{package.__name__}.{info.name}"
        for package in (geoask.sql, geoask.sql.rules)
        for info in pkgutil.iter_modules(package.__path__)
        if info.name != "cli"
    }
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    failures, _attempted = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert failures == 0


def test_every_rule_module_has_an_example():
    for info in pkgutil.iter_modules(geoask.sql.rules.__path__):
        module = importlib.import_module(f"geoask.sql.rules.{info.name}")
        rule = getattr(module, info.name)
        assert ">>>" in (rule.__doc__ or ""), info.name
