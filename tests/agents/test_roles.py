"""The agent roles: one declaration (AGENT_ROLES) gives each its model setting; each has its agent
in agents/ and, in a question run, its reference replay."""

from __future__ import annotations

import importlib
import pkgutil

import pytest
from pydantic_ai import Agent

import agents
from geoask.models.llm import QUESTION_ROLES, ROLES
from geoask.models.reference.replay import REPLAYED_ROLES
from geoask.settings import Settings
from geoask.settings.models import AGENT_ROLES


def _agent_names() -> list[str]:
    names = []
    for info in pkgutil.iter_modules(agents.__path__):
        module = importlib.import_module(f"agents.{info.name}")
        names += [value.name for value in vars(module).values()
                  if isinstance(value, Agent) and value.name]
    return names


def test_every_role_has_exactly_one_agent_and_every_agent_a_role():
    assert sorted(_agent_names()) == sorted(ROLES)


def test_every_question_role_is_replayed_by_the_reference_model():
    assert set(QUESTION_ROLES) <= REPLAYED_ROLES


@pytest.mark.parametrize("role", AGENT_ROLES, ids=[role.name for role in AGENT_ROLES])
def test_each_role_has_its_model_setting(role, monkeypatch):
    field = Settings.model_fields[role.setting]
    assert field.default is None and role.agent in (field.description or "")
    monkeypatch.setenv(f"GEOASK_{role.setting.upper()}", "openai:gpt-4o")
    assert getattr(Settings(), role.setting) == "openai:gpt-4o"
