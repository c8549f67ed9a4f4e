"""``answer-question`` with a scripted model, for serving in tests (``--answer-flow``).

(A turn of the shipped conversations is answered by the offline reference model instead.)

The flow has the name, parameters and task runs of ``flows/answer_question.py``: it builds the
question run's services with a :class:`ScriptedModel` replaying the demo case whose question is
asked (tests/flow/demo_cases.py) and runs the real flow body in this flow run. Called
in-process it is the "direct" run; served by ``geoask server --answer-flow`` it is the run
through the API - same model, same code, so the answers must agree.
"""

from __future__ import annotations

import sys
from pathlib import Path

from prefect import flow

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "flow"))

from demo_cases import CASES

from flows.answer_question import QuestionResult
from flows.answer_question import answer_question as question_flow

ENTRYPOINT = f"{Path(__file__).resolve()}:answer_question"
QUESTIONS = {case.name: case.question for case in CASES}


def scripted_services(question: str, variant: str | None):
    """Services of one run: real PostGIS and sandbox, in-memory schema index, scripted agents."""
    from geoask.catalog.model import load_catalog
    from geoask.db.urls import reader_url
    from geoask.embeddings.static import shipped_embedder
    from geoask.models.scripted import ScriptedModel
    from geoask.retrieval.index import InMemorySchemaIndex
    from geoask.retrieval.retriever import RetrievalConfig, SchemaRetriever
    from geoask.run.composition import QuestionServices
    from geoask.run.variants import parse_variant
    from geoask.settings import get_settings
    from geoask.sql.executor import PostgresSqlRunner
    from sandbox.bubblewrap import BubblewrapSandbox

    settings = get_settings()
    case = next((c for c in CASES if c.question == question), None)
    models = ScriptedModel(case.replies()).model if case is not None else \
        conversation_models(question, settings)
    catalog = load_catalog(settings.catalog_path)
    retriever = SchemaRetriever(catalog, InMemorySchemaIndex(), shipped_embedder(),
                                RetrievalConfig.from_settings(settings))
    retriever.ensure_index()
    return QuestionServices(
        settings=settings, variant=parse_variant(variant or settings.variant),
        models=models,
        sql_runner=PostgresSqlRunner(reader_url(settings)),
        sandbox=BubblewrapSandbox.from_settings(settings), schema=retriever, catalog=catalog,
    )


def conversation_models(question: str, settings):
    """The offline reference model for a turn of the shipped conversations (the browser test).

    Raises:
        ValueError: ``question`` is neither a demo question nor a conversation turn.

    """
    from geoask.cases.conversations import load_conversations, replay_cases
    from geoask.run.composition import model_provider

    cases = replay_cases(load_conversations())
    if not any(case.question == question for case in cases):
        raise ValueError(f"the scripted model knows only the demo questions and the "
                         f"conversation turns, not {question!r}")
    return model_provider(settings, "reference", cases=cases)


@flow(name="answer-question", validate_parameters=False)
def answer_question(question: str, variant: str | None = None,
                    model: str | None = None, conversation: str | None = None) -> QuestionResult:
    """Answer a demo question with the scripted model (the real flow body)."""
    return question_flow.fn(question, variant=variant, model=model,
                            services=scripted_services(question, variant),
                            conversation=conversation)
