"""Fixtures of the browser test: the shared `geoask server` of tests/service, and Chromium."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service"))

import harness

CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture(scope="session")
def chromium() -> Path:
    """Debian's Chromium; the test is skipped only when it is not installed."""
    if not CHROMIUM.exists() or shutil.which(str(CHROMIUM)) is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium; "
                    "`make setup` installs it)")
    return CHROMIUM


@pytest.fixture(scope="session")
def served(database) -> Iterator[harness.Served]:
    """`geoask server` on a free port with answer-question = the scripted flow (shared)."""
    harness.require_sandbox()
    try:
        yield harness.acquire()
    finally:
        harness.release()


@pytest.fixture
def page(chromium, tmp_path):
    """A headless Chromium page (its own profile under tmp_path), closed afterwards.

    Logged in to the shared server's dashboard when one runs (request ``served`` first): the
    Prefect UI keeps the API's basic-authentication secret in local storage, as a person's
    browser does after its password form.
    """
    from playwright.sync_api import sync_playwright
    from test_dashboard import CHROMIUM_ARGS

    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"), executable_path=str(chromium), headless=True,
            args=CHROMIUM_ARGS, viewport={"width": 1400, "height": 1000})
        if harness._served is not None and (auth := harness._served.headers):
            token = auth["Authorization"].removeprefix("Basic ")
            context.add_init_script(f"localStorage.setItem('prefect-password', '{token}')")
        try:
            yield context.new_page()
        finally:
            context.close()
