"""Questions and approvals nobody can answer (a notebook run by papermill or nbclient):
once the agent's attendance says so, a call that needs approval ends the run with an error
naming it (or, when the agent was told to deny, is denied and said so), a question ends the
run without an answer made up, and with someone there (or an attendance that fails) the
wait is the user's as before."""

from __future__ import annotations

import asyncio

from helpers import call, until
from scripted_runs import agent_for, tool_results

from jupyter_agent.states import AgentState

COMMAND = call("execute_command", "Clearing the scratch files.", command="rm scratch.tmp")
DONE = call("task_complete", summary="Done.")


class Nobody:
    """Nobody can answer, known at once."""

    async def absent(self) -> str:
        return "no panel is open"


class Somebody:
    """Someone can: never absent."""

    async def absent(self) -> str:
        await asyncio.get_running_loop().create_future()
        raise AssertionError("unreachable")


class Broken:
    async def absent(self) -> str:
        raise RuntimeError("cannot tell")


async def test_a_call_needing_approval_nobody_can_give_ends_the_run_naming_it(workspace):
    (workspace / "scratch.tmp").write_text("keep me")
    agent = agent_for(workspace, COMMAND, DONE)
    agent.attendance = Nobody()
    handle = await agent.run("tidy up")
    assert handle.state is AgentState.cancelled
    assert handle.stop_reason == "unattended"
    stopped = [e for e in handle.events_so_far if e.kind == "stopped"][-1]
    assert "execute_command (" in stopped.message
    assert "rm scratch.tmp" in stopped.message
    assert "nobody can give it here (no panel is open)" in stopped.message
    assert (workspace / "scratch.tmp").read_text() == "keep me"  # nothing ran


async def test_with_deny_the_call_is_denied_said_so_and_the_run_goes_on(workspace):
    (workspace / "scratch.tmp").write_text("keep me")
    agent = agent_for(workspace, COMMAND, DONE)
    agent.attendance = Nobody()
    agent.unattended = "deny"
    handle = await agent.run("tidy up")
    assert handle.stop_reason == "completed"
    assert (workspace / "scratch.tmp").read_text() == "keep me"
    warnings = [e.message for e in handle.events_so_far if e.kind == "warning"]
    assert any(
        w.startswith("Denied execute_command (") and "nobody can give it (no panel is open)" in w
        for w in warnings
    ), warnings
    responses = [e for e in handle.events_so_far if e.kind == "permission_response"]
    assert [r.allowed for r in responses] == [False]
    assert tool_results(agent)[0][1] is True  # the model is told the call did not run


async def test_a_question_nobody_can_answer_ends_the_run_without_an_answer(workspace):
    question = call("ask_user", question="Drop the rows?", options=[{"label": "Yes", "value": "y"}])
    agent = agent_for(workspace, question, DONE)
    agent.attendance = Nobody()
    agent.unattended = "deny"  # never an answer made up, whatever the approvals do
    handle = await agent.run("clean")
    assert handle.stop_reason == "unattended"
    assert not [e for e in handle.events_so_far if e.kind == "answer"]
    stopped = [e for e in handle.events_so_far if e.kind == "stopped"][-1]
    assert "“Drop the rows?”" in stopped.message
    assert "without deciding for the user" in stopped.message


async def test_with_someone_there_or_an_attendance_that_fails_the_user_decides(workspace):
    for attendance in (Somebody(), Broken()):
        agent = agent_for(workspace, COMMAND, DONE)
        agent.attendance = attendance
        handle = agent.start("tidy up")
        await until(lambda h=handle: h.pending_approval is not None)
        await asyncio.sleep(0.05)  # the attendance had its chance to end the wait
        assert handle.state is AgentState.waiting_user
        handle.approve(False)
        await handle.wait()
        assert handle.stop_reason == "completed"


async def test_a_subagent_inherits_who_can_answer(workspace):
    agent = agent_for(workspace)
    agent.attendance = Nobody()
    agent.unattended = "deny"
    child = agent.child(role="actor")
    assert child.attendance is agent.attendance
    assert child.unattended == "deny"


async def test_the_settings_choose_deny_and_a_folders_file_may_too(
    workspace, tmp_path, monkeypatch
):
    from jupyter_agent import Agent, ScriptedModel

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert agent_for(workspace).unattended == "fail"  # nothing set: fail fast
    (workspace / ".jupyter_agent").mkdir(exist_ok=True)
    (workspace / ".jupyter_agent" / "settings.toml").write_text('unattended = "deny"\n')
    # Untrusted, the folder's choice applies: neither choice lets a call run.
    agent = Agent("actor", ScriptedModel([]), workspace=workspace)
    assert agent.unattended == "deny"
