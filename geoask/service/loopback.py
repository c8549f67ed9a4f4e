"""A threaded HTTP server on a free loopback port: the warm worker's and the workspace page's.

:class:`LoopbackServer` listens on ``127.0.0.1`` (never another interface), on a port the
kernel picks, in a daemon thread, and hands every request of the given methods to one
``handle`` callable; a daemon thread per request, so a slow question does not block the next.
Its users (:mod:`geoask.service.worker`, :mod:`geoask.service.workspace`) check their own token.
The debug log of requests drops every query string (``?token=...``): a token never reaches a log.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from geoask.base.ports import LOOPBACK

logger = logging.getLogger(__name__)
QUERY = re.compile(r"\?\S*")
"""A request line's query string (it may carry a token): logged as ``?...``."""


class LoopbackServer:
    """An HTTP server on ``127.0.0.1:<free port>`` answering ``methods`` with ``handle``.

    Args:
        handle: called with each request's handler (it writes the reply).
        name: the thread's name and the debug log's prefix.
        methods: the HTTP methods answered (others get the standard 501).

    """

    def __init__(self, handle: Callable[[BaseHTTPRequestHandler], None], name: str,
                 methods: tuple[str, ...]) -> None:
        self.name = name
        self._handle = handle
        self._methods = methods
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>`` (raises RuntimeError before :meth:`start`)."""
        if self._server is None:
            raise RuntimeError(f"{self.name} is not started")
        return f"http://{LOOPBACK}:{self._server.server_address[1]}"

    def start(self) -> str:
        """Listen in a daemon thread; return :attr:`url`."""
        handle, name = self._handle, self.name

        def answer(request: BaseHTTPRequestHandler) -> None:
            handle(request)

        def log_message(request: BaseHTTPRequestHandler, format: str, *args: Any) -> None:
            logger.debug("%s: %s", name, QUERY.sub("?...", format % args))

        members: dict[str, Any] = {f"do_{method}": answer for method in self._methods}
        handler = type("Handler", (BaseHTTPRequestHandler,),
                       {**members, "log_message": log_message})
        self._server = ThreadingHTTPServer((LOOPBACK, 0), handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, name=name, daemon=True).start()
        return self.url

    def stop(self) -> None:
        """Stop listening (requests being answered end with the process)."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
