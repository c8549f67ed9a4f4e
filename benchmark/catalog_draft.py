"""Run: ``python benchmark/catalog_draft.py [--database geoask_scale ...] [--sample-budget S]``.

Times ``geoask catalog draft`` (:func:`geoask.catalog.draft.draft_catalog`, as the reader role,
the statement timeout and per-relation budget of the settings or ``--sample-budget``) on each
``--database`` of the embedded cluster: the whole scale database (``geoask_scale``: 265 tables,
2*10^6 points; ``benchmark/scale.py`` loads it) and a database holding a 10^7-row point table.
Prints per database the wall time, tables, join paths, how many row counts are estimates, how
many relations ran out of their budget, and the slowest relations (``--slowest``), each timed
by wrapping the draft's per-relation step.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from geoask.catalog import draft
from geoask.db.urls import reader_url_for_database
from geoask.settings import get_settings


def timed_tables(spent: dict[str, float]) -> Callable[..., Any]:
    """The draft's per-relation step, recording each relation's seconds into ``spent``."""
    inner = draft._table

    def wrapper(conn: Any, rel: Any, *args: Any) -> Any:
        started = time.perf_counter()
        try:
            return inner(conn, rel, *args)
        finally:
            spent[f"{rel.schema}.{rel.name}"] = time.perf_counter() - started

    return wrapper


def main() -> None:
    """Draft each database once and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", nargs="+", default=["geoask_scale"])
    parser.add_argument("--sample-budget", type=float, default=None)
    parser.add_argument("--slowest", type=int, default=5)
    args = parser.parse_args()
    settings = get_settings()
    budget = args.sample_budget or settings.catalog_sample_budget_s
    for database in args.database:
        spent: dict[str, float] = {}
        draft._table = timed_tables(spent)
        started = time.perf_counter()
        catalog = draft.draft_catalog(reader_url_for_database(settings, database),
                                      timeout_s=settings.statement_timeout_s,
                                      sample_budget_s=budget)
        seconds = time.perf_counter() - started
        estimated = sum(1 for t in catalog.tables if t.rows_estimated)
        stopped = sum(1 for t in catalog.tables if t.notes)
        print(f"{database}: {seconds:.1f} s, {len(catalog.tables)} tables, "
              f"{len(catalog.join_paths)} join paths, {estimated} row counts estimated, "
              f"{stopped} relations past their {budget:g} s budget; per-relation statistics "
              f"{sum(spent.values()):.1f} s, joins and the rest "
              f"{seconds - sum(spent.values()):.1f} s")
        for name, took in sorted(spent.items(), key=lambda kv: -kv[1])[:args.slowest]:
            table = next(t for t in catalog.tables if name.endswith(f".{t.name}"))
            print(f"  {name}: {took:.2f} s, expected_rows {table.expected_rows}"
                  f"{' (estimate)' if table.rows_estimated else ''}")


if __name__ == "__main__":
    main()
