"""`geoask db down` in the middle of `geoask bench`: how fast and how loudly it ends; resume.

Run against a home of its own, never the shared one (``db down`` stops that home's cluster and
its Prefect server; the demo data must be loaded there: ``geoask db up && geoask db load``)::

    GEOASK_HOME=/tmp/h GEOASK_DB_PORT=55442 GEOASK_SERVER_PORT=4210 PYTHONPATH=. \
        .venv/bin/python benchmark/infrastructure_loss.py [--limit 40] [--after 5]

It starts ``geoask bench --model reference --limit N --fresh`` (a fresh ``--out`` under /tmp),
waits until ``--after`` questions are saved, runs ``geoask db down`` and prints, as measured:

- seconds from the start of ``db down`` (which stops the Prefect server, then the cluster), and
  from the moment the server's record goes (the first thing ``geoask server`` does on SIGTERM;
  older servers delete it last), to the benchmark's exit (``--give-up`` s at most: then it is
  sent SIGTERM), its exit code and the bytes and lines it wrote on stdout + stderr after
  ``db down`` began;
- the questions saved before the rerun, answered and failed on infrastructure;
- after ``geoask db up``, the rerun's exit code and wall time and the questions answered in all
  (all N when nothing was lost).

Run it with ``PYTHONPATH=<an older checkout>`` to measure that code.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GEOASK = [sys.executable, "-m", "geoask"]


def saved_runs(out: Path) -> list[dict[str, object]]:
    """The question runs saved under ``out`` (one JSON file each)."""
    runs = []
    for path in (out / "runs").glob("*/*/repeat-*/*.json"):
        try:
            runs.append(json.loads(path.read_text()))
        except (OSError, ValueError):  # being written: counted next time
            continue
    return runs


def infrastructure(run: dict[str, object]) -> bool:
    """Whether a saved run failed on infrastructure (redone by the rerun)."""
    return bool(run.get("infrastructure"))


def main() -> None:
    """Measure and print (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=40)
    parser.add_argument("--after", type=int, default=5, help="questions saved before db down")
    parser.add_argument("--give-up", type=float, default=240.0)
    args = parser.parse_args()
    from geoask.service.state_file import state_path
    from geoask.settings import get_settings

    record = state_path(get_settings())
    out = Path(tempfile.mkdtemp(prefix="geoask-infra-loss-"))
    command = [*GEOASK, "bench", "--model", "reference", "--limit", str(args.limit),
               "--out", str(out), "--fresh"]
    log = out / "bench.log"
    with log.open("wb") as sink:
        bench = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
        while len(saved_runs(out)) < args.after and bench.poll() is None:
            time.sleep(0.2)
        before_down = log.stat().st_size
        down_began = time.monotonic()
        down = subprocess.Popen([*GEOASK, "db", "down"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        exited_at = down_done = unrecorded_at = None
        while exited_at is None and time.monotonic() - down_began < args.give_up:
            if down_done is None and down.poll() is not None:
                down_done = time.monotonic()
            if unrecorded_at is None and not record.exists():
                unrecorded_at = time.monotonic()  # the server got SIGTERM
            if bench.poll() is not None:
                exited_at = time.monotonic()
            time.sleep(0.1)
        down.wait(timeout=300)
        down_done = down_done or time.monotonic()
        if exited_at is None:
            bench.send_signal(signal.SIGTERM)
            bench.wait(timeout=60)
        ended = (f"{exited_at - down_began:.1f} s after db down began"
                 if exited_at is not None else f"not {args.give_up:.0f} s after db down began")
        if exited_at is not None and unrecorded_at is not None:
            ended += (f", {exited_at - unrecorded_at:.1f} s after the server's record went "
                      "(its SIGTERM)")
    text = log.read_bytes()[before_down:]
    runs = saved_runs(out)
    failed = sum(infrastructure(r) for r in runs)
    lines = text.count(b"\n")
    print(f"db down took {down_done - down_began:.1f} s; the benchmark exited {ended} "
          f"(SIGTERM after that), code {bench.returncode}; {len(text):,} bytes, "
          f"{lines:,} lines of output after db down began")
    print("last line:", text.decode(errors="replace").strip().splitlines()[-1:])
    print(f"saved before the rerun: {len(runs)} of {args.limit} ({failed} failed on "
          "infrastructure)")
    subprocess.run([*GEOASK, "db", "up"], capture_output=True, check=False, timeout=300)
    began = time.monotonic()
    rerun = subprocess.run(command[:-1], capture_output=True, check=False, timeout=3600,
                           env=os.environ)
    runs = saved_runs(out)
    answered = sum(not infrastructure(r) for r in runs)
    print(f"rerun: code {rerun.returncode} in {time.monotonic() - began:.0f} s; "
          f"{answered} of {args.limit} questions saved without an infrastructure failure")
    print(f"(output folder {out})")


if __name__ == "__main__":
    main()
