"""Agent tests run offline: no real model request may leave the process."""

from __future__ import annotations

import pytest
from pydantic_ai import models

models.ALLOW_MODEL_REQUESTS = False


@pytest.fixture(autouse=True)
def _no_model_requests():
    models.ALLOW_MODEL_REQUESTS = False
    yield
