"""An in-memory :class:`sandbox.models.Sandbox` for unit tests of the components that call it.

>>> fake = FakeSandbox()
>>> fake.run('print("hi")').status
'success'
>>> fake.calls[0].script
'print("hi")'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sandbox.models import ProtocolResult, SandboxLimits, SandboxOutcome, TextExcerpt


@dataclass(frozen=True)
class FakeCall:
    """One recorded :meth:`FakeSandbox.run` call."""

    script: str
    inputs: tuple[Path, ...]
    limits: SandboxLimits | None


def success_outcome(
    result: dict[str, object] | list[object], summary: str = "done"
) -> SandboxOutcome:
    """Build the outcome of a script that printed ``{"status": "success", ...}``."""
    protocol = ProtocolResult(status="success", summary=summary, result=result)
    text = protocol.model_dump_json()
    return SandboxOutcome(
        status="success", protocol=protocol, exit_code=0, wall_time_s=0.0, cpu_time_s=0.0,
        peak_memory_mib=0.0, stdout=TextExcerpt(text=text, total_chars=len(text), truncated=False),
        stderr=TextExcerpt(text="", total_chars=0, truncated=False),
    )


@dataclass
class FakeSandbox:
    """Returns scripted outcomes without running anything and records every call.

    Args:
        respond: maps a script to its outcome; by default every script succeeds with
            ``result={}``. Use it to script failures for the correction loop.

    """

    respond: Callable[[str], SandboxOutcome] = field(default=lambda _script: success_outcome({}))
    calls: list[FakeCall] = field(default_factory=list)

    def run(
        self, script: str, inputs: Sequence[Path] = (), limits: SandboxLimits | None = None
    ) -> SandboxOutcome:
        """Record the call and return ``respond(script)``."""
        self.calls.append(FakeCall(script, tuple(Path(path) for path in inputs), limits))
        return self.respond(script)
