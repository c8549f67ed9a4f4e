"""The workspace page of ``geoask server``: ask questions in a browser, see table + map.

One page at ``/`` of a port of its own on 127.0.0.1 (free, chosen at start): a question box,
the conversation's turns, each answer as a table and the run's own interactive ``map.html``
(in an iframe served by :data:`MAP_ROUTE`), its evidence trail and a link to the run's flow
run in the Prefect UI. A question is asked through the same :func:`geoask.app.api.ask` as
``geoask ask``, as the next turn of the page's conversation (its id is in the page's URL).

The token model is the warm worker's (:mod:`geoask.service.worker`): a secret recorded in the
server's 0600 state file; every request carries it (``?token=`` like a Jupyter URL, a hidden
field of the question form), else ``403``. The page runs no script and loads nothing from
outside: a strict Content-Security-Policy (:data:`PAGE_POLICY`) allows only inline styles,
frames and forms of its own origin; the map frame may run its inlined Leaflet
(:data:`MAP_POLICY`). Every model- or database-written text is escaped (``html.escape``).
The model is chosen from the models the server offers
(:func:`geoask.models.served.allowed_models`, the list the closed deployment schemas offer) and
checked again on the way in (:func:`geoask.models.served.check_served_model`); the conversation
id must be one the runs accept (:data:`geoask.run.conversation.CONVERSATION_ID`).
A map is isolated from the page: its frame is ``sandbox="allow-scripts"`` and its policy
carries the same ``sandbox`` directive (an opaque origin even when opened on its own), and its
URL carries no token, only that one map's key (:func:`map_key`), so a map's script can neither
read the page nor learn the token.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import logging
import secrets
import threading
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, quote, urlencode, urlsplit

from geoask.base.answer_text import answer_rows
from geoask.base.result_view import table_html
from geoask.base.storage import filesystem_for
from geoask.errors import GeoaskError
from geoask.models.served import allowed_models, check_served_model
from geoask.run.conversation import CONVERSATION_ID
from geoask.service.loopback import LoopbackServer
from geoask.settings import Settings, get_settings

if TYPE_CHECKING:
    from geoask.vocabulary.question_result import QuestionResult

logger = logging.getLogger(__name__)

PAGE_POLICY = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
               "frame-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
"""Content-Security-Policy of the page: no script, no request to another origin."""
MAP_SANDBOX = "allow-scripts"
"""The map frame's sandbox: scripts in an opaque origin (never ``allow-same-origin``)."""
MAP_POLICY = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
              "img-src data: blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'self'; "
              f"sandbox {MAP_SANDBOX}")
"""Policy of a framed ``map.html``: its inlined Leaflet only, offline, in a sandbox."""
MAP_ROUTE = "/map/"
"""``/map/<run id>``: the ``map.html`` of a run this page asked (no other file is served)."""
MAX_FORM_BYTES = 100_000
"""Largest question form read (bytes); a question is capped far below (``question_max_chars``)."""


@dataclass(frozen=True)
class Turn:
    """One question asked on the page and what came of it.

    Attributes:
        question: the question as typed.
        result: the run's result (answered, rejected or failed), or None after an error.
        error: the one-line error (``ConfigurationError: ...``) when the run could not be had.

    """

    question: str
    result: QuestionResult | None = None
    error: str | None = None


class Workspace:
    """The page's HTTP listener and the conversations it asked (:meth:`start`, :meth:`stop`).

    Attributes:
        token: the secret every request must carry (``?token=`` or the form's ``token``).
        turns: conversation id -> its :class:`Turn` s, in order.
        settings: the serving process's settings (its offered models).

    """

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or get_settings()
        self.token = secrets.token_urlsafe(32)
        self.turns: dict[str, list[Turn]] = {}
        self._lock = threading.Lock()
        self._asking: dict[str, threading.Lock] = {}  # one question at a time per conversation
        self._http = LoopbackServer(self.handle, "geoask-workspace", ("GET", "POST"))

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>`` (raises RuntimeError before :meth:`start`)."""
        return self._http.url

    def start(self) -> str:
        """Listen on a free loopback port in a daemon thread; return :attr:`url`."""
        return self._http.start()

    def stop(self) -> None:
        """Stop listening."""
        self._http.stop()

    def handle(self, request: BaseHTTPRequestHandler) -> None:
        """Answer one request: ``GET /``, ``POST /ask``, ``GET /map/<run id>`` (else 404)."""
        parts = urlsplit(request.path)
        query = _single(parse_qs(parts.query))
        form = _form(request) if request.command == "POST" else {}
        if form is None:
            return _send(request, HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "question form too large")
        if request.command == "GET" and parts.path.startswith(MAP_ROUTE):
            run_id = parts.path.removeprefix(MAP_ROUTE)
            if not _matches(query.get("key"), map_key(self.token, run_id)):
                return _send(request, HTTPStatus.FORBIDDEN, "forbidden: not this map's key")
            return self._map(request, run_id)
        if not _matches(form.get("token") or query.get("token"), self.token):
            return _send(request, HTTPStatus.FORBIDDEN, "forbidden: open the URL with its token "
                         "(`geoask server status` prints it)")
        if request.command == "GET" and parts.path == "/":
            conversation = query.get("conversation") or f"ws-{uuid.uuid4().hex[:12]}"
            if not CONVERSATION_ID.fullmatch(conversation):
                return _send(request, HTTPStatus.BAD_REQUEST, "bad conversation id")
            return _send(request, HTTPStatus.OK, self.page(conversation), "text/html",
                         PAGE_POLICY)
        if request.command == "POST" and parts.path == "/ask":
            return self._ask(request, form)
        return _send(request, HTTPStatus.NOT_FOUND, "not found")

    def _ask(self, request: BaseHTTPRequestHandler, form: Mapping[str, str]) -> None:
        conversation = form.get("conversation", "")
        if not CONVERSATION_ID.fullmatch(conversation):
            return _send(request, HTTPStatus.BAD_REQUEST, "bad conversation id")
        with self._lock:
            asking = self._asking.setdefault(conversation, threading.Lock())
        with asking:  # a turn sees every earlier turn of its conversation
            turn = self.answer(form.get("question", ""), form.get("model") or None, conversation)
            with self._lock:
                self.turns.setdefault(conversation, []).append(turn)
        location = "/?" + urlencode({"token": self.token, "conversation": conversation})
        request.send_response(HTTPStatus.SEE_OTHER)
        request.send_header("Location", location)
        request.send_header("Content-Length", "0")
        request.end_headers()

    def answer(self, question: str, model: str | None, conversation: str) -> Turn:
        """``question`` asked as the conversation's next turn: its result or one-line error."""
        from geoask.app.api import ask

        try:
            check_served_model(model, self.settings)
            # this process lives on to post the run's Prefect artifacts: no wait for them
            return Turn(question, result=ask(question, model=model, conversation=conversation,
                                             wait_for_artifacts=False))
        except GeoaskError as error:
            return Turn(question, error=f"{type(error).__name__}: {error}")
        except Exception as error:  # shown on the page; the traceback stays in the log
            logger.exception("workspace: the question failed")
            return Turn(question, error=f"{type(error).__name__}: {error}")

    def _map(self, request: BaseHTTPRequestHandler, run_id: str) -> None:
        url = self._map_url(run_id)
        if url is None:
            return _send(request, HTTPStatus.NOT_FOUND, "no map of such a run on this page")
        filesystem, path = filesystem_for(url)
        try:
            with filesystem.open(path, "rb") as handle:
                body = handle.read()
        except OSError as error:
            return _send(request, HTTPStatus.NOT_FOUND, f"map not readable: {error}")
        _send_bytes(request, HTTPStatus.OK, body, "text/html", MAP_POLICY)

    def _map_url(self, run_id: str) -> str | None:
        with self._lock:
            results = [t.result for turns in self.turns.values() for t in turns if t.result]
        return next((url for result in results if result.run_id == run_id
                     for url in result.maps if url.endswith(".html")), None)

    def model_options(self) -> str:
        """The model menu's ``<option>`` s: the server's default, then every offered model."""
        return "".join(['<option value="">configured default</option>', *(
            f'<option value="{html.escape(name)}">{html.escape(name)}</option>'
            for name in allowed_models(self.settings))])

    def page(self, conversation: str) -> str:
        """The whole page of ``conversation``: its turns, then the question form."""
        with self._lock:
            turns = list(self.turns.get(conversation, []))
        token = html.escape(self.token)
        body = "\n".join(turn_html(i, turn, self.token) for i, turn in enumerate(turns, 1))
        return PAGE.format(
            conversation=html.escape(conversation), token=token, models=self.model_options(),
            turns=body or
            "<p class=muted>No question yet: ask one below.</p>",
            new=html.escape("/?" + urlencode({"token": self.token})))


def turn_html(number: int, asked: Turn, token: str) -> str:
    """One turn: question, status and message, answer table, map frame, evidence, run link."""
    opening = (f'<section class=turn id="turn-{number}"><h2>Turn {number}: '
               f"{html.escape(asked.result.status if asked.result else 'error')}</h2>"
               f"<p class=question>{html.escape(asked.question)}</p>")
    turn = asked.result
    if turn is None:
        return f"{opening}<p class=error>{html.escape(asked.error or '')}</p></section>"
    parts = [f"{opening}<p class=message>{html.escape(turn.message)}</p>"]
    if turn.answer is not None:
        rows = answer_rows(turn.answer.data_payload, turn.names)
        parts.append(f"<div class=answer>{table_html(rows)}</div>")
    if any(url.endswith(".html") for url in turn.maps):
        src = f"{MAP_ROUTE}{quote(turn.run_id)}?" + urlencode({"key": map_key(token,
                                                                               turn.run_id)})
        parts.append(f'<iframe class=map title="answer map" sandbox="{MAP_SANDBOX}" '
                     f'src="{html.escape(src)}"></iframe>')
    if turn.evidence:
        parts.append("<details class=evidence><summary>evidence</summary><ul>"
                     + "".join(f"<li>{html.escape(line)}</li>" for line in turn.evidence)
                     + "</ul></details>")
    run = f"run <code>{html.escape(turn.run_id)}</code>"
    if turn.dashboard_url:
        run += (f' - <a class=run-link href="{html.escape(turn.dashboard_url)}" '
                'target="_blank" rel="noopener">flow run in Prefect</a>')
    parts.append(f"<p class=muted>{run}</p></section>")
    return "\n".join(parts)


def map_key(token: str, run_id: str) -> str:
    """The key of one run's map (HMAC-SHA-256 of the run id under the page token).

    It opens ``/map/<run id>`` and nothing else: a map's script that reads its own URL learns no
    token.
    """
    return hmac.new(token.encode(), run_id.encode("utf-8", "surrogateescape"),
                    hashlib.sha256).hexdigest()


def _matches(given: str | None, secret: str) -> bool:
    """Whether ``given`` is ``secret``, compared in constant time."""
    return hmac.compare_digest((given or "").encode("utf-8", "surrogateescape"), secret.encode())


def _single(values: Mapping[str, list[str]]) -> dict[str, str]:
    return {key: items[0] for key, items in values.items() if items}


def _form(request: BaseHTTPRequestHandler) -> dict[str, str] | None:
    """The urlencoded form of a POST; None when it is larger than :data:`MAX_FORM_BYTES`."""
    length = request.headers.get("Content-Length") or "0"
    size = int(length) if length.isdigit() else 0
    if size > MAX_FORM_BYTES:
        return None
    return _single(parse_qs(request.rfile.read(size).decode("utf-8", "replace")))


def _send(request: BaseHTTPRequestHandler, status: HTTPStatus, text: str,
          kind: str = "text/plain", policy: str = PAGE_POLICY) -> None:
    _send_bytes(request, status, text.encode("utf-8"), kind, policy)


def _send_bytes(request: BaseHTTPRequestHandler, status: HTTPStatus, body: bytes, kind: str,
                policy: str) -> None:
    try:
        request.send_response(status)
        request.send_header("Content-Type", f"{kind}; charset=utf-8")
        request.send_header("Content-Length", str(len(body)))
        request.send_header("Content-Security-Policy", policy)
        request.send_header("X-Content-Type-Options", "nosniff")
        request.send_header("Referrer-Policy", "no-referrer")
        request.send_header("Cache-Control", "no-store")
        request.end_headers()
        request.wfile.write(body)
    except (BrokenPipeError, ConnectionResetError):  # the browser left
        logger.info("workspace: the browser left before the reply")


PAGE = """<!doctype html>
<html lang=en><head><meta charset=utf-8><title>geoask workspace</title>
<style>
body {{ font: 15px/1.4 system-ui, sans-serif; margin: 1.5em auto; max-width: 1100px;
       padding: 0 1em; color: #222; }}
.turn {{ border-top: 1px solid #ccc; padding: .5em 0; }}
table {{ border-collapse: collapse; margin: .5em 0; }}
th, td {{ border: 1px solid #ccc; padding: .2em .5em; text-align: left; }}
iframe.map {{ width: 100%; height: 480px; border: 1px solid #ccc; }}
.muted {{ color: #666; }} .error {{ color: #a00; }} .question {{ font-weight: bold; }}
textarea {{ width: 100%; font: inherit; }}
</style></head><body>
<h1>geoask workspace</h1>
<p class=muted>conversation <code>{conversation}</code> - <a href="{new}">new conversation</a></p>
<main id=turns>
{turns}
</main>
<form method=post action="/ask" class=ask>
<input type=hidden name=token value="{token}">
<input type=hidden name=conversation value="{conversation}">
<label>Question<br><textarea name=question rows=3 required></textarea></label><br>
<label>Model <select name=model>{models}</select></label>
<button type=submit>Ask</button>
</form>
</body></html>
"""
