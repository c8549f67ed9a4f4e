"""How a question result reads: plain text for terminals, HTML for notebooks.

:func:`result_text` is what ``geoask ask`` prints and what a result's ``repr()`` shows;
:func:`result_html` is its notebook form (``_repr_html_``): the message, the answer as a table,
the answer map inline (``map.png`` as a data URL, with a link to the interactive ``map.html``),
the evidence trail and the artifact folder. Both read a ``QuestionResult`` (the flow's result
model) by its attributes only, so this core module does not import the flow.
"""

from __future__ import annotations

import base64
import html
import json
import re
from typing import Any, Final

from geoask.base.answer_text import answer_lines, answer_rows

MAX_TABLE_ROWS: Final = 200
__all__ = ["answer_rows", "printable", "result_html", "result_text"]
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 and C1 controls
                      r"\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")  # bidi controls


def result_text(result: Any) -> str:
    """The human-readable report: headline, answer table, evidence, files and dashboard.

    An answer opens with a headline written from its payload
    (:func:`geoask.base.answer_text.headline`) and its summary, then the payload as a compact
    table with values rounded by their unit; a refusal is one line. Then the evidence trail
    (less any line the message already holds, such as a failure report's error notes), the
    route, the paths of the maps and the GeoPackage, the run's dashboard URL and the artifact
    folder.

    Args:
        result: a :class:`geoask.vocabulary.question_result.QuestionResult` (status, message,
            answer, evidence, route, transitions, artifact_folder, maps, geopackage,
            dashboard_url).

    """
    lines = _opening(result)
    said = set((result.message or "").splitlines())
    evidence = [line for line in result.evidence if line not in said]  # no line twice
    if evidence:
        lines += ["", "evidence:", *(f"  {line}" for line in evidence)]
    lines.append("")
    if result.transitions:  # a question rejected as out of scope ran no step
        lines.append(f"route: {result.route}; transitions: {' -> '.join(result.transitions)}")
    for url in getattr(result, "maps", []):
        lines.append(f"{'interactive map' if url.endswith('.html') else 'map'}: {url}")
    if getattr(result, "geopackage", None):
        lines.append(f"GeoPackage (every layer, native CRS): {result.geopackage}")
    if getattr(result, "dashboard_url", None):
        lines.append(f"dashboard: {result.dashboard_url}")
    lines.append(f"artifacts: {result.artifact_folder}")
    return printable("\n".join(lines))


def _opening(result: Any) -> list[str]:
    if result.answer is None:
        message = (" ".join(result.message.split())
                   if getattr(result, "status", "") == "rejected" else result.message)
        return [message]
    return answer_lines(result.answer.answer_type.value, result.answer.data_payload,
                        result.message, getattr(result, "names", None))


def printable(text: str) -> str:
    r"""``text`` safe for a terminal: control characters other than newline and tab escaped.

    Database values reach the answer's message and evidence; an escape sequence in one (say,
    one that sets the terminal's title or clears the screen) is shown, not run, and so is a
    bidi override, which would show the rest of its line reversed.

    >>> printable("Raleigh\x1b]0;pwned\x07 airport"), printable("a\u202eb")
    ('Raleigh\\x1b]0;pwned\\x07 airport', 'a\\u202eb')
    """
    return _CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}" if match.group() < "\u0100"
                        else f"\\u{ord(match.group()):04x}", text)


def quoted_name(name: str) -> str:
    r"""A database name safe in one line of output: as is, or quoted with its escapes shown.

    A name with a character that prints as nothing or moves the cursor (a newline, a tab, an
    escape, a bidi override), with a double quote or a backslash, or with spaces at either
    end is written in double quotes with those characters escaped; any other name is
    unchanged. ``catalog check`` and the catalog's TODO list write one line per problem, so a
    column named ``"a\nb"`` must not start a line of its own.

    >>> quoted_name("pop_2020"), quoted_name("a\nb"), quoted_name("x\u202ey")
    ('pop_2020', '"a\\nb"', '"x\\u202ey"')
    """
    if name and name.isprintable() and name == name.strip() and not set(name) & {'"', "\\"}:
        return name
    escaped = "".join(c if c.isprintable() and c not in '"\\' else
                      c.encode("unicode_escape").decode("ascii") if c != '"' else '\\"'
                      for c in name)
    return f'"{escaped}"'



def result_html(result: Any) -> str:
    """The notebook view of ``result`` (see the module docstring); every text is escaped."""
    status = html.escape(result.status)
    parts = [f"<div><p><b>{status}</b>: {html.escape(result.message)}</p>"]
    if result.answer is not None:
        parts.append(f"<p>answer ({html.escape(result.answer.answer_type.value)})</p>")
        parts.append(table_html(answer_rows(result.answer.data_payload,
                                            getattr(result, "names", None))))
    parts += [_map_html(url) for url in result.maps if url.endswith(".png")]
    parts += [f'<p><a href="{html.escape(_href(url))}" target="_blank">interactive map</a> '
              f"<code>{html.escape(url)}</code></p>"
              for url in result.maps if url.endswith(".html")]
    if result.evidence:
        parts.append("<details><summary>evidence</summary><ul>"
                     + "".join(f"<li>{html.escape(line)}</li>" for line in result.evidence)
                     + "</ul></details>")
    parts.append(f"<p>run <code>{html.escape(result.run_id)}</code>, artifacts "
                 f"<code>{html.escape(result.artifact_folder)}</code></p></div>")
    return "\n".join(parts)


def table_html(rows: list[dict[str, Any]]) -> str:
    """``rows`` as an HTML table (every cell escaped; past ``MAX_TABLE_ROWS`` a count)."""
    columns = list(dict.fromkeys(key for row in rows for key in row))
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(_cell(row.get(c)))}</td>" for c in columns) + "</tr>"
        for row in rows[:MAX_TABLE_ROWS])
    more = (f"<p>{len(rows) - MAX_TABLE_ROWS} more rows in answer.json</p>"
            if len(rows) > MAX_TABLE_ROWS else "")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{more}"


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _map_html(url: str) -> str:
    try:
        import fsspec  # only for the notebook view's map (an import of ~0.1 s)

        with fsspec.open(url, "rb") as handle:
            encoded = base64.b64encode(handle.read()).decode("ascii")
    except OSError:
        return f"<p>map: <code>{html.escape(url)}</code> (not readable here)</p>"
    return f'<img alt="answer map" style="max-width:100%" src="data:image/png;base64,{encoded}">'


def _href(url: str) -> str:
    return url if "://" in url else f"file://{url}"
