"""The catalog in one line per table: what the intent and REACT agents read about the database."""

from __future__ import annotations

from geoask.catalog.model import Catalog


def catalog_summary(catalog: Catalog) -> str:
    """One line per table: name, title, spatial and temporal granularity, coverage.

    The coverage is left out when the title already names its first year.
    """
    lines = []
    for table in catalog.tables:
        span = table.temporal_coverage
        coverage = (f", {span.start} to {span.end}"
                    if span and span.start[:4] not in table.title else "")
        lines.append(f"{table.name}: {table.title} ({table.spatial_granularity!s}; "
                     f"{table.temporal_granularity!s}{coverage})")
    return "\n".join(lines)
