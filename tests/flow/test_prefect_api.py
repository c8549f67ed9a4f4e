"""geoask's Prefect block: process tags on flow runs only, no heartbeats, artifacts flushed."""

from __future__ import annotations


def test_flow_runs_carry_the_process_tag_and_their_task_runs_do_not(
        prefect_harness: None) -> None:
    from prefect import flow, task
    from prefect.client.orchestration import get_client
    from prefect.context import get_run_context
    from prefect.settings import PREFECT_API_URL

    from geoask.run.stops import crash_runs_on_stop, without_process_tags

    @task
    def stage() -> str:
        return str(get_run_context().task_run.id)  # type: ignore[union-attr]

    @flow
    def question() -> tuple[str, str, str]:
        tagged = stage()
        with without_process_tags():
            untagged = stage()
        return str(get_run_context().flow_run.id), tagged, untagged  # type: ignore[union-attr]

    with crash_runs_on_stop(PREFECT_API_URL.value()) as tag:
        flow_run_id, tagged, untagged = question()
    with get_client(sync_client=True) as client:
        assert tag in client.read_flow_run(flow_run_id).tags
        assert tag in client.read_task_run(tagged).tags
        # a tag costs a concurrency-slot request at every task run
        assert tag not in client.read_task_run(untagged).tags


def test_outside_the_process_tags_nothing_changes(prefect_harness: None) -> None:
    from prefect import tags
    from prefect.context import TagsContext

    from geoask.run.stops import without_process_tags

    with tags("user-tag"), without_process_tags():
        assert TagsContext.get().current_tags == {"user-tag"}


def test_the_block_has_no_heartbeats_and_ends_with_the_artifacts_posted(
        prefect_harness: None) -> None:
    from prefect import flow
    from prefect.context import get_run_context
    from prefect.settings import get_current_settings

    from geoask.records.artifact_publisher import PUBLISHER
    from geoask.records.run_artifacts import Markdown, publish_markdown
    from geoask.service.local import prefect_api
    from geoask.settings import get_settings

    @flow
    def publishing() -> str:
        for number in range(5):
            publish_markdown(f"note-{number}", Markdown("# {}").format(number))
        return str(get_run_context().flow_run.id)  # type: ignore[union-attr]

    with prefect_api(get_settings()):
        # Prefect's heartbeat thread sleeps in whole seconds; each run's end waited for it
        assert get_current_settings().flows.heartbeat_frequency is None
        flow_run_id = publishing()
    assert PUBLISHER.flush(0) == 0
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId

    with get_client(sync_client=True) as client:
        keys = {artifact.key for artifact in client.read_artifacts(artifact_filter=ArtifactFilter(
            flow_run_id=ArtifactFilterFlowRunId(any_=[flow_run_id])))}
    assert keys == {f"note-{number}" for number in range(5)}


def test_the_blocks_flow_runs_share_one_api_client(prefect_harness: None) -> None:
    from prefect import flow
    from prefect.context import SyncClientContext

    from geoask.service.local import prefect_api
    from geoask.settings import get_settings

    clients: list[object] = []

    @flow
    def client_of_the_run() -> None:
        clients.append(SyncClientContext.get().client)  # type: ignore[union-attr]

    with prefect_api(get_settings()):
        client_of_the_run()
        client_of_the_run()
    # Prefect makes a client per run otherwise: a TLS context with the CA bundle loaded and
    # an API version check each
    assert clients[0] is clients[1]


def test_a_thread_creating_a_run_is_counted_until_the_runs_body_starts() -> None:
    import threading

    from geoask.run import stops
    body_started, release = threading.Event(), threading.Event()

    def question() -> None:
        with stops.creating_run():
            release.wait(5)
            with stops.without_process_tags():  # the run's body: the run exists now
                body_started.set()

    thread = threading.Thread(target=question)
    thread.start()
    try:
        with stops._created_one:  # a stop's sweep would wait here for the run
            assert not stops._created_one.wait_for(lambda: stops._creating == 0, 0.2)
    finally:
        release.set()
    thread.join(5)
    assert body_started.is_set()
    assert stops._creating == 0
    with stops.creating_run():  # a question that ends before its body also stops counting
        assert stops._creating == 1
    assert stops._creating == 0


def test_a_stop_crashes_the_unfinished_runs_of_every_process_tag_and_no_others(
        prefect_harness: None) -> None:
    # Attack pass: after SIGTERM one question run stayed Running: the sweep set states one
    # request at a time, per tag, and ran out of the stop hooks' time on a loaded server.
    from prefect import flow
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.objects import StateType
    from prefect.settings import PREFECT_API_URL
    from prefect.states import Running

    from geoask.run import stops
    @flow(name="stop-sweep-check")
    def placeholder() -> None:
        return None

    with (stops.crash_runs_on_stop(PREFECT_API_URL.value()) as first,
          stops.crash_runs_on_stop(PREFECT_API_URL.value()) as second,
          get_client(sync_client=True) as client):
        mine = [client.create_flow_run(placeholder, tags=[tag], state=Running())
                for tag in (first, second, first)]
        other = client.create_flow_run(placeholder, tags=["someone-else"], state=Running())
        stops.mark_stopped_runs("SIGTERM")
        states = [client.read_flow_run(run.id).state for run in mine]
        assert {state.type for state in states} == {StateType.CRASHED}
        assert all(state.message.startswith("stopped by SIGTERM") for state in states)
        assert client.read_flow_run(other.id).state.type == StateType.RUNNING


def test_a_stop_catches_a_run_created_2_5_s_into_its_sweep(prefect_harness: None) -> None:
    # CI: a question run stayed Pending after SIGTERM - its creation had begun before the
    # stop and took longer than the sweep's one timed wait (~2 s in a loaded benchmark).
    import threading
    import time

    from prefect import flow
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.objects import StateType
    from prefect.settings import PREFECT_API_URL
    from prefect.states import Running

    from geoask.run import stops
    @flow(name="stop-sweep-slow-creation")
    def placeholder() -> None:
        return None

    created = []
    with (stops.crash_runs_on_stop(PREFECT_API_URL.value()) as tag,
          get_client(sync_client=True) as client):

        def question() -> None:
            with stops.creating_run():
                time.sleep(2.5)
                created.append(client.create_flow_run(placeholder, tags=[tag], state=Running()))
                with stops.without_process_tags():  # the run's body starts
                    pass

        thread = threading.Thread(target=question)
        thread.start()
        begin = time.monotonic()
        stops.mark_stopped_runs("SIGTERM")
        elapsed = time.monotonic() - begin
        thread.join(10)
        assert created and client.read_flow_run(created[0].id).state.type == StateType.CRASHED
    assert elapsed < stops.CREATION_WAIT_S + 1.0  # the sweep ended once the run was caught


def test_a_stop_follows_a_creation_that_never_ends_only_for_its_bound(
        prefect_harness: None) -> None:
    import threading
    import time

    from prefect.settings import PREFECT_API_URL

    from geoask.run import stops
    release = threading.Event()

    def stuck() -> None:
        with stops.creating_run():
            release.wait(30)

    thread = threading.Thread(target=stuck)
    with stops.crash_runs_on_stop(PREFECT_API_URL.value()):
        thread.start()
        begin = time.monotonic()
        try:
            stops.mark_stopped_runs("SIGTERM")
            elapsed = time.monotonic() - begin
        finally:
            release.set()
            thread.join(10)
    assert stops.CREATION_WAIT_S <= elapsed < stops.CREATION_WAIT_S + 2.0
