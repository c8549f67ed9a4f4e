"""The startup heap is frozen out of the collector only in a process geoask owns, once."""

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


def test_an_owned_process_freezes_what_is_alive_once(fresh_state):
    heap.own_process()
    heap.settle()
    frozen = gc.get_freeze_count()
    assert frozen > 1000
    later = [[] for _ in range(100)]
    heap.settle()  # the second run's parts: what was made since stays collectable
    assert gc.get_freeze_count() == frozen and later


def test_the_command_line_owns_its_process_and_a_program_runner_settles_it():
    code = (
        "import gc, sys\n"
        "from geoask.app import cli\n"
        "from geoask.run.composition import program_runner\n"
        "from geoask.settings import get_settings\n"
        "sys.argv = ['geoask', '--help']\n"
        "try:\n"
        "    cli.main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "program_runner(get_settings())\n"
        "print(gc.get_freeze_count())\n"
    )
    owned = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True)
    library = subprocess.run(
        [sys.executable, "-c", code.replace("    cli.main()\n", "    pass\n")],
        capture_output=True, text=True, check=True)
    assert int(owned.stdout.split()[-1]) > 10_000
    assert int(library.stdout.split()[-1]) == 0
