"""What each variant sends and runs per question, from a finished benchmark's persisted runs.

Run after ``geoask bench --variant all`` (any model, any ``--repeat``)::

    .venv/bin/python benchmark/variant_costs.py OUT_DIR [--model reference]

It reads every ``OUT_DIR/runs/<model>/<variant>/repeat-<k>/<case>.json`` (the execution log of
each question run) and prints one row per variant, medians and means over its runs:

- agents: agent runs per question (``model_calls``), requests: model requests per question
  (an agent run makes several when it calls tools or retries its output);
- prompt/request: prompt tokens per model request (what a request resends grows with a
  ReAct agent's history of tool results);
- prompt, completion: tokens per question, as the report counts them;
- tool calls: SQL statements, sandbox runs and schema inspections per question
  (:func:`geoask.bench.evaluate.score.tool_call_count`);
- failed: failed tool uses and model calls per question;
- time: the run's wall time per question (s).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

from geoask.bench.evaluate.score import tool_call_count  # noqa: E402
from geoask.records.execution_log import ExecutionLog  # noqa: E402

COLUMNS = ("agents", "requests", "prompt/request", "prompt", "completion", "tool calls",
           "failed", "time (s)")


def run_figures(run: dict[str, object]) -> dict[str, float] | None:
    """The figures of one persisted run (None when it has no execution log)."""
    if not run.get("log"):
        return None
    log = ExecutionLog.model_validate(run["log"])
    requests = sum(call.requests for call in log.model_calls)
    prompt = sum(call.prompt_tokens for call in log.model_calls)
    return {
        "agents": len(log.model_calls), "requests": requests,
        "prompt/request": prompt / requests if requests else 0.0, "prompt": prompt,
        "completion": sum(call.completion_tokens for call in log.model_calls),
        "tool calls": tool_call_count(log), "failed": log.failed_calls,
        "time (s)": float(run.get("time_s", 0.0)),  # type: ignore[arg-type]
    }


def main() -> None:
    """Print the table (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--model", default="reference")
    args = parser.parse_args()
    root = args.out_dir / "runs" / args.model
    if not root.is_dir():
        raise SystemExit(f"no runs of model {args.model} under {args.out_dir}/runs")
    print(f"{'variant':<13} {'runs':>5} " + " ".join(f"{c:>15}" for c in COLUMNS))
    print("(each cell: median / mean per question)")
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        figures = [f for path in sorted(folder.glob("repeat-*/*.json"))
                   if (f := run_figures(json.loads(path.read_text()))) is not None]
        if not figures:
            continue
        cells = []
        for column in COLUMNS:
            values = [f[column] for f in figures]
            cells.append(f"{statistics.median(values):>7.1f}/{statistics.fmean(values):<7.1f}")
        print(f"{folder.name:<13} {len(figures):>5} " + " ".join(cells))


if __name__ == "__main__":
    main()
