"""Roles: built in, user-defined in Python or a settings file, and their prompts."""

from __future__ import annotations

import pytest
from helpers import call

from jupyter_agent import Agent, Permission, Role, ScriptedModel, tool
from jupyter_agent.permissions import ACTOR, PLANNER
from jupyter_agent.settings import SettingsError, load_settings

P = Permission


@tool(category="execute", permissions={P.EXECUTE_COMMANDS})
def run_tests(path: str = "tests") -> str:
    """Run the test suite."""
    return "12 passed"


def test_the_planner_is_read_only_and_the_actor_has_everything():
    assert PLANNER.permissions == {P.READ_FILES, P.READ_NOTEBOOK, P.INSPECT_KERNEL}
    assert ACTOR.permissions >= P.ALL


def test_role_prompts_say_what_each_role_may_do(workspace):
    agent = Agent("planner", ScriptedModel(), workspace=workspace)
    planner = agent.system_prompt()
    assert "# Your role: Planner" in planner
    assert "You cannot change anything" in planner
    actor = agent.system_prompt(ACTOR)
    assert "# Your role: Actor" in actor
    assert "**Always** before deleting files" in actor
    assert str(workspace) in actor


SETTINGS_TOML = """
[roles.reviewer]
description = "Reads and runs the tests; changes nothing."
permissions = ["read_files", "read_notebook", "execute_commands"]
prompt = "# Your role: Reviewer\\nReview the change and run the tests."

[roles.commander]
permissions = ["read_files"]
prompt_file = "commander.md"

[[rules]]
decision = "allow"
scope = "role"
target = "reviewer"
matcher = { kind = "tool", name = "run_tests" }
"""


async def test_roles_and_rules_from_a_settings_file(workspace):
    folder = workspace / ".jupyter_agent"
    folder.mkdir()
    (folder / "settings.toml").write_text(SETTINGS_TOML)
    (folder / "commander.md").write_text("# Your role: Commander\nDelegate.")
    model = ScriptedModel([call("run_tests"), call("task_complete", summary="reviewed")])
    agent = Agent("reviewer", model, workspace=workspace, tools=[run_tests])
    handle = await agent.run("review the change")
    # the file's rule allowed the command without asking
    assert agent.history[2].tool_results[0].text == "12 passed"
    assert handle.summary == "reviewed"
    assert "# Your role: Reviewer" in model.requests[0].system
    assert agent.roles["commander"].prompt.startswith("# Your role: Commander")
    assert agent.roles["reviewer"].description.startswith("Reads and runs")


async def test_a_python_role_and_its_limits(workspace):
    commander = Role("commander", frozenset({P.READ_FILES}), prompt="# Your role: Commander")
    model = ScriptedModel([call("run_tests"), {"text": "I may not run tests."}])
    agent = Agent("commander", model, workspace=workspace, roles=[commander], tools=[run_tests])
    await agent.run("run the tests")
    result = agent.history[2].tool_results[0]
    assert result.is_error
    assert "lacks the permission execute_commands" in result.text
    assert "run_tests" not in [t["name"] for t in model.requests[0].tools]


def test_a_broken_settings_file_names_the_file_and_the_problem(workspace):
    path = workspace / "settings.json"
    path.write_text('{"roles": {"x": {"permissions": "not a list"}}}')
    with pytest.raises(SettingsError, match=r"settings\.json: .*permissions"):
        load_settings(path)
    path.write_text("{broken")
    with pytest.raises(SettingsError, match=r"settings\.json"):
        load_settings(path)
