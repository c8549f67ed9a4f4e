"""The startup heap is frozen out of the collector only while geoask owns the process, once."""

from __future__ import annotations

import gc
import subprocess
import sys

import pytest

from geoask.base import heap


@pytest.fixture
def fresh_state(monkeypatch):
    monkeypatch.setattr(heap, "_state", {"owned": False, "settled": False})
    yield
    gc.unfreeze()


def test_a_process_not_owned_is_left_alone(fresh_state):
    before = gc.get_freeze_count()
    heap.settle()
    assert gc.get_freeze_count() == before


def test_an_owned_block_freezes_what_is_alive_once_and_unfreezes_at_its_end(fresh_state):
    with heap.owned():
        heap.settle()
        frozen = gc.get_freeze_count()
        assert frozen > 1000
        later = [[] for _ in range(100)]
        heap.settle()  # the second run's parts: what was made since stays collectable
        # (frozen objects may still die meanwhile: the count can only go down)
        assert gc.get_freeze_count() <= frozen
        assert any(item is later for item in gc.get_objects())
    assert gc.get_freeze_count() == 0
    heap.settle()  # outside the block again: the caller's heap
    assert gc.get_freeze_count() == 0


def test_a_failure_inside_the_block_still_gives_the_heap_back(fresh_state):
    with pytest.raises(SystemExit), heap.owned():
        heap.settle()
        sys.exit(3)
    assert gc.get_freeze_count() == 0 and not heap._state["owned"]


PROBE = (
    "import gc, sys\n"
    "from geoask.app import cli\n"
    "from geoask.base import heap\n"
    "from geoask.run.composition import program_runner\n"
    "from geoask.settings import get_settings\n"
    "original = heap.settle\n"
    "def settle():\n"
    "    original()\n"
    "    print('frozen', gc.get_freeze_count())\n"
    "heap.settle = settle\n"
    "cli.app = lambda: program_runner(get_settings())\n"
    "cli.main()\n"
    "program_runner(get_settings())  # a library caller after the command, as a test would be\n"
    "print('after', gc.get_freeze_count(), heap._state['owned'])\n"
)


def test_the_command_line_owns_its_process_only_while_it_runs():
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                          check=True)
    lines = done.stdout.split("\n")
    assert int(lines[0].split()[1]) > 10_000  # frozen while the command ran
    assert lines[1] == "frozen 0"  # the later library call froze nothing
    assert lines[2] == "after 0 False"
