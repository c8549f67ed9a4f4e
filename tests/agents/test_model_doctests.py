"""The docstring examples of the model modules run (output modes, transcript redaction)."""

from __future__ import annotations

import doctest

import pytest

import geoask.models.output_modes
import geoask.models.transcripts


@pytest.mark.parametrize("module", [geoask.models.output_modes, geoask.models.transcripts])
def test_docstring_examples(module):
    failures, attempted = doctest.testmod(module, verbose=False)[:2]
    assert attempted > 0 and failures == 0
