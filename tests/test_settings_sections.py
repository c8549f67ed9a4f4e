"""A part's configuration is read from its settings group by name (Settings.values_for)."""

from __future__ import annotations

import dataclasses
import doctest

import pytest

import geoask.settings
from geoask.retrieval.retriever import RetrievalConfig
from geoask.run.state import Limits
from geoask.settings import Settings
from sandbox.models import SandboxLimits

# (part, its settings prefix, the fields that have a setting)
SECTIONS = [
    (Limits, "flow_", {"max_step_attempts", "max_repairs", "max_replans", "max_step_runs"}),
    (SandboxLimits, "sandbox_", {"memory_mib", "cpu_s", "timeout_s", "file_size_mib",
                                 "open_files", "max_tasks", "tmp_mib", "scratch_mib"}),
    (RetrievalConfig, "retrieval_", {"alpha", "max_tables", "min_relative_score",
                                     "min_ranked_tables", "lexical_weight", "lexical_keep",
                                     "column_margin", "cache_size"}),
]


def _field_names(part: type) -> list[str]:
    if dataclasses.is_dataclass(part):
        return [field.name for field in dataclasses.fields(part)]
    return list(part.model_fields)  # type: ignore[attr-defined]


@pytest.mark.parametrize(("part", "prefix", "read"), SECTIONS,
                         ids=[part.__name__ for part, _, _ in SECTIONS])
def test_each_part_reads_exactly_its_settings(part, prefix, read):
    assert set(Settings().values_for(prefix, _field_names(part))) == read


@pytest.mark.parametrize(("part", "prefix", "read"), SECTIONS,
                         ids=[part.__name__ for part, _, _ in SECTIONS])
def test_a_changed_setting_reaches_the_part(part, prefix, read):
    defaults = Settings()
    for name in sorted(read):
        value = getattr(defaults, prefix + name)
        changed = (value - 1 if value > 1 else value + 1) if isinstance(value, int) else (
            round(value * 0.9 + 0.1, 3))
        settings = defaults.model_copy(update={prefix + name: changed})
        assert getattr(part.from_settings(settings), name) == changed, name


def test_values_for_examples():
    failures, attempted = doctest.testmod(geoask.settings, verbose=False)[:2]
    assert attempted > 0 and failures == 0
