"""What a run does with the tool calls it may not or cannot make, and when it must end:
unknown tools and bad arguments come back as errors, a tool's exception is its result,
roles and permission rules (ask, deny, remembered approvals) bound what is called; the
step, time and budget limits, a model error and a turn without tool calls end the run
with their stop reason. End to end on the scripted model."""

from __future__ import annotations

import asyncio

import pytest
from helpers import assert_valid, call, of_type, until
from scripted_runs import AskForWrites, agent_for, scripted, tool_results, write_note

from jupyter_agent import Agent, ScriptedModel, tool
from jupyter_agent.events import ToolEndEvent
from jupyter_agent.models import Pricing
from jupyter_agent.permissions import Role
from jupyter_agent.states import AgentState

# --- tools and permissions ----------------------------------------------------------


async def test_unknown_tools_and_bad_arguments_come_back_as_errors_and_the_loop_goes_on(workspace):
    agent = agent_for(
        workspace,
        call("no_such_tool", x=1),
        call("write_note", wrong="x"),
        call("write_note", text="hello"),
        call("task_complete", summary="done"),
        tools=[write_note],
    )
    handle = await agent.run("go")
    results = tool_results(agent)
    assert results[0][1] and "Unknown tool 'no_such_tool'" in results[0][0]
    assert "write_note" in results[0][0]  # it lists what can be called
    assert results[1] == (
        "Invalid arguments for write_note: text: Field required; wrong: unexpected argument",
        True,
    )
    assert results[2] == ("wrote hello", False)
    assert handle.state is AgentState.completed


async def test_tool_exceptions_become_error_results(workspace):
    @tool
    def explode() -> str:
        """Fail."""
        raise RuntimeError("disk on fire")

    agent = agent_for(
        workspace, call("explode"), call("task_complete", summary="x"), tools=[explode]
    )
    handle = await agent.run("go")
    assert tool_results(agent)[0] == ("explode failed: RuntimeError: disk on fire", True)
    ends = of_type(handle.events_so_far, ToolEndEvent)
    assert ends[0].is_error


async def test_a_role_cannot_call_a_tool_it_lacks_even_if_never_offered(workspace):
    agent = agent_for(
        workspace, call("write_note", text="x"), {"text": "ok"}, role="planner", tools=[write_note]
    )
    await agent.run("go")
    offered = [t["name"] for t in scripted(agent).requests[0].tools]
    assert "write_note" not in offered
    text, is_error = tool_results(agent)[0]
    assert is_error
    assert text.startswith(
        "Refused: the planner role may not call write_note; it lacks the permission write_files"
    )


async def test_ask_rules_pause_for_approval_and_deny_rules_refuse(workspace):
    policy = AskForWrites()
    agent = agent_for(
        workspace,
        call("write_note", text="one"),
        call("write_note", text="two"),
        call("write_note", text="secret"),
        call("write_note", text="three"),
        call("task_complete", summary="done"),
        tools=[write_note],
        policy=policy,
    )
    handle = agent.start("go")
    await until(lambda: handle.pending_approval is not None)
    assert handle.state is AgentState.waiting_user
    assert handle.pending_approval == "write_note(text='one')"
    handle.approve(False)
    await until(lambda: handle.pending_approval is not None and "two" in handle.pending_approval)
    handle.approve(True, remember=True)
    await handle.wait()
    results = tool_results(agent)
    assert results[0][1] and "The user declined this call" in results[0][0]
    assert results[1] == ("wrote two", False)
    assert results[2] == (
        "Refused by a permission rule: notes about secrets are not allowed.",
        True,
    )
    assert results[3] == ("wrote three", False)  # remembered: no second approval
    resolved = [e for e in handle.events_so_far if e.kind == "permission_response"]
    assert [(e.allowed, e.rule) for e in resolved] == [
        (False, None),
        (True, "allow write_note for this session"),
    ]


async def test_user_defined_role_gets_exactly_its_permissions(workspace):
    reviewer = Role("reviewer", frozenset({"read_files"}), prompt="# Reviewer\nReview only.")
    agent = agent_for(
        workspace,
        call("write_note", text="x"),
        {"text": "ok"},
        role="reviewer",
        roles=[reviewer],
        tools=[write_note],
    )
    await agent.run("review")
    assert "# Reviewer" in scripted(agent).requests[0].system
    assert tool_results(agent)[0][1]
    with pytest.raises(
        ValueError, match="unknown role 'boss'; known roles: actor, planner, reviewer"
    ):
        agent.set_role("boss")


# --- limits and stop reasons -----------------------------------------------------------


async def test_iteration_limit_stops_the_run(workspace):
    agent = agent_for(
        workspace, *[call("send_update", message=str(i)) for i in range(10)], max_steps=3
    )
    handle = await agent.run("loop")
    assert handle.stop_reason == "iteration_limit"
    assert handle.state is AgentState.cancelled
    assert handle.step == 3
    assert "Reached the limit of 3 steps." in handle.stop_message
    one = agent_for(workspace, call("send_update", message="a"), call("send_update", message="b"))
    one.limits.max_steps = 1
    assert (await one.run("loop")).stop_message == "Reached the limit of 1 step."
    assert_valid(agent.history)


async def test_time_limit_stops_a_slow_tool(workspace):
    @tool
    async def slow() -> str:
        """Sleep."""
        await asyncio.sleep(30)
        return "never"

    agent = agent_for(workspace, call("slow"), tools=[slow], max_duration=0.1)
    handle = await agent.run("go")
    assert handle.stop_reason == "time_limit"
    assert tool_results(agent)[0][1]
    assert_valid(agent.history)


async def test_budget_stops_before_the_next_call(workspace):
    model = ScriptedModel(
        [
            call(
                "send_update",
                message=str(i),
            )
            | {"usage": {"input_tokens": 1000, "output_tokens": 1000}}
            for i in range(5)
        ],
        pricing=Pricing(3.0, 15.0),
    )
    agent = Agent("actor", model, workspace=workspace, budget_usd=0.03)
    handle = await agent.run("spend")
    assert handle.stop_reason == "budget"
    assert handle.usage.calls == 2  # $0.018 per call: the third would pass the budget
    assert handle.usage.cost_usd == pytest.approx(0.036)


async def test_a_model_error_ends_the_run_in_error_with_the_message(workspace):
    agent = Agent("actor", ScriptedModel([], on_exhausted="error"), workspace=workspace)
    handle = await agent.run("go")
    assert handle.state is AgentState.error
    assert handle.stop_reason == "error"
    assert "no more turns" in handle.stop_message
    assert [e for e in handle.events_so_far if e.kind == "error"][0].error_type == "ModelError"


async def test_end_of_turn_without_tool_calls_completes(workspace):
    agent = agent_for(workspace, {"text": "The answer is 42."})
    handle = await agent.run("question")
    assert handle.state is AgentState.completed
    assert handle.summary == "The answer is 42."
