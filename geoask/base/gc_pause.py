"""Pause Python's cyclic garbage collector while a step builds many small acyclic objects.

Fetching and exporting a result of a few thousand geometries creates hundreds of thousands of
tuples, lists and dicts (rows, coordinates, GeoJSON members) that hold no reference cycles:
reference counting frees them. Each allocation burst still triggers the cyclic collector, whose
full collections walk every object of a process that has imported pyproj, shapely, pandas and
the models - a third of the GeoJSON export's time for 5,862 screened road segments of the scale
database (117 -> 78 ms, the export alone; ``benchmark/scale_breakdown.py`` shows the phases).
:func:`gc_paused` turns the collector off for such a block and back on when the last concurrent
block ends; cyclic garbage made meanwhile is collected then.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_holders = 0
_was_enabled = False


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic collector off inside the block (blocks nest and overlap across threads).

    >>> with gc_paused():
    ...     gc.isenabled()
    False
    """
    global _holders, _was_enabled
    with _lock:
        if _holders == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _holders += 1
    try:
        yield
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0 and _was_enabled:
                gc.enable()
