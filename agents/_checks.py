"""What every agent's output validator shares: turning failed checks into ``ModelRetry``."""

from __future__ import annotations

from typing import TypeVar

from pydantic_ai import ModelRetry

T = TypeVar("T")


def raise_for_errors(errors: list[str], output: T) -> T:
    """Return ``output`` when ``errors`` is empty; otherwise raise ``ModelRetry`` listing them.

    Raises:
        ModelRetry: with one numbered line per broken rule, so the model can fix all at once.

    """
    if not errors:
        return output
    if len(errors) == 1:
        raise ModelRetry(f"Fix this and answer again: {errors[0]}")
    lines = "\n".join(f"{n}. {error}" for n, error in enumerate(errors, start=1))
    raise ModelRetry(f"Fix these and answer again:\n{lines}")
