"""The plan steps of the question flow: ``sql`` and ``python`` tasks (runs named by step id).

An SQL step asks the SQL agent for statements and runs each through the one SQL step runner
(:func:`geoask.sql.step.run_statement`: guard, read-only execution, export); a Python step asks
the compute agent for a script and runs it in the sandbox over the exported files. Either comes
back as a :class:`StepResult` for the execution-state manager; Prefect retries only transient
model or database failures (``geoask.models.retry.TRANSIENT_RETRIES``).
"""


from __future__ import annotations

import contextlib
import functools
import json
import time
from pathlib import PurePosixPath

from prefect import task
from pydantic import BaseModel, Field

from agents.compute import ComputeAttempt, ComputeDeps, InputArtifact, compute_agent
from agents.compute import prompt as compute_prompt
from agents.sql import SqlAttempt, SqlDeps, sql_agent
from agents.sql import prompt as sql_prompt
from geoask.base.formats import JSON
from geoask.compute.step import run_compute
from geoask.errors import CrsError, GeoaskError, QueryExecutionError, QueryRejectedError
from geoask.models.retry import is_infrastructure_failure
from geoask.records.artifact_registry import RegistryEntry
from geoask.records.run_artifacts import (
    Markdown,
    artifact_key,
    code_block,
    code_span,
    markdown_table,
    publish_markdown,
)
from geoask.retrieval.retriever import SchemaSubset
from geoask.run.composition import QuestionServices
from geoask.run.predispatch import check_inputs, reused_refs
from geoask.run.state import ExecutionState, StepFailure, StepState
from geoask.sql.context import AnswerContract, GuardContext, SpatialPolicy
from geoask.sql.step import run_statement
from geoask.vocabulary.artifacts import ArtifactRef
from geoask.vocabulary.drafts import ComputeRefusal, SqlDraft, SqlRefusal
from geoask.vocabulary.plan import (
    Intent,
    Plan,
    PlanStep,
)
from sandbox.models import SandboxOutcome
from tasks.agent_calls import call_agent
from tasks.options import RETRIED_TASK


class StepResult(BaseModel):
    """What one run of an SQL or Python step produced: artifacts, or a classified failure."""

    ok: bool
    artifacts: list[ArtifactRef] = Field(default_factory=list)
    summary: str = ""
    failure: StepFailure | None = None
    needs_python: bool = False
    executed_sql: list[str] = Field(default_factory=list)
    reused: list[str] = Field(
        default_factory=list,
        description="Refs of earlier turns' artifacts the step read (the flow records them).")


@task(name="sql", task_run_name="{step_id}", **RETRIED_TASK)
def run_sql_step(
    services: QuestionServices, step_id: str, state: ExecutionState, schema_tables: list[str]
) -> StepResult:
    """Write, check, execute and export the SQL of one plan step (one attempt).

    ``schema_tables``: the question's schema subset; the SQL agent sees the step's own tables
    (or all of these when the plan names none).
    """
    with services.recorder.stage(step_id):
        plan, step_state = _plan_and_step(state, step_id)
        step = _plan_step(plan, step_id)
        deps = SqlDeps(
            question=state.question, step=step,
            schema_text=step_schema(
                services, state.question, step, step.tables or schema_tables,
                geometry=_geometry_useful(services, plan),
            ).prompt_text,
            constraints=plan.constraints, guard=_guard_context(services, step),
            previous_attempts=[SqlAttempt(sql=f.attempted, error=f.message)
                               for f in step_state.failures],
            required_fields=step_state.required_fields,
        )
        try:
            draft = call_agent(sql_agent, deps, sql_prompt(deps), models=services.models,
                               recorder=services.recorder, stage=step_id)
        except GeoaskError as error:
            if is_infrastructure_failure(error):
                raise  # the endpoint is down: no other attempt of the agent can help
            return _failed("agent", str(error))
        if isinstance(draft, SqlRefusal):
            return _failed("refusal", f"the SQL agent refused: {draft.reason}")
        return _execute_draft(services, step, step_state, draft, deps.guard)


@task(name="python", task_run_name="{step_id}", **RETRIED_TASK)
def run_python_step(
    services: QuestionServices, step_id: str, state: ExecutionState, intent: Intent,
    schema_tables: list[str],
) -> StepResult:
    """Write one script for the step and run it in the sandbox (one attempt).

    The compute agent's schema outline holds the tables its input steps read (all of
    ``schema_tables`` when those steps name none).
    """
    with services.recorder.stage(step_id), contextlib.ExitStack() as ahead:
        plan, step_state = _plan_and_step(state, step_id)
        step = _plan_step(plan, step_id)
        upstream = [state.steps[i] for i in (step.inputs or list(state.steps)[
            : list(state.steps).index(step_id)]) if i in state.steps]
        reused = reused_entries(services, step.inputs)
        problems = input_problems(services, step_id, upstream, step.inputs,
                                  plan.constraints.geometry_needed)
        if problems:
            services.recorder.tool(step_id, "pre_dispatch", "rejected", "; ".join(problems))
            return _failed("inputs", "; ".join(problems))
        artifacts = [a for s in upstream for a in s.artifacts] + [
            e.to_artifact_ref() for e in reused]
        refs = [e.ref for e in reused]
        if reused:
            services.recorder.tool(step_id, "reuse", "ok", ", ".join(refs))
        # this attempt's own sandbox starts now, while the compute agent writes the script
        started = ahead.enter_context(services.sandbox.start())
        deps = ComputeDeps(
            question=state.question, step=step, constraints=plan.constraints,
            inputs=[InputArtifact(name=a.name,
                                  path_in_sandbox=f"/input/{PurePosixPath(a.url).name}",
                                  preview=a.preview) for a in artifacts],
            schema_text=step_schema(services, state.question, step,
                                    _tables_read(plan, upstream) or schema_tables).outline_text,
            executed_sql=[sql for s in upstream for sql in _executed_sql(s)]
            + [e.source for e in reused if e.made_by == "sql" and e.source],
            intent=intent,
            previous_attempts=[ComputeAttempt(script=f.attempted, error=f.message)
                               for f in step_state.failures],
        )
        try:
            output = call_agent(compute_agent, deps, compute_prompt(deps),
                                models=services.models, recorder=services.recorder,
                                stage=step_id)
        except GeoaskError as error:
            if is_infrastructure_failure(error):
                raise  # the endpoint is down: no other attempt of the agent can help
            return _failed("agent", str(error), reused=refs)
        if isinstance(output, ComputeRefusal):
            kind = "missing_field" if output.missing_fields else "refusal"
            return _failed(kind, f"the compute agent refused: {output.reason}",
                           missing_fields=output.missing_fields, reused=refs)
        attempt = step_state.attempts
        script_url = services.store.write_text(f"{step_id}/script-{attempt}.py", output.script)
        run = run_compute(output.script, [services.store.local_path(a.url) for a in artifacts],
                          started,
                          on_event=functools.partial(services.recorder.tool, step_id))
        _save_outcome(services, step_id, run.outcome,
                      Markdown("# {} script (attempt {})\n\n{}\n\n{}").format(
                          step_id, attempt, output.method, code_block(output.script, "python")))
        if run.failure is not None:
            missing = run.outcome.missing_fields
            kind = "missing_field" if missing else "sandbox"
            return _failed(kind, run.failure, missing_fields=missing, attempted=output.script,
                           reused=refs)
        assert run.protocol is not None  # no failure detail: a valid protocol object
        result_url = services.store.write_json(
            f"{step_id}/{JSON.file_name('result')}",
            {"summary": run.protocol.summary, "result": run.result, "script": script_url},
        )
        return StepResult(ok=True, artifacts=run.outputs(result_url),
                          summary=run.protocol.summary, reused=refs)


def reused_entries(services: QuestionServices, inputs: list[str]) -> list[RegistryEntry]:
    """The registry entries of earlier turns a step's ``inputs`` name (known ones only)."""
    reusable = services.conversation.reusable if services.conversation else {}
    return [reusable[ref] for ref in reused_refs(inputs) if ref in reusable]


def input_problems(services: QuestionServices, step_id: str, upstream: list[StepState],
                   inputs: list[str], geometry_needed: bool) -> list[str]:
    """The pre-dispatch problems of a Python step's inputs (the artifact registry's view).

    Its in-run inputs are the artifacts of ``upstream`` (as registered by the flow); reused
    ones are the ``turn-<n>.`` refs of ``inputs``.
    """
    entries = {entry.ref: entry for entry in services.registry.entries}
    if services.conversation:
        entries.update(services.conversation.reusable)
    refs = [f"{s.id}.{a.name}" for s in upstream for a in s.artifacts] + reused_refs(inputs)
    return check_inputs(step_id, refs, entries, geometry_needed=geometry_needed,
                        roots=(services.settings.artifact_root_url,
                               services.settings.sandbox_artifacts))


def step_schema(services: QuestionServices, question: str, step: PlanStep,
                tables: list[str], geometry: bool = True) -> SchemaSubset:
    """The schema of one subtask: exactly ``tables``, columns trimmed for it.

    Columns are chosen for the question plus the step's objective and expected output;
    ``geometry=False`` leaves geometry columns out.
    """
    begin = time.perf_counter()
    subset = services.schema.retrieve(f"{question}\n{step.objective}\n{step.expected_output}",
                                      within=tables, geometry=geometry)
    services.recorder.tool(step.id, "retriever", "ok",
                           f"tables {', '.join(subset.table_names)}; {subset.token_count} tokens",
                           (time.perf_counter() - begin) * 1000)
    return subset


def _geometry_useful(services: QuestionServices, plan: Plan) -> bool:
    """Whether the SQL agent has a use for geometry columns.

    To compute with them (policy not separated), to export them (geometry needed), or for a
    Python step it may still ask for (variants without a planner).
    """
    return (services.config.policy is not SpatialPolicy.SEPARATED
            or plan.constraints.geometry_needed
            or services.config.python_steps == "on_request")


def _tables_read(plan: Plan, upstream: list[StepState]) -> list[str]:
    """Tables the plan steps behind ``upstream`` name, in order, without repeats."""
    steps = {step.id: step for step in plan.steps}
    return list(dict.fromkeys(name for s in upstream if s.id in steps
                              for name in steps[s.id].tables))


def _execute_draft(
    services: QuestionServices, step: PlanStep, step_state: StepState, draft: SqlDraft,
    context: GuardContext,
) -> StepResult:
    step_id = step.id
    attempt = step_state.attempts
    text = "\n\n".join(f"-- {s.name}: {s.purpose}\n{s.sql.rstrip().rstrip(';')};"
                       for s in draft.statements)
    services.store.write_text(f"{step_id}/attempt-{attempt}.sql", text)
    sections = [Markdown("# {} SQL (attempt {})").format(step_id, attempt),
                code_block(text, "sql")]
    try:  # one artifact per attempt: the SQL, then each export (file, preview) or the error
        return _run_statements(services, step_id, draft, context, text, sections)
    finally:
        publish_markdown(artifact_key(step_id, "sql"), Markdown("\n\n").join(sections))


def _run_statements(services: QuestionServices, step_id: str, draft: SqlDraft,
                    context: GuardContext, text: str, sections: list[Markdown]) -> StepResult:
    """Run and export the draft's statements in order; describe each in ``sections``."""
    record = functools.partial(services.recorder.tool, step_id)
    artifacts: list[ArtifactRef] = []
    executed: list[str] = []
    for statement in draft.statements:
        try:
            run = run_statement(statement.sql, context, services.sql_runner,
                                services.store.url(step_id), name=statement.name,
                                preview_rows=services.settings.sql_preview_rows,
                                on_event=record)
        except QueryRejectedError as error:
            sections.append(Markdown("**{}** refused by the guard: {}").format(statement.name,
                                                                                error))
            return _failed("guard", f"{statement.name}: {error}", attempted=text)
        except QueryExecutionError as error:
            sections.append(Markdown("**{}** failed in the database: {}").format(statement.name,
                                                                                  error))
            return _failed("database", f"{statement.name}: {error}", attempted=text)
        except CrsError as error:  # a fact about the data: no rewrite of the SQL changes it
            sections.append(Markdown("**{}** has no usable CRS: {}").format(statement.name,
                                                                             error))
            return _failed("crs", f"{statement.name}: {error}", attempted=text)
        exported = run.exported
        preview = exported.preview
        fields = [c["name"] for c in preview.columns if c["name"] != preview.geometry_column]
        if preview.geometry_column:
            fields.append("geometry")
        artifacts.append(ArtifactRef(
            name=statement.name, url=exported.data_path, format=exported.format,
            fields=fields, row_count=preview.row_count, preview=preview.to_text(),
            sql=statement.sql))
        executed.append(statement.sql)
        sections.append(Markdown("## {}: {} rows\n\nfile: {}\n\n{}").format(
            statement.name, preview.row_count, code_span(exported.data_path),
            markdown_table(preview.first_rows)))
    services.store.write_text(f"{step_id}/statements.sql", text)
    summary = "; ".join(f"{a.name}: {a.row_count} rows" for a in artifacts)
    return StepResult(ok=True, artifacts=artifacts, summary=summary,
                      needs_python=draft.needs_python, executed_sql=executed)


def _guard_context(services: QuestionServices, step: PlanStep) -> GuardContext:
    """The guard's context of an SQL step: the variant's policy, settings, the catalog's names."""
    return services.config.guard_context(
        services.settings, services.catalog,
        AnswerContract.TOPK if step.top_k else AnswerContract.NONE)


def _save_outcome(services: QuestionServices, step_id: str, outcome: SandboxOutcome,
                  script: Markdown) -> None:
    """Save the run's stdout/stderr; publish ``<step>-script``: ``script`` and the run."""
    services.store.write_text(f"{step_id}/stdout.txt", outcome.stdout.text)
    services.store.write_text(f"{step_id}/stderr.txt", outcome.stderr.text)
    error = outcome.error.model_dump() if outcome.error else None
    files = Markdown("").join(Markdown("\n- {} ({})").format(code_span(file.uri), file.name)
                              for file in outcome.artifacts)
    publish_markdown(
        artifact_key(step_id, "script"),
        Markdown("{}\n\n## Sandbox run: {}\n\nwall {:.2f} s, cpu {:.2f} s, peak {:.0f} MiB\n\n"
                 "{}### stdout (end)\n{}\n\n### stderr\n{}{}").format(
            script, outcome.status, outcome.wall_time_s, outcome.cpu_time_s,
            outcome.peak_memory_mib,
            Markdown("error: {}\n\n").format(code_span(json.dumps(error))) if error
            else Markdown(""),
            code_block(outcome.stdout.text[-2000:]), code_block(outcome.stderr.text[-2000:]),
            Markdown("\n\n### files{}").format(files) if files else Markdown("")),
    )


def _executed_sql(step: StepState) -> list[str]:
    return [a.sql for a in step.artifacts if a.sql]


def _plan_and_step(state: ExecutionState, step_id: str) -> tuple[Plan, StepState]:
    assert state.plan is not None, "a step runs only under a plan"
    return state.plan, state.steps[step_id]


def _plan_step(plan: Plan, step_id: str) -> PlanStep:
    return next(step for step in plan.steps if step.id == step_id)


def _failed(kind: str, message: str, *, missing_fields: list[str] | None = None,
            attempted: str = "", reused: list[str] | None = None) -> StepResult:
    return StepResult(ok=False, failure=StepFailure(
        kind=kind, message=message, missing_fields=missing_fields or [], attempted=attempted),
        reused=reused or [])

