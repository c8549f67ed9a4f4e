"""A real language model through geoask, end to end: outcome classes, latency, tokens, SSA.

Runs ``geoask bench`` (demo cases, SQL-only and SQL+Python) and one conversation
(``geoask bench conversations run``) with a real model - by default the local SmolLM2-135M of
``make local-model`` - under FULL and REACT, once per output mode, beside the offline
reference model, and prints per model and mode:

- outcome classes: answered right, answered wrong, honest failure by cause (the run's typed
  failure: output broke the rules, model endpoint, SQL/sandbox, step budget...), crash (a
  run that raised instead of ending in a typed outcome), hang (a bench that outlived
  ``--hang-s``);
- per-call latency p50/p95 (each model request of each call, from the transcripts), prompt
  and completion tokens, context overflows, HTTP errors, raw tracebacks printed;
- SSA (strict structured accuracy) per variant, however low.

Usage (the server of ``make local-model`` running; not part of make test)::

    nice -n 10 python benchmark/real_model.py --limit 20 --modes tool,native,prompted
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from geoask import errors

GEOASK = [sys.executable, "-m", "geoask"]
LOCAL_MODEL = "openai-compatible:smollm2-135m"
CAUSES = (
    ("output broke", "output broke the rules"),
    ("token limit", "output cut at the token limit"),
    ("step budget", "step budget used up"),
    ("context window", "context overflow"),
    ("model endpoint", "model endpoint"),
    ("HTTP", "model endpoint"),
    ("guard", "SQL guard"),
    ("sandbox", "sandbox"),
    ("refus", "refusal"),
    ("reject", "rejected"),
    ("could not answer this question", "the agent gave up"),
)


def _run(argv: list[str], env: dict[str, str], hang_s: float) -> tuple[str, bool]:
    """Run ``argv``; its stdout + stderr and whether it hung (killed after ``hang_s``)."""
    try:
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=hang_s,
                              check=False)
    except subprocess.TimeoutExpired as timeout:
        return _text(timeout.stdout) + _text(timeout.stderr), True
    return done.stdout + done.stderr, False


def run_bench(model: str, mode: str, variants: str, limit: int, out: Path, hang_s: float,
              base_env: dict[str, str]) -> dict[str, Any]:
    """One ``geoask bench`` run; its report, wall time, tracebacks and whether it hung."""
    env = {**base_env, "GEOASK_OUTPUT_MODE": mode}
    argv = [*GEOASK, "bench", "--model", model, "--variant", variants, "--limit", str(limit),
            "--out", str(out), "--fresh"]
    began = time.perf_counter()
    output, hung = _run(argv, env, hang_s)
    report_file = out / "report.json"
    report = json.loads(report_file.read_text()) if report_file.exists() else {}
    return {"report": report, "wall_s": time.perf_counter() - began, "hung": hung,
            "tracebacks": output.count("Traceback (most recent call last)"),
            "tail": output.strip().splitlines()[-3:]}


def run_conversation(model: str, mode: str, conversation: str, out: Path, hang_s: float,
                     base_env: dict[str, str]) -> dict[str, Any]:
    """One conversation through ``geoask bench conversations run``; its turns' outcomes."""
    env = {**base_env, "GEOASK_OUTPUT_MODE": mode}
    argv = [*GEOASK, "bench", "conversations", "run", "--model", model, "--only", conversation,
            "--out", str(out), "--no-standalone"]
    output, hung = _run(argv, env, hang_s)
    data_file = out / "conversations.json"
    runs = json.loads(data_file.read_text())["runs"] if data_file.exists() and not hung else []
    return {"runs": runs, "hung": hung,
            "tracebacks": output.count("Traceback (most recent call last)")}


def _text(value: str | bytes | None) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else value or ""


def outcome_class(score: dict[str, Any], run: dict[str, Any]) -> str:
    """The outcome class of one case: answered right or wrong, failure by cause, crash.

    A crash is a run that raised an exception geoask does not know - its message starts with
    an exception's name that is no :class:`geoask.errors.GeoaskError` (``KeyError: ...``) -
    instead of ending in a typed outcome (``ModelCallError: ...`` is one); a failure of what
    the run stands on (database, index, model endpoint down) is ``failure: infrastructure``.
    """
    message = run.get("message") or ""
    if score.get("ssa"):
        return "answered right"
    if score.get("answered"):
        return "answered wrong"
    if run.get("infrastructure"):
        return "failure: infrastructure"
    raised = re.match(r"^([A-Z]\w*(?:Error|Exception)): ", message)
    if run.get("status") == "error" and raised and not _typed(raised.group(1)):
        return "crash"
    for needle, cause in CAUSES:
        if needle.lower() in message.lower():
            return f"failure: {cause}"
    return f"failure: {score.get('outcome', 'unknown')}"


def _typed(name: str) -> bool:
    """True when ``name`` is one of geoask's typed errors (a ``GeoaskError`` subclass)."""
    found = getattr(errors, name, None)
    return isinstance(found, type) and issubclass(found, errors.GeoaskError)


def case_runs(out: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """(variant, case id) -> the persisted case run of a bench folder."""
    runs = {}
    for path in out.glob("runs/*/*/repeat-*/*.json"):
        run = json.loads(path.read_text())
        runs[(run["variant"], run["case_id"])] = run
    return runs


def call_figures(folders: list[str]) -> dict[str, Any]:
    """Latency p50/p95 per request, tokens, HTTP errors, context overflows, modes seen."""
    latencies: list[float] = []
    prompt = completion = http_errors = overflows = calls = 0
    modes: Counter[str] = Counter()
    for folder in folders:
        for path in Path(folder).glob("calls/*.json"):
            call = json.loads(path.read_text())
            calls += 1
            modes[call["output_mode"]] += 1
            overflows += "context window" in (call.get("error") or "")
            for request in call["requests"]:
                latencies.append(request["latency_ms"])
                prompt += request["input_tokens"]
                completion += request["output_tokens"]
                http_errors += request.get("status_code") is not None
    quantiles = statistics.quantiles(latencies, n=20) if len(latencies) >= 2 else latencies * 19
    return {"calls": calls, "requests": len(latencies),
            "p50_ms": round(statistics.median(latencies), 1) if latencies else None,
            "p95_ms": round(quantiles[18], 1) if quantiles else None,
            "prompt_tokens": prompt, "completion_tokens": completion,
            "http_errors": http_errors, "context_overflows": overflows, "modes": dict(modes)}


def summarize(label: str, bench: dict[str, Any], out: Path) -> dict[str, Any]:
    """The figures of one bench run: classes and SSA per variant, call figures."""
    runs = case_runs(out)
    classes: dict[str, Counter[str]] = {}
    ssa: dict[str, float] = {}
    for score in bench["report"].get("scores", []):
        run = runs.get((score["variant"], score["case_id"]), {})
        kind = outcome_class(score, run)
        classes.setdefault(score["variant"], Counter())[kind] += 1
    for variant, counter in classes.items():
        total = sum(counter.values())
        ssa[variant] = round(counter["answered right"] / total, 3) if total else 0.0
    if bench["hung"]:
        classes.setdefault("all", Counter())["hang"] += 1
    figures = call_figures([run["artifact_folder"] for run in runs.values()
                            if run.get("artifact_folder")])
    return {"label": label, "wall_s": round(bench["wall_s"], 1), "ssa": ssa,
            "classes": {variant: dict(counter) for variant, counter in classes.items()},
            "raw_tracebacks": bench["tracebacks"], **figures}


def main() -> None:
    """Run the benchmark per model and output mode; print and save the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=LOCAL_MODEL)
    parser.add_argument("--modes", default="tool,native,prompted")
    parser.add_argument("--variants", default="FULL,REACT")
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--conversation", default="nc_airports-001")
    parser.add_argument("--hang-s", type=float, default=5400.0,
                        help="A bench running longer than this counts as a hang.")
    parser.add_argument("--out", type=Path, default=Path(".geoask/real-model"))
    parser.add_argument("--no-reference", action="store_true")
    args = parser.parse_args()
    base_env = dict(os.environ)
    results = []
    runs = [("reference", "tool")] if not args.no_reference else []
    runs += [(args.model, mode) for mode in args.modes.split(",") if mode]
    for model, mode in runs:
        label = f"{model} [{mode}]"
        out = args.out / f"{model.replace(':', '_')}-{mode}"
        bench = run_bench(model, mode, args.variants, args.limit, out / "bench", args.hang_s,
                          base_env)
        figures = summarize(label, bench, out / "bench")
        if args.conversation:
            talk = run_conversation(model, mode, args.conversation, out / "conversation",
                                    args.hang_s, base_env)
            figures["conversation"] = [
                {"turn": run["turn"], "status": run["status"], "correct": run["correct"]}
                for run in talk["runs"]] or ("hang" if talk["hung"] else "no turns")
            figures["raw_tracebacks"] += talk["tracebacks"]
        results.append(figures)
        print(json.dumps(figures), flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "figures.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
