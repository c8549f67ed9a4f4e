"""The reference program of a case as plan steps: SQL and Python steps consolidated.

Adjacent SQL steps become one SQL step; a chain of Python steps becomes one script that runs
them in order and keeps each intermediate result under ``/scratch``.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass

from geoask.cases.model import REUSE_PREFIX, BenchmarkCase, PythonStep, SqlStep
from geoask.cases.model import SqlStatement as CaseStatement
from geoask.vocabulary.plan import StepKind


@dataclass(frozen=True)
class ReferenceStep:
    """One consolidated plan step of a case.

    Attributes:
        id: plan step id (``sql-1``, ``python-1``...).
        kind: ``sql`` or ``python``.
        objective: the reference steps' objectives, joined.
        statements: SQL statements (SQL steps).
        script: the Python source run in the sandbox (Python steps).
        inputs: ids of the earlier plan steps the script reads, and in a conversation turn
            the earlier turns' artifacts it reuses (``turn-1.sql-1.cells``).

    """

    id: str
    kind: StepKind
    objective: str
    statements: tuple[CaseStatement, ...] = ()
    script: str = ""
    inputs: tuple[str, ...] = ()


def consolidated_steps(case: BenchmarkCase) -> list[ReferenceStep]:
    """The case's reference steps as plan steps: SQL and Python alternate, SQL first.

    Adjacent SQL steps become one SQL step; adjacent Python steps become one script
    (:func:`chained_script`).
    """
    groups: list[list[SqlStep | PythonStep]] = []
    for step in case.reference.steps:
        if groups and type(groups[-1][0]) is type(step):
            groups[-1].append(step)
        else:
            groups.append([step])
    steps: list[ReferenceStep] = []
    counters = {StepKind.SQL: 0, StepKind.PYTHON: 0}
    for group in groups:
        kind = StepKind.SQL if isinstance(group[0], SqlStep) else StepKind.PYTHON
        counters[kind] += 1
        step_id = f"{kind.value}-{counters[kind]}"
        objective = " Then: ".join(step.objective for step in group)
        if kind is StepKind.SQL:
            statements = tuple(s for step in group if isinstance(step, SqlStep)
                               for s in step.statements)
            steps.append(ReferenceStep(step_id, kind, objective, statements=statements))
        else:
            scripts = [step for step in group if isinstance(step, PythonStep)]
            earlier = [s.id for s in steps if s.kind is StepKind.SQL]
            reused = [name for step in scripts for name in step.inputs
                      if name.startswith(REUSE_PREFIX)]  # a conversation turn's reuse
            steps.append(ReferenceStep(step_id, kind, objective, script=chained_script(scripts),
                                       inputs=tuple(dict.fromkeys([*earlier[-1:], *reused]))))
    return steps


def chained_script(steps: Sequence[PythonStep]) -> str:
    """One script running ``steps`` in order (the script itself when there is one).

    Every script but the last runs with ``runpy``; its protocol ``result`` is written to
    ``/scratch/<name>.json`` and later scripts read it there instead of ``/input/<name>.json``.
    The last script's protocol line is the chain's output; a failed stage prints its protocol.
    """
    if len(steps) == 1:
        return steps[0].script
    stages = []
    for number, step in enumerate(steps):
        source = step.script
        for earlier in steps[:number]:
            source = source.replace(f"/input/{earlier.name}.json", f"/scratch/{earlier.name}.json")
        stages.append((step.name, source))
    *first, (last_name, last_source) = stages
    return (
        "# One consolidated computation: each stage is a reference script; intermediate\n"
        "# results are kept in /scratch/<name>.json for the stages after it.\n"
        "import contextlib\nimport io\nimport json\nimport runpy\nfrom pathlib import Path\n\n"
        f"STAGES = {first!r}\n"
        f"LAST = {(last_name, last_source)!r}\n\n"
        "for name, source in STAGES:\n"
        "    path = Path('/scratch') / f'{name}.py'\n"
        "    path.write_text(source)\n"
        "    captured = io.StringIO()\n"
        "    with contextlib.redirect_stdout(captured):\n"
        "        runpy.run_path(str(path), run_name='__main__')\n"
        "    protocol = json.loads(captured.getvalue().strip().splitlines()[-1])\n"
        "    if protocol.get('status') != 'success':\n"
        "        print(json.dumps(protocol))\n"
        "        raise SystemExit(0)\n"
        "    (Path('/scratch') / f'{name}.json').write_text(json.dumps(protocol['result']))\n\n"
        "last = Path('/scratch') / f'{LAST[0]}.py'\n"
        "last.write_text(LAST[1])\n"
        "runpy.run_path(str(last), run_name='__main__')\n"
    )


def projection_calls(script: str) -> list[ast.Call]:
    """The ``.to_crs(...)`` calls of a script (none when it does not parse).

    >>> len(projection_calls("g = g.to_crs(3857).to_crs(4326)")), projection_calls("(")
    (2, [])
    """
    try:
        tree = ast.parse(script)
    except SyntaxError:
        return []
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute) and node.func.attr == "to_crs"]
