"""The scale cases through the question flow: ``geoask bench`` (reference model) at one size.

Used by ``benchmark/scale.py`` (``make scale-benchmark``). At the size the committed expected
values were filled at the case file is used as it is (pointed at its database); at another size
the expected values are first filled on that database by the reference programs (``geoask bench
fill``), so SSA measures the flow, not a database of another size. Then ``geoask bench
--variant FULL,POSTGIS --model reference`` answers the 30 questions through the whole flow
(intent, schema retrieval over the 265-table catalog, plan, SQL guard and export, sandbox,
review, answer) and its ``report.json`` gives SSA and the mean time per question of each variant.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

PYTHON = sys.executable
GEOASK = [PYTHON, "-c", "from geoask.app.cli import main; main()"]
VARIANTS = ("FULL", "POSTGIS")


@dataclass(frozen=True)
class FlowScore:
    """One variant's result over the scale cases at one size."""

    variant: str
    ssa: float
    cases: int
    mean_s: float
    failed: tuple[str, ...]


def refilled(case_file: Path) -> Path:
    """``case_file`` with its expected values recomputed on the database it names.

    Raises:
        subprocess.CalledProcessError: ``geoask bench fill`` failed.

    """
    doc = yaml.safe_load(case_file.read_text(encoding="utf-8"))
    for case in doc["cases"]:
        case["expected"]["value"] = None
    case_file.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    subprocess.run([*GEOASK, "bench", "fill", "--tasks-file", str(case_file)], check=True,
                   stdout=subprocess.DEVNULL)
    return case_file


def flow_scores(case_file: Path, out: Path) -> list[FlowScore]:
    """Run ``geoask bench`` on ``case_file`` (FULL and POSTGIS) into ``out``; the scores.

    Questions that failed on infrastructure (on a loaded machine: a database connection that
    timed out) are redone once by a second run, which resumes from the saved ones.
    """
    command = [*GEOASK, "bench", "--model", "reference", "--variant", ",".join(VARIANTS),
               "--tasks-file", str(case_file), "--out", str(out)]
    subprocess.run([*command, "--fresh"], check=False, stdout=subprocess.DEVNULL)
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    if report["meta"].get("infrastructure_failures"):
        subprocess.run(command, check=False, stdout=subprocess.DEVNULL)
        report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    scores = []
    for variant in VARIANTS:
        group = next(g for g in report["groups"]
                     if g["variant"] == variant and g["dimension"] == "overall")
        failed = tuple(s["case_id"] for s in report["scores"]
                       if s["variant"] == variant and not s["ssa"])
        scores.append(FlowScore(variant, group["ssa"], group["cases"], group["mean_time_s"],
                                failed))
    return scores


def run_flow(case_file: Path, size: int, filled_at: int, out: Path) -> list[FlowScore]:
    """SSA of the scale cases at ``size`` through the flow; prints one line per variant."""
    started = time.perf_counter()
    if size != filled_at:
        refilled(case_file)
    scores = flow_scores(case_file, out)
    for score in scores:
        failed = f"  failed: {', '.join(score.failed)}" if score.failed else ""
        print(f"flow {size:>9} {score.variant:<8} SSA {score.ssa:.1%} of {score.cases}, "
              f"{score.mean_s:.1f} s per question{failed}", flush=True)
    print(f"flow {size:>9}: {time.perf_counter() - started:.0f} s (report: {out}/report.md)")
    return scores
