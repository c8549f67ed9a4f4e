"""Read text input with a cap: never more than the cap plus one character from a file or stream.

Every reader of text a user hands geoask (SQL for ``sql check``/``sql run``, scripts for
``sandbox run``/``cells``, benchmark case and conversation files, dataset manifests, catalog
YAML, SQL fixture files) goes through :func:`read_capped_text`. It decodes at most
``max_chars + 1`` characters, so ``geoask sql check /dev/zero`` reads about 20 KB, not the
whole device, and input past the cap is refused with one line (never cut short and used).

The caps of the kinds of input that have no setting of their own are here, in one place.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import BinaryIO

from geoask.errors import InputTooLargeError

MAX_SCRIPT_CHARS = 1_000_000
"""Longest Python script or cell ``geoask sandbox run|cells`` reads (characters)."""
MAX_DOCUMENT_CHARS = 64 * 1024 * 1024
"""Longest YAML or fixture document read: catalogs, case and conversation files, manifests."""


def read_capped_text(source: Path | BinaryIO, max_chars: int, *, what: str,
                     setting: str | None = None, encoding: str = "utf-8") -> str:
    """The text of ``source`` (a path, or a binary stream such as ``sys.stdin.buffer``).

    At most ``max_chars + 1`` characters are decoded; line endings are kept as written. A
    stream is left open.

    >>> read_capped_text(io.BytesIO(b"SELECT 1"), 20, what="SQL")
    'SELECT 1'
    >>> stream = io.BytesIO(bytes(10**6))
    >>> try:
    ...     read_capped_text(stream, 5, what="SQL from standard input")
    ... except InputTooLargeError as error:
    ...     print(error, stream.tell() < 10**5)
    SQL from standard input holds more than 5 characters; nothing was used - pass a shorter one True

    Args:
        source: file path or open binary stream.
        max_chars: the cap (characters).
        what: what is read, for the message (``"SQL file q.sql"``).
        setting: the setting that sets the cap, named in the message when there is one.
        encoding: text encoding (``utf-8-sig`` drops a leading byte-order mark).

    Raises:
        InputTooLargeError: the input holds more than ``max_chars`` characters.
        OSError: the file cannot be opened or read.
        UnicodeDecodeError: the bytes read are not valid in ``encoding``.

    """
    if isinstance(source, Path):
        with source.open("rb") as handle:
            text = _read_at_most(handle, max_chars + 1, encoding)
    else:
        text = _read_at_most(source, max_chars + 1, encoding)
    if len(text) > max_chars:
        where = f" ({setting})" if setting else ""
        raise InputTooLargeError(
            f"{what} holds more than {max_chars:,} characters{where}; nothing was used - "
            "pass a shorter one")
    return text


def _read_at_most(stream: BinaryIO, chars: int, encoding: str) -> str:
    """Decode at most ``chars`` characters of ``stream``; the stream stays open."""
    wrapper = io.TextIOWrapper(stream, encoding=encoding, newline="")
    try:
        return wrapper.read(chars)
    finally:
        wrapper.detach()  # closing the wrapper would close the caller's stream
