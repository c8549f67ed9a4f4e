"""`geoask bench --fresh` deletes persisted runs only (attack finding: it removed all of runs/)."""

from __future__ import annotations

from geoask.bench.runs import clear_runs


def test_fresh_removes_run_files_and_keeps_anything_else(tmp_path):
    runs = tmp_path / "runs"
    run_files = [runs / "reference" / "FULL" / f"repeat-{k}" / f"case-{k}.json" for k in (0, 1)]
    kept = [runs / "thesis.tex", runs / "reference" / "notes" / "n.json"]
    for path in (*run_files, *kept):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}")
    assert clear_runs(tmp_path) == 2
    assert not any(path.exists() for path in run_files)
    assert all(path.exists() for path in kept)
    assert not (runs / "reference" / "FULL").exists()  # emptied folders go too
    assert clear_runs(tmp_path / "nothing-here") == 0
