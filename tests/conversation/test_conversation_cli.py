"""``geoask ask --conversation`` and ``geoask chat`` on the command line: bad ids are usage
errors, and a chat lists and keeps its conversation."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from geoask.app.cli import app
from geoask.run.conversation import ConversationStore, Turn
from geoask.settings import get_settings


@pytest.mark.parametrize("command", [["ask", "How many airports are there?"], ["chat"]])
def test_an_unusable_conversation_id_is_a_usage_error(command):
    result = CliRunner().invoke(app, [*command, "--conversation", "../etc"])
    assert result.exit_code == 2
    assert "conversation id '../etc' is not usable" in " ".join(result.output.split())


@pytest.fixture
def artifact_root(monkeypatch, tmp_path):
    monkeypatch.setenv("GEOASK_ARTIFACT_ROOT", str(tmp_path))
    get_settings.cache_clear()
    yield tmp_path
    get_settings.cache_clear()


def test_chat_lists_the_history_and_says_how_to_continue(artifact_root):
    ConversationStore(str(artifact_root)).record("sids", Turn(
        number=1, question="Which counties?", status="answered", message="10 counties.",
        run_id="r1"))
    result = CliRunner().invoke(app, ["chat", "--conversation", "sids"],
                                input="history\nexit\n")
    assert result.exit_code == 0, result.output
    assert "conversation sids (1 earlier turns)" in result.output
    assert "turn 1: Which counties? -> answered: 10 counties." in result.output
    assert "continue with: geoask chat --conversation sids" in result.output


def test_chat_ends_cleanly_at_end_of_input(artifact_root):
    result = CliRunner().invoke(app, ["chat", "--conversation", "eof"], input="")
    assert result.exit_code == 0, result.output
    # Ctrl-D leaves the prompt's line; the closing hint starts a line of its own
    assert result.output.splitlines()[-1] == "continue with: geoask chat --conversation eof"
