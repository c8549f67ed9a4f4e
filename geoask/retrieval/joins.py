"""Join-path completion: bring in the tables that retrieved tables reference by foreign key.

An attribute table (``state_income_annual``) is useless without the geometry table it keys
into (``us_states``); completion follows foreign keys from each retrieved table, breadth-first,
up to ``max_depth`` hops, and stops at the table budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from geoask.catalog.model import Catalog


@dataclass(frozen=True)
class SelectedTable:
    """A table of the subset; ``joined_from`` names the table whose foreign key brought it in."""

    name: str
    joined_from: str | None = None

    @property
    def joined_in(self) -> bool:
        """True for a table added by join-path completion rather than by ranking."""
        return self.joined_from is not None


def fk_closure(catalog: Catalog, start: str, max_depth: int = 3) -> list[tuple[str, str]]:
    """Tables reachable from ``start`` along foreign keys within ``max_depth`` hops.

    Returns (table, referencing table) pairs in breadth-first order, ``start`` excluded.
    """
    seen = {start}
    frontier = [start]
    out: list[tuple[str, str]] = []
    for _ in range(max_depth):
        next_frontier = []
        for name in frontier:
            for fk in catalog.table(name).foreign_keys:
                if fk.ref_table not in seen:
                    seen.add(fk.ref_table)
                    out.append((fk.ref_table, name))
                    next_frontier.append(fk.ref_table)
        frontier = next_frontier
    return out


def complete_join_paths(
    catalog: Catalog, ranked: Sequence[str], max_tables: int, max_depth: int = 3
) -> list[SelectedTable]:
    """Select ``ranked`` tables in order, each with its foreign-key closure, within ``max_tables``.

    A ranked table whose closure does not fit is skipped (a later, smaller one may fit); the
    first ranked table is always kept, with as much of its closure as fits. A ranked table that
    was already joined in is upgraded to retrieved.
    """
    selected: dict[str, SelectedTable] = {}
    for name in ranked:
        if name in selected:
            selected[name] = SelectedTable(name)
            continue
        closure = [(t, via) for t, via in fk_closure(catalog, name, max_depth)
                   if t not in selected]
        if selected and len(selected) + 1 + len(closure) > max_tables:
            continue
        if len(selected) >= max_tables:
            break
        selected[name] = SelectedTable(name)
        for table, via in closure:
            if len(selected) >= max_tables:
                break
            selected[table] = SelectedTable(table, joined_from=via)
    return list(selected.values())
