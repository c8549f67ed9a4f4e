"""``geoask bench showcase``: one benchmark question's run as a person reads it."""

from __future__ import annotations

import json

from geoask.base.answer_text import answer_lines
from geoask.base.result_view import printable
from geoask.bench.runs import CaseRun


def showcase_text(question: str, run: CaseRun, *, as_json: bool = False) -> str:
    """One showcase block: question, status, answer (as ``geoask ask`` prints it), evidence.

    The answer: :func:`geoask.base.answer_text.answer_lines`; ``as_json``: full-precision JSON.
    """
    answer = run.answer or {}
    lines = [f"\n=== {run.case_id}: {question}", f"status {run.status} in {run.time_s:.1f} s"]
    if answer and as_json:
        lines += [run.message, json.dumps(answer, ensure_ascii=False, indent=1)]
    elif answer:
        lines += answer_lines(str(answer.get("answer_type")), answer.get("data_payload"),
                              run.message, run.names)
    else:
        lines.append(run.message)
    lines += ["", "evidence trail:", *(f"  - {line}" for line in run.evidence)]
    if run.log:
        calls = run.log.get("model_calls") or []
        tokens = sum(c.get("prompt_tokens", 0) + c.get("completion_tokens", 0) for c in calls)
        tools = ", ".join(f"{t['stage']}:{t['tool']}={t['status']}"
                          for t in run.log.get("tool_trace") or [])
        lines += [f"route {run.log.get('route')}; transitions "
                  f"{' → '.join(run.log.get('transitions') or []) or 'none'}; "
                  f"{len(calls)} agent calls, {tokens} tokens",
                  f"tool trace: {tools}"]
    lines.append(f"artifacts: {run.artifact_folder} (SQL, previews, scripts, exported files, "
                 "execution_log.json, summary.md)")
    return printable("\n".join(lines))  # database values: escapes shown, not run
