"""``geoask model serve|status|stop`` around a stand-in for llama.cpp's ``llama-server``.

The stand-in is an executable that takes exactly the real server's options (an unknown or
missing one ends it, and the start fails) and answers ``/v1/models`` and ``/props`` as
llama-server does: it checks the start, the wait, the printed settings, the context window
read from the server, and that stop ends that process.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from geoask.errors import ConfigurationError
from geoask.models.context import served_context_tokens
from geoask.models.local_server import (
    answers,
    env_lines,
    read_state,
    start_server,
    stop_server,
)

STAND_IN = textwrap.dedent('''
    import argparse, json
    from http.server import BaseHTTPRequestHandler, HTTPServer
    parser = argparse.ArgumentParser()
    for name in ("--model", "--host", "--port", "--ctx-size", "--parallel", "--alias",
                 "--threads"):
        parser.add_argument(name, required=True)
    parser.add_argument("--jinja", action="store_true", required=True)
    parser.add_argument("--no-webui", action="store_true", required=True)
    args = parser.parse_args()
    assert args.host == "127.0.0.1" and args.parallel == "1"
    open(args.model).close()  # the GGUF must be there
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a): pass
        def do_GET(self):
            body = ({"default_generation_settings": {"n_ctx": int(args.ctx_size)}}
                    if self.path == "/props" else {"data": [{"id": args.alias}]})
            data = json.dumps(body).encode()
            self.send_response(200); self.send_header("content-length", str(len(data)))
            self.end_headers(); self.wfile.write(data)
    HTTPServer((args.host, int(args.port)), Handler).serve_forever()
''')


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def stand_in(tmp_path):
    server = tmp_path / "llama-server"
    server.write_text(f"#!{sys.executable}\n{STAND_IN}")
    server.chmod(0o755)
    models = tmp_path / "models"
    models.mkdir()
    (models / "tiny.gguf").write_bytes(b"GGUF")
    return models, server


def test_serve_status_stop(stand_in):
    models, server = stand_in
    port = _free_port()
    state = start_server(models, server, gguf="tiny.gguf", port=port,
                         context_tokens=4096, alias="tiny", wait_s=60)
    try:
        assert answers(state) and read_state(models) == state
        assert env_lines(state) == ["GEOASK_MODEL=openai-compatible:tiny",
                                    f"GEOASK_OPENAI_BASE_URL=http://127.0.0.1:{port}/v1",
                                    "GEOASK_MODEL_CONTEXT_TOKENS=4096",
                                    "GEOASK_OUTPUT_MODE=native"]
        assert served_context_tokens(state.base_url) == 4096
        again = start_server(models, server, gguf="tiny.gguf", port=port)
        assert again.pid == state.pid  # found running, not started twice
        # Attack pass: asking for another port or window returned this one without a word
        for other in ({"port": _free_port()}, {"context_tokens": 8192}, {"alias": "big"}):
            with pytest.raises(ConfigurationError, match=r"already runs .* with --"):
                start_server(models, server, gguf="tiny.gguf", **other)
    finally:
        assert stop_server(models) == state
    with pytest.raises(ProcessLookupError):  # ended and reaped: no such process any more
        os.kill(state.pid, 0)
    assert not answers(state)
    assert read_state(models) is None and stop_server(models) is None


def test_a_missing_build_or_model_says_to_run_make_local_model(tmp_path):
    with pytest.raises(ConfigurationError,
                       match=r"llama-server is missing .* run make local-model"):
        start_server(tmp_path, Path("/nonexistent/llama-server"))


def test_a_recorded_id_now_another_process_is_no_server_and_is_not_stopped(tmp_path):
    # Attack pass: after the server died its process id can be reused; `geoask model stop`
    # sent SIGTERM to whatever process had it (as root: any process).
    other = subprocess.Popen(["sleep", "60"])
    try:
        (tmp_path / "server.json").write_text(json.dumps(
            {"pid": other.pid, "port": 18099, "alias": "tiny", "context_tokens": 4096}))
        assert read_state(tmp_path) is None
        assert stop_server(tmp_path) is None
        assert other.poll() is None  # still running: not signalled
    finally:
        other.kill()
        other.wait()
