"""Shared fixtures for sandbox tests: the real sandbox (skipped without bwrap/root/runtime)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from geoask.settings import Settings
from sandbox.bubblewrap import BubblewrapSandbox
from sandbox.runtime import ensure_runtime

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sandbox"


@pytest.fixture(scope="session")
def sandbox_settings(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Settings]:
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed (apt-get install bubblewrap)")
    if os.geteuid() != 0:
        pytest.skip("the sandbox must be started as root")
    settings = Settings()
    # Build once (idempotent; fast when current) so a fresh clone's test run works too.
    ensure_runtime(settings.sandbox_runtime_path, settings.sandbox_base_python)
    # pytest's tmp folders are mode 0700; the sandbox's uid must traverse the work folder.
    work = Path("/tmp") / f"geoask-sandbox-tests-{os.getpid()}"
    artifacts = tmp_path_factory.mktemp("sandbox-artifacts")
    # no runs kept ready (test_ready.py asks for them): each test sees only its own runs
    yield settings.model_copy(update={
        "sandbox_work_dir": work, "sandbox_artifacts_url": str(artifacts), "sandbox_ready": 0,
    })
    shutil.rmtree(work, ignore_errors=True)


@pytest.fixture(scope="session")
def real_sandbox(sandbox_settings: Settings) -> BubblewrapSandbox:
    return BubblewrapSandbox.from_settings(sandbox_settings)
