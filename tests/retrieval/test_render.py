"""Rendering of schema subsets for prompts, on the real catalog."""

from __future__ import annotations

import pytest

from geoask.catalog.model import load_catalog
from geoask.retrieval.render import outline_block, render_catalog
from geoask.settings import get_settings

CATALOG = load_catalog(get_settings().catalog_path)


def test_each_abbreviation_is_explained_once():
    text = render_catalog(CATALOG)
    fips_columns = [c for t in CATALOG.tables for c in t.columns if "FIPS" in c.abbreviations]
    assert len(fips_columns) > 1  # several tables use FIPS codes
    assert text.count("FIPS = Federal Information Processing Standards") == 1
    assert text.rstrip().splitlines()[-1].startswith("Abbreviations: ")


@pytest.mark.parametrize("table", [t.name for t in CATALOG.tables])
def test_outline_lists_kept_columns_without_meanings(table):
    t = CATALOG.table(table)
    kept = [c.name for c in t.columns[:2]]
    lines = outline_block("demo", t, kept).splitlines()
    assert lines[0].startswith(f"demo.{table}: {t.title} [")
    assert [line.split()[0] for line in lines[1:1 + len(kept)]] == kept
    text = "\n".join(lines)
    assert not any(c.description in text for c in t.columns[:2])  # no meanings
    assert t.theme not in text
    if len(t.columns) > 2:
        assert lines[-1] == f"  ({len(t.columns) - 2} more columns not shown)"
