"""Prefect options every geoask task shares.

A task's return value goes to the next task in the same process, never through the API: it
is not cached between runs (a question or a load is never answered from an old run) and
not persisted, also where ``PREFECT_RESULTS_PERSIST_BY_DEFAULT`` is on (the processes of
``geoask server``, so an API caller can read a served flow run's return value: only the flow
run's result is written to ``<home>/prefect/storage``, not a pickle per stage).
"""

from __future__ import annotations

from typing import Any

from prefect.cache_policies import NO_CACHE

from geoask.models.retry import TRANSIENT_RETRIES

TASK: dict[str, Any] = {"cache_policy": NO_CACHE, "persist_result": False}
"""Options of every task: never cached, result never persisted."""

RETRIED_TASK: dict[str, Any] = {**TASK, **TRANSIENT_RETRIES}
"""Options of a task that talks to the database: :data:`TASK` plus transient retries."""
