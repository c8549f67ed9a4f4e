"""The one-line form of a text in an execution state's lines (attempts, decisions)."""

from __future__ import annotations


def one_line(text: str, limit: int = 240) -> str:
    r"""``text`` on one line, cut to ``limit`` characters (ending ``...``).

    >>> one_line("a\n  b"), one_line("x" * 10, 6)
    ('a b', 'xxx...')
    """
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
