"""An agent's configuration is decided in one place, :func:`resolve_config`: an argument the
program passes wins, then the settings that apply to the workspace, then the defaults; an
:class:`Agent` made from a config is the agent its arguments would make."""

from __future__ import annotations

import dataclasses

import pytest

from jupyter_agent import Agent, ScriptedModel
from jupyter_agent.agent import AgentConfig, resolve_config
from jupyter_agent.notebook.running_cells import CellPolicy


def write(folder, text):
    (folder / ".jupyter_agent").mkdir(exist_ok=True)
    (folder / ".jupyter_agent" / "settings.toml").write_text(text)


def test_an_argument_wins_over_the_settings_and_the_settings_over_the_defaults(workspace, home):
    write(home, "[cells]\nwait = 10\n\n[context]\nwindow = 50000\n")
    from_settings = resolve_config("actor", ScriptedModel(), workspace=workspace)
    assert from_settings.cells.wait == 10.0
    assert from_settings.cells_from_settings
    assert from_settings.context.window == 50000
    given = resolve_config("actor", ScriptedModel(), workspace=workspace, cells=CellPolicy(wait=2))
    assert given.cells.wait == 2.0
    assert not given.cells_from_settings
    assert from_settings.limits.max_steps == 30  # no setting: the default


def test_a_config_is_decided_once_and_cannot_be_changed(workspace, home):
    config = resolve_config("planner", ScriptedModel(), workspace=workspace, max_steps=7)
    assert isinstance(config, AgentConfig)
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.instructions = "something else"  # type: ignore[misc]


def test_an_agent_made_from_a_config_is_the_agent_its_arguments_make(workspace, home):
    model = ScriptedModel()
    config = resolve_config("actor", model, workspace=workspace, max_steps=7, persist=False)
    from_config = Agent(config=config)
    from_arguments = Agent("actor", model, workspace=workspace, max_steps=7, persist=False)
    for agent in (from_config, from_arguments):
        assert agent.role == "actor"
        assert agent.model is model
        assert agent.limits.max_steps == 7
        assert agent.workspace == workspace.resolve()
        assert sorted(agent.tools.names()) == sorted(from_arguments.tools.names())
    assert from_config.config is config


def test_a_config_and_arguments_together_are_refused(workspace, home):
    config = resolve_config("actor", ScriptedModel(), workspace=workspace, persist=False)
    with pytest.raises(TypeError, match="a config or its arguments"):
        Agent("planner", config=config)
    with pytest.raises(TypeError, match="a config or its arguments"):
        Agent(config=config, max_steps=3)


def test_an_unknown_role_is_named_with_the_known_ones(workspace, home):
    with pytest.raises(ValueError, match="unknown role 'critic'; known roles: actor, planner"):
        resolve_config("critic", ScriptedModel(), workspace=workspace)
