"""Prefect artifacts posted in the background: same keys and runs, nothing lost, never fatal."""

from __future__ import annotations

import logging

import pytest

from geoask.records.artifact_publisher import ArtifactPublisher, flush
from geoask.records.run_artifacts import Markdown, publish_markdown, publish_table


def _artifacts_of(flow_run_id: str) -> list:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId

    with get_client(sync_client=True) as client:
        return client.read_artifacts(artifact_filter=ArtifactFilter(
            flow_run_id=ArtifactFilterFlowRunId(any_=[flow_run_id])))


def test_artifacts_reach_their_flow_and_task_runs(prefect_harness: None) -> None:
    from prefect import flow, task
    from prefect.context import get_run_context

    @task
    def in_a_task() -> str:
        publish_table("step-rows", [{"n": 1, "name": "a"}, {"n": 2, "name": None}])
        return str(get_run_context().task_run.id)  # type: ignore[union-attr]

    @flow
    def publishing() -> tuple[str, str]:
        publish_markdown("run-notes", Markdown("# notes"))
        task_run_id = in_a_task()
        return str(get_run_context().flow_run.id), task_run_id  # type: ignore[union-attr]

    flow_run_id, task_run_id = publishing()
    assert flush(30) == 0
    by_key = {artifact.key: artifact for artifact in _artifacts_of(flow_run_id)}
    assert set(by_key) == {"run-notes", "step-rows"}
    assert by_key["run-notes"].data == "# notes"
    assert by_key["step-rows"].type == "table"
    assert str(by_key["step-rows"].task_run_id) == task_run_id
    assert by_key["run-notes"].task_run_id is None


def test_an_unreachable_server_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    from prefect.client.schemas.actions import ArtifactCreate
    from prefect.settings import PREFECT_API_URL, PREFECT_CLIENT_MAX_RETRIES, temporary_settings

    publisher = ArtifactPublisher()
    unreachable = "http://127.0.0.1:9/api"
    with temporary_settings(updates={PREFECT_API_URL: unreachable,
                                     PREFECT_CLIENT_MAX_RETRIES: 0}), \
            caplog.at_level(logging.WARNING, logger="geoask.records.artifact_publisher"):
        publisher.submit(unreachable,
                         ArtifactCreate(type="markdown", key="lost", data="x"))
        assert publisher.flush(30) == 0
    assert publisher.failed == 1
    assert "could not create Prefect artifact lost" in caplog.text


def test_flush_says_how_many_are_left_when_time_runs_out() -> None:
    publisher = ArtifactPublisher()
    publisher._pending = 2  # as if two were queued behind a stuck post
    assert publisher.flush(0.05) == 2
