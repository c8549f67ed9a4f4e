"""The long-lived heap of a process geoask owns, kept out of the cyclic garbage collector.

A geoask command holds 150,000-200,000 objects once its libraries are imported and its parts
built (Prefect, pydantic, sqlglot, geopandas, the catalog, the guard's function lists). They
live as long as the process, yet every full collection walks them all: 0.22 s a time, paid
whenever a result of a few thousand rows is fetched and exported (each row a tuple, each value
a geometry: the allocations that trigger collections) - three times the whole time PostgreSQL
takes to answer an index-backed question. :func:`settle` collects once, then freezes what is
alive (``gc.freeze``): later collections walk only what was made after, and a frozen object is
still freed when its last reference goes (one held only by a reference cycle is not: what is
alive at that point is the process's parts, kept to its end).

Only inside :func:`owned` - the command line's ``main()``, the benchmark scripts that stand for
it - does :func:`settle` act; leaving the block unfreezes. In a notebook calling ``ask()``, or a
test calling ``main()`` in its own process, the heap is the caller's, whose objects must stay
collectable.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

_state = {"owned": False, "settled": False}


@contextmanager
def owned() -> Iterator[None]:
    """The process is geoask's for the block: :func:`settle` acts; unfrozen when it ends."""
    _state["owned"] = True
    try:
        yield
    finally:
        _state["owned"] = False
        if _state["settled"]:
            _state["settled"] = False
            gc.unfreeze()


def settle() -> None:
    """Collect, then freeze what is alive, once per :func:`owned` block (a no-op outside one).

    Called when a run's long-lived parts have been built
    (:func:`geoask.run.composition.open_parts`, :func:`~geoask.run.composition.program_runner`).
    """
    if _state["owned"] and not _state["settled"]:
        _state["settled"] = True
        gc.collect()
        gc.freeze()
