"""The long-lived heap of a process geoask owns, kept out of the cyclic garbage collector.

A geoask command holds 150,000-200,000 objects once its libraries are imported and its parts
built (Prefect, pydantic, sqlglot, geopandas, the catalog, the guard's function lists). They
live as long as the process, yet every full collection walks them all: 0.22 s a time, paid
whenever a result of a few thousand rows is fetched and exported (each row a tuple, each value
a geometry: the allocations that trigger collections) - three times the whole time PostgreSQL
takes to answer an index-backed question. :func:`settle` collects once, then freezes what is
alive (``gc.freeze``): later collections walk only what was made after, and the frozen objects
are still freed when their last reference goes.

Only a process geoask owns settles (:func:`own_process`: the command line, the benchmark
scripts that stand for it): in a notebook calling ``ask()`` the heap is the user's, whose
objects must stay collectable.
"""

from __future__ import annotations

import gc

_state = {"owned": False, "settled": False}


def own_process() -> None:
    """Declare this process geoask's own (its entry point calls this): :func:`settle` acts."""
    _state["owned"] = True


def settle() -> None:
    """Collect, then freeze what is alive, once per owned process (a no-op otherwise).

    Called when a run's long-lived parts have been built
    (:func:`geoask.run.composition.open_parts`, :func:`~geoask.run.composition.program_runner`).
    """
    if _state["owned"] and not _state["settled"]:
        _state["settled"] = True
        gc.collect()
        gc.freeze()
