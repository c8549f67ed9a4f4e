"""Every escape/abuse and diagnosis fixture gets its expected verdict in the real sandbox.

Cases are files under tests/fixtures/sandbox/{abuse,diagnosis}/ (see the README there). Each
runs twice: as a script (``BubblewrapSandbox.run``) and as a cell of a persistent session,
after a cell that set a variable; the session must then either survive (the variable is still
there) or have ended with a clear error, and nothing of it may be left running.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from geoask.errors import SandboxError
from geoask.settings import Settings
from sandbox.bubblewrap import BubblewrapSandbox
from sandbox.host import uid_pids
from sandbox.models import SandboxLimits, SandboxOutcome

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sandbox"

REPO_DIR = Path(__file__).resolve().parents[2]
CASES = sorted((FIXTURES / "abuse").glob("*.py")) + sorted((FIXTURES / "diagnosis").glob("*.py"))
LIMIT_KEYS = ("timeout_s", "cpu_s", "memory_mib", "file_size_mib", "open_files", "tmp_mib",
              "scratch_mib")
SECRETS = {
    "OPENAI_API_KEY": "sk-test-secret",
    "GEOASK_DATABASE_URL": "postgresql://reader:pw@127.0.0.1:55432/geoask",
    "AWS_SECRET_ACCESS_KEY": "AKIAEXAMPLE",
    "PGPASSWORD": "pw",
}


def parse_header(text: str) -> dict[str, str]:
    header = {}
    for line in text.splitlines():
        if not line.startswith("# ") or ":" not in line:
            break
        key, value = line[2:].split(":", 1)
        header[key.strip()] = value.strip()
    return header


def test_host_listeners_accept_connections_from_the_host(host_listener: HostListener) -> None:
    # The control for the network fixtures: the same connections succeed outside the sandbox.
    socket.create_connection(("127.0.0.1", host_listener.port), timeout=3).close()
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.connect("\0" + host_listener.abstract_name)
    client.close()
    deadline = time.monotonic() + 3
    while host_listener.accepted < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert host_listener.accepted == 2
    host_listener.accepted = 0


def test_there_are_at_least_30_abuse_fixtures_each_with_title_and_verdict() -> None:
    abuse = sorted((FIXTURES / "abuse").glob("*.py"))
    assert len(abuse) >= 30
    for path in CASES:
        header = parse_header(path.read_text())
        assert header.get("title") and header.get("expect"), path.name


class HostListener:
    """Host listeners (TCP on 127.0.0.1, an abstract Unix socket) that count connections."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.abstract_name = f"geoask-sandbox-test-{os.getpid()}"
        self.unix_server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.unix_server.bind("\0" + self.abstract_name)
        self.unix_server.listen()
        self.accepted = 0
        for server in (self.server, self.unix_server):
            threading.Thread(target=self._serve, args=(server,), daemon=True).start()

    def _serve(self, server: socket.socket) -> None:
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            self.accepted += 1
            connection.close()

    def close(self) -> None:
        self.server.close()
        self.unix_server.close()


@pytest.fixture(scope="module")
def host_listener() -> Iterator[HostListener]:
    listener = HostListener()
    yield listener
    listener.close()


@pytest.mark.sandbox
@pytest.mark.parametrize("path", CASES, ids=[f"{p.parent.name}/{p.stem}" for p in CASES])
def test_fixture_gets_expected_verdict(
    path: Path,
    real_sandbox: BubblewrapSandbox,
    sandbox_settings: Settings,
    host_listener: HostListener,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    script, header, limits = prepare_case(path, host_listener, sandbox_settings)
    outcome = real_sandbox.run(script, [FIXTURES / "data" / "points.geojson"], limits)
    check_outcome(outcome, header, header["expect"], sandbox_settings)
    assert host_listener.accepted == 0


#: Fixtures whose verdict as a session cell differs from the script's, and why.
CELL_EXPECT = {
    # the cell returns after starting its threads; they live on in the session until close
    "loop_threads_sleep": "success",
    # a cell need not give a result (it may only prepare state)
    "protocol_nothing_printed": "success",
}
#: Statuses with which a cell may end its session.
ENDING_STATUSES = ("timeout", "limit_exceeded", "killed")
KEEP_CELL = "kept_between_cells = 'yes'"
CHECK_CELL = (
    "import json as _json\n"
    "print(_json.dumps({'status': 'success', 'summary': 'state', "
    "'result': {'kept': kept_between_cells}}))\n"
)


@pytest.mark.sandbox
@pytest.mark.parametrize("path", CASES, ids=[f"{p.parent.name}/{p.stem}" for p in CASES])
def test_fixture_as_a_session_cell_is_contained(
    path: Path,
    sandbox_settings: Settings,
    host_listener: HostListener,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    script, header, limits = prepare_case(path, host_listener, sandbox_settings)
    # the header's wall clock and CPU time bound the cell; the session gets more
    sandbox = BubblewrapSandbox.from_settings(sandbox_settings.model_copy(update={
        "sandbox_cell_timeout_s": limits.timeout_s, "sandbox_cell_cpu_s": limits.cpu_s}))
    session = sandbox.open_session(limits.model_copy(update={"timeout_s": 120, "cpu_s": 120}))
    with session:
        assert session.run_cell(KEEP_CELL).status == "success"
        outcome = session.run_cell(script, [FIXTURES / "data" / "points.geojson"])
        if path.stem in CELL_EXPECT:  # the header's details describe the script's verdict
            check_outcome(outcome, {}, CELL_EXPECT[path.stem], sandbox_settings)
        else:
            check_outcome(outcome, header, header["expect"], sandbox_settings)
        if session.ended is None:
            after = session.run_cell(CHECK_CELL)
            assert after.ok and after.protocol is not None, after.model_dump_json(indent=1)
            assert after.protocol.result == {"kept": "yes"}
        else:
            assert outcome.status in ENDING_STATUSES, session.ended
            assert outcome.leftover_processes == 0
            with pytest.raises(SandboxError, match="session ended: cell 2 ended it: "):
                session.run_cell(CHECK_CELL)
    assert session.ended is not None
    assert session.leftover_processes == 0
    assert not uid_pids(session.uid)
    assert not session.run_dir.exists()
    assert host_listener.accepted == 0


def prepare_case(
    path: Path, host_listener: HostListener, sandbox_settings: Settings
) -> tuple[str, dict[str, str], SandboxLimits]:
    """The fixture's script with its placeholders filled, its header and its limits."""
    text = path.read_text()
    header = parse_header(text)
    script = (
        text.replace("{{HOST_PID}}", str(os.getpid()))
        .replace("{{LISTENER_PORT}}", str(host_listener.port))
        .replace("{{ABSTRACT_SOCKET}}", host_listener.abstract_name)
        .replace("{{DB_PORT}}", str(sandbox_settings.db_port))
        .replace("{{REPO_DIR}}", str(REPO_DIR))
        .replace("{{PG_DATA_DIR}}", str(sandbox_settings.cluster_dir))
    )
    limits = SandboxLimits(**{  # type: ignore[arg-type]
        "timeout_s": 30, **{key: float(header[key]) for key in LIMIT_KEYS if key in header}
    })
    return script, header, limits


def check_outcome(
    outcome: SandboxOutcome, header: dict[str, str], expect: str, sandbox_settings: Settings
) -> None:
    """Assert what the fixture's header promises about ``outcome``."""
    context = outcome.model_dump_json(indent=1, exclude={"stdout"})[:3000]

    assert outcome.status == expect, context
    assert outcome.leftover_processes == 0, context
    if "error_kind" in header:
        assert outcome.error is not None and outcome.error.kind == header["error_kind"], context
    if "exception_type" in header:
        assert outcome.error is not None, context
        assert outcome.error.exception_type in header["exception_type"].split("|"), context
    if "missing_field" in header:
        assert outcome.error is not None and outcome.error.missing_field == header[
            "missing_field"], context
    if "line" in header:
        assert outcome.error is not None and outcome.error.line == int(header["line"]), context
    if "message_contains" in header:
        assert outcome.error is not None, context
        assert header["message_contains"] in outcome.error.message + outcome.error.hint, context
    if "result" in header:
        assert outcome.protocol is not None, context
        assert outcome.protocol.result == json.loads(header["result"]), context
    if "no_artifact" in header:
        assert header["no_artifact"] not in [a.name for a in outcome.artifacts], context
    if header.get("stdout_truncated") == "true":
        assert outcome.stdout.truncated and outcome.stdout.note, context
        assert len(outcome.stdout.text) <= sandbox_settings.sandbox_stdout_tail_chars
