"""One escaping rule for the run pages: model, user and database text shows as typed.

Every artifact builder gets hostile text in each field a model, a user or a database fills (an
image fetching an outside URL, a javascript: link, a forged heading); the markdown it publishes
must hold none of them as markup. ``publish_markdown`` itself refuses anything but ``Markdown``.
"""

from __future__ import annotations

import re

import pytest
from replies import intent, sql_plan

from geoask.records import run_report
from geoask.records.execution_log import ExecutionLog, ToolTraceEntry
from geoask.records.run_artifacts import Markdown, RunArtifacts, publish_markdown
from geoask.records.run_trace import trace_markdown
from geoask.run.conversation import ConversationContext
from geoask.run.conversation_report import turn_markdown
from geoask.vocabulary.answers import AnswerType
from geoask.vocabulary.plan import IntentRejection, OperationIntent, RejectionType

HOSTILE = ('<img src="http://evil.example/x.png"> [click](javascript:alert(1)) '
           '![i](http://evil.example/i.png)\n# forged heading')


FENCED = re.compile(r"^(`{3,})[^\n]*\n.*?\n\1$", re.DOTALL | re.MULTILINE)
SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.DOTALL)


def assert_inert(markdown: str) -> None:
    """No live image, HTML, outside link or forged heading outside code blocks and spans."""
    assert isinstance(markdown, Markdown)
    text = SPAN.sub("", FENCED.sub("", markdown))  # code is shown literally
    assert not re.search(r"(?<!\\)<(img|a|script)\b", text, re.IGNORECASE), markdown
    assert not re.search(r"(?<!\\)\]\((javascript|http)", text), markdown
    assert not re.search(r"^#+ forged", text, re.MULTILINE), markdown
    assert "forged heading" in markdown or "evil" in markdown  # the text is there, as text


@pytest.fixture
def published(monkeypatch) -> list[Markdown]:
    seen: list[Markdown] = []
    monkeypatch.setattr(run_report, "publish_markdown", lambda key, md, *_: seen.append(md))
    return seen


def test_run_summary(tmp_path, published):
    result = {"status": HOSTILE, "message": HOSTILE, "route": HOSTILE, "transitions": [HOSTILE],
              "evidence": [HOSTILE], "artifact_folder": HOSTILE,
              "answer": {"summary": "```\n" + HOSTILE + "\n```"}}
    log = ExecutionLog(run_id="r", question=HOSTILE, variant="FULL", outcome=HOSTILE,
                       route=HOSTILE, tool_trace=[ToolTraceEntry(stage=HOSTILE, tool="sql",
                                                                 status="error", detail=HOSTILE)])
    run_report.publish_run(RunArtifacts(str(tmp_path), "r"), log, result, HOSTILE, HOSTILE, "r",
                           sections=[trace_markdown(log)])
    (page,) = published
    assert_inert(page)
    assert_inert(run_report.run_summary_markdown({**result, "message": "one line"}, HOSTILE,
                                                 "FULL"))


def test_intent_rejection_and_plan(tmp_path, published):
    store = RunArtifacts(str(tmp_path), "r")
    run_report.publish_intent(store, intent(HOSTILE, OperationIntent.AGGREGATE))
    run_report.publish_intent(store, IntentRejection(rejection_type=RejectionType.CHIT_CHAT,
                                                     message=HOSTILE))
    plan = sql_plan(HOSTILE, AnswerType.SCALAR, ["n"])
    plan.steps[0].expected_output = HOSTILE
    run_report.publish_plan(store, plan, 1)
    assert len(published) == 3
    for page in published:
        assert_inert(page)


def test_conversation_turn():
    context = ConversationContext(conversation="wake", turn=2, history=HOSTILE + "\n" + HOSTILE)
    assert_inert(turn_markdown(context, [HOSTILE]))


def test_sandbox_run_and_sql_sections(tmp_path, monkeypatch):
    from sandbox.fake import FakeSandbox
    from tasks import steps

    seen: list[Markdown] = []
    monkeypatch.setattr(steps, "publish_markdown", lambda key, md, *_: seen.append(md))
    outcome = FakeSandbox().run(f"print({HOSTILE!r})", [], None)

    class Services:
        store = RunArtifacts(str(tmp_path), "r")

    steps._save_outcome(Services(), "python-1", outcome,  # type: ignore[arg-type]
                        Markdown("# {}").format(HOSTILE))
    (page,) = seen
    assert_inert(page)


def test_publish_markdown_refuses_a_plain_string():
    with pytest.raises(TypeError, match="Markdown"):
        publish_markdown("k", HOSTILE)  # type: ignore[arg-type]


def test_markdown_escapes_what_joins_it_and_keeps_its_own_markup():
    page = Markdown("## {}\n\n{}").format(HOSTILE, Markdown("**bold**"))
    assert page.startswith("## ") and "**bold**" in page
    assert_inert(page)
    assert_inert(Markdown("\n").join([HOSTILE, Markdown("- item")]))
    assert_inert(Markdown("# title\n") + HOSTILE)
