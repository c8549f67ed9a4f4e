"""The warm question worker of ``geoask server``: ``geoask ask`` without a cold start.

A ``geoask ask`` process spends most of its wall time importing Prefect, pydantic-ai,
geopandas, matplotlib and chromadb and opening the catalog, before the question's first
stage. ``geoask server`` already runs in the background once a command started it; it also
listens here, on 127.0.0.1 at a free port, for questions, and answers each in a thread of its
own with everything imported - the same :func:`geoask.app.api.ask` run (a flow run on the same
Prefect server, the same artifacts), only warm.

A question is taken only when it would run exactly as in the asking process: the asker sends
the :func:`fingerprint` of its settings, its model credentials' environment and geoask's source
files, and the worker answers ``409`` when its own differs (then the command runs the question
itself). Requests carry the token recorded in the server's 0600 state file, so only the user
who can read that file can ask.

Wire format (JSON over HTTP/1.1): ``POST /ask`` with ``{"question", "model", "variant",
"conversation", "fingerprint"}``; the answer is ``{"result": <QuestionResult as JSON>}`` or
``{"error": {"type": <geoask error class>, "message": ...}}``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import re
import secrets
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import TYPE_CHECKING, Any

from geoask.service.loopback import LoopbackServer

if TYPE_CHECKING:
    from geoask.settings import Settings
    from geoask.vocabulary.question_result import QuestionResult

logger = logging.getLogger(__name__)

TOKEN_HEADER = "X-Geoask-Token"  # noqa: S105 - a header name, not a secret
MAX_REQUEST_BYTES = 1_000_000
"""Largest request body read (bytes); a question is capped far below (``question_max_chars``)."""

SOURCE_FOLDERS = ("geoask", "flows", "tasks", "agents", "sandbox")
"""geoask's own code, relative to the checkout: a change in it makes the worker stale."""

CREDENTIAL_ENV = re.compile(
    r"(_API_KEY|_API_TOKEN|_BASE_URL|_ENDPOINT)$"
    r"|^(OPENAI|ANTHROPIC|AZURE|AWS|GOOGLE|GEMINI|VERTEX|MISTRAL|GROQ|DEEPSEEK|COHERE|CO|HF|"
    r"OLLAMA|OPENROUTER|TOGETHER|FIREWORKS|XAI|HEROKU|LOGFIRE)_")
"""Environment variables the model providers (pydantic-ai) read besides geoask's settings."""

ROOT = Path(__file__).resolve().parents[2]


def fingerprint(settings: Settings, environ: dict[str, str] | None = None) -> str:
    """A hex SHA-256 of what decides how a question runs in this process.

    Covers every geoask setting (secret values included, only ever hashed; the working
    folder too when a path setting is relative), the model providers' environment variables
    (:data:`CREDENTIAL_ENV`) and the size and modification time of each ``.py`` file under
    :data:`SOURCE_FOLDERS` (~3 ms for ~300 files).
    """
    environ = dict(os.environ) if environ is None else environ
    # a background server is started with its home pinned (GEOASK_SERVER_HOME): compare the
    # resolved folder, not whether it was given
    settings = settings.model_copy(update={"server_home": settings.prefect_home})
    digest = hashlib.sha256()
    digest.update(json.dumps(_revealed(settings.model_dump(mode="python")), sort_keys=True,
                             default=str).encode())
    if _has_relative_paths(settings):  # they resolve against each process's folder
        digest.update(f"\0cwd={os.getcwd()}".encode())
    for name in sorted(key for key in environ if CREDENTIAL_ENV.search(key)):
        digest.update(f"\0{name}={environ[name]}".encode())
    for folder in SOURCE_FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            stat = path.stat()
            digest.update(f"\0{path}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()


def _has_relative_paths(settings: Settings) -> bool:
    """True when a path setting (or a local ``*_root``/``*_url`` folder) is relative."""
    for name, value in settings.model_dump(mode="python").items():
        if isinstance(value, Path) and not value.is_absolute():
            return True
        if (isinstance(value, str) and name.endswith(("_root", "_url")) and "://" not in value
                and not value.startswith("/")):
            return True
    return False


def _revealed(value: Any) -> Any:
    """``value`` with pydantic secrets replaced by their text (for hashing only)."""
    if hasattr(value, "get_secret_value"):
        return value.get_secret_value()
    if isinstance(value, dict):
        return {str(key): _revealed(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_revealed(item) for item in value]
    return value


class QuestionWorker:
    """The HTTP listener and its per-request threads (:meth:`start`, :meth:`stop`).

    Attributes:
        url: ``http://127.0.0.1:<port>`` once started.
        token: the secret a request must send in :data:`TOKEN_HEADER`.
        fingerprint: this process's :func:`fingerprint`, fixed at the start.

    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.token = secrets.token_urlsafe(32)
        self.fingerprint = fingerprint(settings)
        self._http = LoopbackServer(self.handle, "geoask-question-worker", ("POST",))

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>`` (raises RuntimeError before :meth:`start`)."""
        return self._http.url

    def start(self, *, warm_up: bool = True) -> str:
        """Listen on a free loopback port in a daemon thread; return :attr:`url`.

        With ``warm_up``, imports the question flow first, so the first question is warm too.
        """
        if warm_up:
            import flows.answer_question  # noqa: F401 - the imports are the warm-up

        return self._http.start()

    def stop(self) -> None:
        """Stop listening (questions being answered end with the process)."""
        self._http.stop()

    def handle(self, request: BaseHTTPRequestHandler) -> None:
        """Answer one ``POST /ask`` (status codes: 200, 400, 403, 404, 409, 413, 500)."""
        if request.path != "/ask":
            return _reply(request, HTTPStatus.NOT_FOUND, {"error": {"type": "NotFound",
                                                                    "message": request.path}})
        token = request.headers.get(TOKEN_HEADER, "").encode("utf-8", "surrogateescape")
        if not hmac.compare_digest(token, self.token.encode()):
            return _reply(request, HTTPStatus.FORBIDDEN, _error("Forbidden", "bad token"))
        length = request.headers.get("Content-Length") or "0"
        if not length.isdigit():
            return _reply(request, HTTPStatus.BAD_REQUEST,
                          _error("BadRequest", "Content-Length is not a byte count"))
        if int(length) > MAX_REQUEST_BYTES:
            return _reply(request, HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                          _error("TooLarge", f"request over {MAX_REQUEST_BYTES} bytes"))
        try:
            body = json.loads(request.rfile.read(int(length)))
            question = body["question"]
            options = {key: body.get(key) for key in ("model", "variant", "conversation")}
        except (ValueError, KeyError, TypeError, RecursionError) as error:
            return _reply(request, HTTPStatus.BAD_REQUEST,
                          _error("BadRequest", type(error).__name__))
        if body.get("fingerprint") != self.fingerprint:
            return _reply(request, HTTPStatus.CONFLICT, _error(
                "Stale", "the asking process's settings, credentials or code differ"))
        _reply(request, HTTPStatus.OK, self.answer(question, options))

    def answer(self, question: Any, options: dict[str, Any]) -> dict[str, Any]:
        """The wire answer for one question: the result, or the error it ended with."""
        from geoask.app.api import ask
        from geoask.errors import GeoaskError

        try:
            result = ask(question, **options, wait_for_artifacts=False)
        except GeoaskError as error:
            return _error(type(error).__name__, str(error))
        except Exception as error:  # reported to the asker; the traceback stays in the log
            logger.exception("question worker: the question failed")
            return _error("InternalError", f"{type(error).__name__}: {error}")
        return {"result": result.model_dump(mode="json")}


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"error": {"type": kind, "message": message}}


def _reply(request: BaseHTTPRequestHandler, status: HTTPStatus, payload: dict[str, Any]
           ) -> None:
    data = json.dumps(payload).encode()
    try:
        request.send_response(status)
        request.send_header("Content-Type", "application/json")
        request.send_header("Content-Length", str(len(data)))
        request.end_headers()
        request.wfile.write(data)
    except (BrokenPipeError, ConnectionResetError):  # the asker stopped waiting
        logger.info("question worker: the asker left before the answer")


def ask_worker(settings: Settings, question: str, *, model: str | None = None,
               variant: str | None = None, conversation: str | None = None
               ) -> QuestionResult | None:
    """Have the running ``geoask server``'s warm worker answer ``question``; None: ask here.

    None (nothing was run) when another Prefect API is configured (``GEOASK_SERVER_API_URL``
    or ``PREFECT_API_URL``), no geoask server of this home runs or it has no worker, the
    worker refuses the question as stale (``409``: its settings, credentials or code differ),
    or it cannot be reached.

    Raises:
        GeoaskError: the question ran and ended in an error (the same class as in-process, by
            name; :class:`~geoask.errors.GeoaskError` for others).
        ServiceError: the server went away while answering (the question may have run).

    """
    import http.client
    import urllib.error
    import urllib.request

    from geoask.errors import ServiceError
    from geoask.service.local import explicit_api_url, running_server
    from geoask.vocabulary.question_result import QuestionResult

    if explicit_api_url(settings):
        return None
    state = running_server(settings)
    if state is None or not state.worker_url or not state.worker_token:
        return None
    data = json.dumps({"question": question, "model": model, "variant": variant,
                       "conversation": conversation,
                       "fingerprint": fingerprint(settings)}).encode()
    request = urllib.request.Request(  # noqa: S310 - the loopback http URL we recorded
        f"{state.worker_url}/ask", data=data, method="POST",
        headers={"Content-Type": "application/json", TOKEN_HEADER: state.worker_token})
    try:
        with urllib.request.urlopen(request) as response:  # noqa: S310 - our loopback URL
            body = json.load(response)
    except urllib.error.HTTPError as error:
        if error.code == HTTPStatus.CONFLICT:
            return None
        body = json.load(error)
    except urllib.error.URLError:  # refused: the worker is gone; nothing was sent
        return None
    except (http.client.HTTPException, ConnectionError) as error:
        raise ServiceError(f"the geoask server (pid {state.pid}) went away while answering "
                           f"({type(error).__name__}); see {state.log_path}") from None
    if "error" in body:
        raise _rebuilt(body["error"].get("type", ""), body["error"].get("message", ""))
    return QuestionResult.model_validate(body["result"])


def _rebuilt(name: str, message: str) -> Exception:
    """The :mod:`geoask.errors` error called ``name`` with ``message`` (else GeoaskError)."""
    from geoask import errors

    found = getattr(errors, name, None)
    if isinstance(found, type) and issubclass(found, errors.GeoaskError):
        try:
            return found(message)
        except TypeError:  # a class that takes more than a message
            pass
    return errors.GeoaskError(message)
