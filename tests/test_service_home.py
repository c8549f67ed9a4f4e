"""State used by other OS users lands where they can reach it."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from geoask.settings import SHARED_STATE_ROOT, searchable_by_others, service_home_for


def test_searchable_folder_is_used_as_is():
    folder = Path(tempfile.mkdtemp(dir="/tmp"))  # pytest's tmp_path lies under a 0700 folder
    try:
        folder.chmod(0o755)
        assert searchable_by_others(folder / "not-yet-created")
        assert service_home_for(folder / "home") == folder / "home"
    finally:
        shutil.rmtree(folder)


@pytest.mark.skipif(os.geteuid() != 0, reason="the stand-in folder is only used as root")
def test_unreachable_folder_gets_a_stable_stand_in(tmp_path):
    closed = tmp_path / "closed"
    closed.mkdir(mode=0o700)
    home = closed / "project" / ".geoask"
    assert not searchable_by_others(home)
    stand_in = service_home_for(home)
    assert stand_in.parent == SHARED_STATE_ROOT
    assert stand_in == service_home_for(home)  # stable
    assert stand_in != service_home_for(closed / "other" / ".geoask")
