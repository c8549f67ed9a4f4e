"""A question run's artifacts: files through fsspec, and Prefect artifacts with stable keys.

Files go under ``<artifact root>/<run id>/`` (``GEOASK_ARTIFACT_ROOT``, default
``<home>/artifacts``): ``sql-1/<name>.geojson|json|tif`` (:mod:`geoask.base.formats`) and
``.preview.json``, ``sql-1/attempt-<n>.sql``, ``python-1/script-<n>.py``,
``python-1/stdout.txt``, ``python-1/result.json``, ``answer.json``, ``summary.md``,
``execution_log.json``.

Prefect artifacts use stable keys so the UI keeps one history per key, one artifact per stage
(each is a request and a database write on the Prefect server): ``run-intent``, ``run-plan``,
``<step>-sql`` (the SQL, each export's file and preview), ``<step>-script`` (the script and its
sandbox run), ``run-summary`` (answer, map, trace, registry, files).
"""

from __future__ import annotations

import json
import logging
import posixpath
import re
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Protocol

import fsspec
from fsspec.implementations.local import LocalFileSystem

from geoask.base.storage import filesystem_for, write_atomic
from geoask.errors import ArtifactWriteError
from geoask.records.artifact_publisher import submit
from geoask.sql.export import dumps_exact

_KEY_CHARS = re.compile(r"[^a-z0-9-]+")
_MARKDOWN_INLINE = re.compile(r"([\\`*_{}\[\]()<>!|~#])")
_LANGUAGE = re.compile(r"[^A-Za-z0-9_+-]")
logger = logging.getLogger(__name__)


class ArtifactStore(Protocol):
    """Where a run's files go; :class:`RunArtifacts` (any fsspec URL, ``memory://`` in tests)."""

    folder: str

    def url(self, relative: str) -> str:
        """URL of ``relative`` inside the run folder."""
        ...

    def write_text(self, relative: str, text: str) -> str:
        """Write ``text`` (UTF-8) to ``relative``; return its URL."""
        ...

    def read_text(self, url: str) -> str:
        """Read a file of this store."""
        ...

    def read_bytes(self, url: str) -> bytes:
        """Read a file of this store as bytes (a binary export: GeoParquet, GeoTIFF)."""
        ...

    def local_path(self, url: str) -> Path:
        """A local file holding ``url`` (the file itself when local, else a downloaded copy)."""
        ...


class RunArtifacts:
    """:class:`ArtifactStore` over fsspec: one folder per run under ``root_url``.

    Args:
        root_url: fsspec URL or local path of the artifact root.
        run_id: the run's id (the folder name).

    """

    def __init__(self, root_url: str, run_id: str) -> None:
        self.folder = f"{root_url.rstrip('/')}/{run_id}"
        self._downloads: Path | None = None

    def url(self, relative: str) -> str:
        """URL of ``relative`` inside the run folder."""
        return f"{self.folder}/{relative.lstrip('/')}"

    def write_text(self, relative: str, text: str) -> str:
        """Write ``text`` to ``relative`` atomically; return its URL.

        Raises:
            ArtifactWriteError: the file could not be written.

        """
        target = self.url(relative)
        write_atomic(target, text.encode("utf-8"))
        return target

    def write_json(self, relative: str, payload: Any) -> str:
        """Write ``payload`` as JSON to ``relative``; return its URL."""
        return self.write_text(relative, json.dumps(payload, ensure_ascii=False, indent=2,
                                                    default=str))

    def read_text(self, url: str) -> str:
        """Read a file (any fsspec URL) as UTF-8 text.

        Raises:
            ArtifactWriteError: the file cannot be read.

        """
        try:
            with fsspec.open(url, "rt", encoding="utf-8") as handle:
                return str(handle.read())
        except OSError as error:
            raise ArtifactWriteError(f"cannot read artifact {url}: {error}") from None

    def read_bytes(self, url: str) -> bytes:
        """Read a file (any fsspec URL) as bytes.

        Raises:
            ArtifactWriteError: the file cannot be read.

        """
        try:
            with fsspec.open(url, "rb") as handle:
                return bytes(handle.read())
        except OSError as error:
            raise ArtifactWriteError(f"cannot read artifact {url}: {error}") from None

    def local_path(self, url: str) -> Path:
        """A local file with the content of ``url`` (for mounting into the sandbox)."""
        fs, path = filesystem_for(url)
        if isinstance(fs, LocalFileSystem):
            return Path(path)
        if self._downloads is None:
            self._downloads = Path(tempfile.mkdtemp(prefix="geoask-inputs-"))
        local = self._downloads / posixpath.basename(path)
        fs.get_file(path, str(local))
        return local


def artifact_key(*parts: str) -> str:
    """A Prefect artifact key (lower-case letters, digits, dashes) from ``parts``.

    >>> artifact_key("sql-1", "Preview")
    'sql-1-preview'
    """
    return _KEY_CHARS.sub("-", "-".join(parts).lower()).strip("-")


class Markdown(str):
    r"""Markdown whose markup geoask wrote; text joined into it is escaped unless it is Markdown.

    The one escaping rule of the run pages: whatever a model, a user or a database wrote - a
    question, an intent's target, a plan's objective, a value - enters a page through
    :meth:`format`, :meth:`join` or ``+`` and is escaped there (:func:`markdown_text`: shown as
    typed, no link, image, HTML or new line); a code block, span or table built here is
    already ``Markdown`` and joins as is. :func:`publish_markdown` takes only ``Markdown``, so a
    builder cannot hand the UI a plain string.

    >>> Markdown("# {}").format("[x](javascript:1)")
    '# \\[x\\]\\(javascript:1\\)'
    >>> Markdown("\n").join([Markdown("**a**"), "<b>"])
    '**a**\n\\<b\\>'
    """

    __slots__ = ()

    def format(self, *args: object, **kwargs: object) -> Markdown:
        """``str.format`` with every argument escaped unless it is Markdown (numbers kept)."""
        return Markdown(str.format(self, *map(_safe, args),
                                   **{name: _safe(value) for name, value in kwargs.items()}))

    def join(self, parts: Iterable[object]) -> Markdown:
        """``str.join`` with every part escaped unless it is Markdown."""
        return Markdown(str.join(self, (str(_safe(part)) for part in parts)))

    def __add__(self, other: str) -> Markdown:
        """Concatenation; ``other`` escaped unless it is Markdown."""
        return Markdown(str.__add__(self, str(_safe(other))))


def _safe(value: object) -> object:
    if isinstance(value, Markdown | bool | int | float):
        return value
    return markdown_text(value)


def publish_markdown(key: str, markdown: Markdown, description: str = "") -> None:
    """Queue a Prefect markdown artifact (:mod:`geoask.records.artifact_publisher`).

    ``markdown`` is :class:`Markdown`: built so that model and database text is escaped.
    """
    from prefect.artifacts import MarkdownArtifact

    if not isinstance(markdown, Markdown):
        raise TypeError("publish_markdown takes Markdown (geoask.records.run_artifacts), so "
                        "that model and database text is escaped")
    _publish(lambda: MarkdownArtifact(key=key, markdown=str(markdown),
                                      description=markdown_text(description)))


def publish_table(key: str, rows: list[dict[str, Any]], description: str = "") -> None:
    """Queue a Prefect table artifact of ``rows`` (values shown as text)."""
    from prefect.artifacts import TableArtifact

    table = [{str(k): _cell(v) for k, v in row.items()} for row in rows]
    _publish(lambda: TableArtifact(key=key, table=table, description=description))


def code_block(text: str, language: str = "") -> Markdown:
    r"""``text`` as a fenced markdown code block (its fence longer than any backtick run in it).

    >>> code_block("a ```` b")
    '`````\na ```` b\n`````'
    """
    fence = "`" * max(3, _longest_backticks(text) + 1)
    return Markdown(f"{fence}{_LANGUAGE.sub('', language)}\n{text}\n{fence}")


def code_span(text: str) -> Markdown:
    """``text`` as an inline code span (its delimiter longer than any backtick run in it).

    >>> code_span("/a/run-1")
    '`/a/run-1`'
    """
    longest = _longest_backticks(text)
    tick = "`" * (longest + 1)
    return Markdown(f"{tick} {text} {tick}" if longest else f"{tick}{text}{tick}")


def file_link(url: str, text: str | None = None) -> Markdown:
    """A markdown link to a run file: ``[name](<file:///...>)`` (any fsspec URL kept as is).

    The link text is the file's name (or ``text``), escaped as literal text; the target is in
    angle brackets, with the characters that would end it percent-encoded.

    >>> file_link("/a/run 1/map.html")
    '[map.html](<file:///a/run%201/map.html>)'
    >>> file_link("s3://b/r/map.png", "map")
    '[map](<s3://b/r/map.png>)'
    """
    target = url if "://" in url else f"file://{url}"
    target = target.replace(" ", "%20").replace("<", "%3C").replace(">", "%3E")
    label = markdown_text(text or url.rstrip("/").rsplit("/", 1)[-1])
    return Markdown(f"[{label}](<{target}>)")


def _longest_backticks(text: str) -> int:
    """Length of the longest run of backticks in ``text`` (0: none)."""
    return max((len(run) for run in re.findall(r"`+", text)), default=0)


def markdown_text(value: Any) -> Markdown:
    r"""``value`` as literal text inside a markdown line: inline syntax escaped, breaks as spaces.

    For text that is data or user input (a question, an answer's message, a database value):
    it shows as typed - no link, image, HTML, emphasis or new heading/list line.

    >>> print(markdown_text("[x](javascript:1) <img>\n# h"))
    \[x\]\(javascript:1\) \<img\> \# h
    """
    text = value if isinstance(value, str) else str(value)
    return Markdown(_MARKDOWN_INLINE.sub(r"\\\1", text).replace("\r", " ").replace("\n", " "))


def markdown_table(rows: list[dict[str, Any]]) -> Markdown:
    """``rows`` as a markdown table (the columns of the first row).

    Cells are data (a database's values): markdown's inline syntax in them is escaped, so a
    value shows as typed - no link, image or HTML - and line breaks become spaces.

    >>> print(markdown_table([{"stage": "sql-1", "n": 12.5}]))
    | stage | n |
    |---|---|
    | sql-1 | 12.5 |
    """
    if not rows:
        return Markdown("(no rows)")
    columns = list(rows[0])

    def cell(value: Any) -> str:
        return markdown_text(value if isinstance(value, str) else _cell(value))

    lines = ["| " + " | ".join(cell(c) for c in columns) + " |",
             "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(row.get(c)) for c in columns) + " |" for row in rows]
    return Markdown("\n".join(lines))


def _publish(make: Callable[[], Any]) -> None:
    # Artifacts are a view for the UI; the files under the run folder are the record. A UI
    # that is down must not fail the question, nor make it wait: they are posted in the
    # background (geoask.records.artifact_publisher).

    try:
        submit(make())
    except Exception as error:  # any client failure is only logged
        logger.warning("could not create Prefect artifact: %s", error)


def _cell(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    try:
        return dumps_exact(value)  # an exact numeric shows as its digits
    except TypeError:
        return json.dumps(value, default=str)


__all__ = [
    "ArtifactStore",
    "ArtifactWriteError",
    "Markdown",
    "RunArtifacts",
    "artifact_key",
    "code_block",
    "code_span",
    "markdown_table",
    "markdown_text",
    "publish_markdown",
    "publish_table",
]
