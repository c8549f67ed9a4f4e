"""The REACT baseline's one stage: the ReAct agent with its tools over a sandbox session.

The task opens the question's persistent sandbox session, hands the agent a
:class:`geoask.run.react.ReactToolbox` over it and the run's SQL runner, guard and artifact folder,
and closes the session whatever happens; the tool calls are kept as ``react/transcript.md`` in
the run's folder and the Prefect markdown artifact ``react-transcript``. PLAN_EXECUTE needs
no task of its own: it reuses the planner, step and answer tasks (``flows/baselines.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from prefect import task
from pydantic_ai.usage import UsageLimits

from agents.react import OUTPUT_RETRIES, ReactDeps, react_agent
from agents.react import prompt as react_prompt
from geoask.catalog.summary import catalog_summary
from geoask.errors import GeoaskError
from geoask.models.retry import is_infrastructure_failure
from geoask.records.run_artifacts import artifact_key, publish_markdown
from geoask.run.composition import QuestionServices
from geoask.run.react import STAGE, ReactToolbox
from geoask.vocabulary.answers import AnswerOutput, AnswerRefusal
from tasks.agent_calls import call_agent
from tasks.options import RETRIED_TASK


@dataclass(frozen=True)
class ReactRun:
    """What a REACT run produced: the agent's output and the facts of its tool use.

    Attributes:
        output: the final answer or the refusal (a failed run's refusal says why).
        tool_calls: tool calls the agent made (failed ones included).
        failed_calls: tool calls that failed (each remembered in the error memory).
        used_sandbox: a cell ran in the session.

    """

    output: AnswerOutput
    tool_calls: int
    failed_calls: int
    used_sandbox: bool


@task(name="react", task_run_name="react", **RETRIED_TASK)
def run_react(services: QuestionServices, question: str) -> ReactRun:
    """Let the ReAct agent answer ``question`` within ``GEOASK_REACT_MAX_STEPS`` requests.

    A run that ends without an acceptable answer (the budget used up, the output rules broken
    on every attempt) is a refusal saying so; an infrastructure failure (model endpoint,
    database or sandbox down) is raised.

    Raises:
        GeoaskError: an infrastructure failure, or the session could not start.

    """
    settings = services.settings
    budget = settings.react_max_steps
    with services.recorder.stage(STAGE), services.sandbox.open_session() as session:
        toolbox = ReactToolbox(
            question=question, catalog=services.catalog, schema=services.schema,
            sql_runner=services.sql_runner,
            guard=services.config.guard_context(settings, services.catalog),
            session=session, store=services.store, recorder=services.recorder,
            preview_rows=settings.sql_preview_rows, evidence_rows=settings.flow_evidence_rows,
            max_calls=budget - 1)
        deps = ReactDeps(question=question, tables_text=catalog_summary(services.catalog),
                         toolbox=toolbox)
        try:
            output = call_agent(
                react_agent, deps, react_prompt(deps), models=services.models,
                recorder=services.recorder, stage=STAGE,
                # the soft budget is the toolbox's; this bounds output retries past it
                usage_limits=UsageLimits(request_limit=budget + OUTPUT_RETRIES + 1))
        except GeoaskError as error:
            if is_infrastructure_failure(error):
                raise
            output = AnswerRefusal(reason=str(error))
        finally:
            transcript = toolbox.transcript_markdown()
            services.store.write_text(f"{STAGE}/transcript.md", transcript)
            publish_markdown(artifact_key(STAGE, "transcript"), transcript,
                             f"REACT tool calls ({toolbox.calls})")
        return ReactRun(output=output, tool_calls=toolbox.calls,
                        failed_calls=toolbox.failures, used_sandbox=toolbox.used_sandbox)
