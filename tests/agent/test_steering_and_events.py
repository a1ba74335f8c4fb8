"""A run while it goes, end to end on the scripted model: steered (pause, resume, stop,
answers and approvals from other threads, a second start refused, a role switch), its
events (many subscribers, a failing one, replay, text deltas), subagents under it, the
process's runtime, and what follows a run (send, wait_for_user, a fault at its end)."""

from __future__ import annotations

import asyncio
import threading

import pytest
from helpers import assert_valid, call, until
from scripted_runs import AskForWrites, agent_for, kinds, tool_results, write_note

from jupyter_agent import Agent, RunHandle, ScriptedModel, tool
from jupyter_agent.agent import Session
from jupyter_agent.errors import AgentBusy, IllegalTransition
from jupyter_agent.events import AgentStartEvent, Event, EventAdapter
from jupyter_agent.plans import Question
from jupyter_agent.states import AgentState
from jupyter_agent.tools import ToolContext

# --- steering ----------------------------------------------------------------------------


async def test_pause_holds_before_the_next_step_and_resume_continues(workspace):
    agent = agent_for(
        workspace, call("send_update", message="1"), call("task_complete", summary="ok")
    )
    handle = agent.start("go")
    handle.pause()
    await until(lambda: handle.state is AgentState.paused)
    steps_while_paused = handle.step
    await asyncio.sleep(0.05)
    assert handle.step == steps_while_paused
    # a pause may last: what the run has recorded is on disk meanwhile
    assert Session.load(workspace, agent.session.id).history == agent.history
    handle.resume()
    await handle.wait()
    assert handle.state is AgentState.completed


async def test_stop_while_paused(workspace):
    agent = agent_for(workspace, call("task_complete", summary="ok"))
    handle = agent.start("go")
    handle.pause()
    await until(lambda: handle.state is AgentState.paused)
    handle.stop()
    await handle.wait()
    assert handle.stop_reason == "manual_stop"


async def test_stop_from_another_thread_while_waiting_for_an_answer(workspace):
    agent = agent_for(
        workspace, call("ask_user", question="?"), call("task_complete", summary="never")
    )
    handle = agent.start("go")
    await until(lambda: handle.pending_question is not None)
    thread = threading.Thread(target=handle.stop)
    thread.start()
    thread.join()
    await asyncio.wait_for(handle.wait(), 10)
    assert handle.stop_reason == "manual_stop"
    assert tool_results(agent)[0] == ("Interrupted by the user before this tool finished.", True)
    assert_valid(agent.history)


async def test_answer_and_approve_from_another_thread(workspace):
    policy = AskForWrites()
    agent = agent_for(
        workspace,
        call("ask_user", question="Name?"),
        call("write_note", text="x"),
        call("task_complete", summary="ok"),
        tools=[write_note],
        policy=policy,
    )
    handle = agent.start("go")
    await until(lambda: handle.pending_question is not None)
    await asyncio.to_thread(handle.answer, "Ada")
    await until(lambda: handle.pending_approval is not None)
    await asyncio.to_thread(handle.approve, True)
    await handle.wait()
    assert [r for r, _ in tool_results(agent)][:2] == ["The user answered: Ada", "wrote x"]


async def test_starting_while_running_is_refused(workspace):
    agent = agent_for(workspace, call("ask_user", question="?"))
    handle = agent.start("go")
    with pytest.raises(AgentBusy, match="still running"):
        agent.start("again")
    handle.stop()
    await handle.wait()


def test_start_needs_a_running_loop_and_a_task(workspace):
    agent = agent_for(workspace)
    with pytest.raises(RuntimeError, match="running asyncio event loop"):
        agent.start("x")

    async def empty():
        agent.start("  ")

    with pytest.raises(ValueError, match="task is empty"):
        asyncio.run(empty())


async def test_next_start_continues_the_session_after_a_stop(workspace):
    agent = agent_for(
        workspace, call("ask_user", question="?"), {"text": "Continuing where I was."}
    )
    first = agent.start("first task")
    await until(lambda: first.pending_question is not None)
    first.stop()
    await first.wait()
    second = await agent.run("carry on")
    assert second.state is AgentState.completed
    assert second.session_id == first.session_id
    last_user = [m for m in agent.history if m.role == "user"][-1]
    assert last_user.text.startswith("[The user stopped the previous run before it finished.]")
    assert_valid(agent.history)


async def test_switching_a_running_actor_to_planner_stops_it_with_a_warning(workspace):
    agent = agent_for(workspace, call("ask_user", question="?"))
    handle = agent.start("go")
    await until(lambda: handle.pending_question is not None)
    seen: list[Event] = []
    agent.subscribe(seen.append)
    agent.set_role("planner")
    await handle.wait()
    assert handle.stop_reason == "manual_stop"
    assert agent.role == "planner"
    assert any(e.kind == "warning" and "switch to planner" in e.message for e in seen)


async def test_illegal_transitions_are_caught(workspace):
    agent = agent_for(workspace, {"text": "done"})
    handle = await agent.run("go")
    with pytest.raises(IllegalTransition):
        handle._run.set_state(AgentState.running)


# --- events --------------------------------------------------------------------------------


async def test_many_subscribers_see_the_same_stream_and_a_slow_one_blocks_nobody(workspace):
    agent = agent_for(workspace, call("send_update", message="hi"), {"text": "final words"})
    fast: list[str] = []
    agent.subscribe(lambda e: fast.append(e.kind))
    handle = agent.start("go")

    async def slow_reader() -> list[str]:
        seen: list[str] = []
        async for event in handle.events():
            seen.append(event.kind)
            await asyncio.sleep(0.01)
        return seen

    async def quick_reader() -> list[str]:
        return [e.kind async for e in handle.events()]

    slow_task = asyncio.create_task(slow_reader())
    quick = await quick_reader()
    await handle.wait()
    assert handle.state is AgentState.completed  # the agent finished before the slow reader
    slow = await slow_task
    assert quick == slow == fast
    assert quick[0] == "state" and quick[-1] == "completed"
    seqs = [e.seq for e in handle.events_so_far]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)


async def test_a_failing_subscriber_does_not_break_the_run(workspace):
    agent = agent_for(workspace, {"text": "ok"})

    def broken(event):
        raise RuntimeError("subscriber bug")

    agent.subscribe(broken)
    handle = await agent.run("go")
    assert handle.state is AgentState.completed
    # Kept where it can be found (in a kernel, the log from the agent's thread reaches
    # no cell): the newest few, each with its event's kind.
    assert len(agent.bus.failures) == 5
    assert agent.bus.failures[-1].endswith(": RuntimeError: subscriber bug")


async def test_events_after_the_fact_are_replayed(workspace):
    agent = agent_for(workspace, {"text": "ok"})
    handle = await agent.run("go")
    replayed = [e async for e in handle.events()]
    assert [e.seq for e in replayed] == [e.seq for e in handle.events_so_far]
    for event in replayed:  # and every one serialises for the panel
        assert EventAdapter.validate_json(EventAdapter.dump_json(event)) == event


async def test_text_streams_as_deltas(workspace):
    agent = agent_for(workspace, {"text": "A fairly long answer that streams in pieces."})
    handle = await agent.run("go")
    deltas = [e.text for e in handle.events_so_far if e.kind == "text_delta"]
    assert len(deltas) > 2
    assert "".join(deltas) == "A fairly long answer that streams in pieces."


# --- subagents -------------------------------------------------------------------------------


async def test_a_subagent_records_lineage_and_forwards_its_events(workspace):
    children = []

    @tool
    async def delegate(ctx: ToolContext, task: str) -> str:
        """Delegate a task to a planner subagent."""
        handle = await ctx.require_run().spawn(task, role="planner", tool_use_id=ctx.tool_use_id)
        children.append(handle)
        await handle.wait()
        return handle.summary or ""

    model = ScriptedModel(
        [
            call("delegate", task="look around"),
            {"text": "Child says hi"},
            call("task_complete", summary="delegated"),
        ]
    )
    agent = Agent("actor", model, workspace=workspace, tools=[delegate])
    handle = await agent.run("go")
    child = children[0]
    assert isinstance(child, RunHandle)  # what spawn hands the tool
    assert child.summary == "Child says hi"
    meta = child.agent.session.metadata
    assert meta.parent_session_id == agent.session.id
    assert meta.parent_tool_use_id == agent.history[1].tool_uses[0].id
    assert agent.session.metadata.child_session_ids == [child.session_id]
    got = kinds(handle)
    assert "subagent_spawned" in got and "subagent_output" in got and "subagent_complete" in got


async def test_stopping_the_parent_stops_its_children(workspace):
    started = asyncio.Event()
    holder = []

    @tool
    async def delegate(ctx: ToolContext) -> str:
        """Delegate."""
        child = await ctx.require_run().spawn("wait", role="actor")
        holder.append(child)
        started.set()
        await child.wait()
        return "x"

    model = ScriptedModel([call("delegate"), call("ask_user", question="child asks")])
    agent = Agent("actor", model, workspace=workspace, tools=[delegate])
    handle = agent.start("go")
    await started.wait()
    child = holder[0]
    assert isinstance(child, RunHandle)  # what spawn hands the tool
    await until(lambda: child.pending_question is not None)
    handle.stop()
    await handle.wait()
    assert child.state is AgentState.cancelled
    assert_valid(child.history)


# --- runtime and labels ----------------------------------------------------------------------


async def test_the_runtime_lists_and_shuts_down_the_agents_of_the_process(workspace):
    from jupyter_agent import runtime

    a = agent_for(workspace, call("ask_user", question="?"))
    b = agent_for(workspace, {"text": "quick"})
    ha = a.start("wait")
    await b.run("finish")
    await until(lambda: ha.pending_question is not None)
    assert runtime.get(a.session.id) is a
    assert a in runtime.running()
    assert b not in runtime.running()
    await runtime.shutdown()
    assert ha.stop_reason == "manual_stop"
    assert a not in runtime.running()


async def test_send_continues_the_conversation_after_a_run(workspace):
    agent = agent_for(workspace, {"text": "first"}, {"text": "second"})
    first = await agent.run("one")
    second = await first.send("and another thing")
    await second.wait()
    assert second.summary == "second"
    assert [m.text for m in agent.history if m.role == "user"] == ["one", "and another thing"]


async def test_the_scripted_model_is_labelled_wherever_it_shows(workspace):
    import io

    from jupyter_agent import TextRenderer

    out = io.StringIO()
    agent = agent_for(workspace, {"text": "hi"})
    agent.subscribe(TextRenderer(out, color=False))
    handle = await agent.run("go")
    start = handle.events_so_far[1]
    assert isinstance(start, AgentStartEvent)
    assert start.model_label == "Scripted replay — no real model is called"
    assert "Scripted replay — no real model is called" in out.getvalue()


async def test_wait_for_user_returns_each_new_request_once(workspace):
    policy = AskForWrites()
    agent = agent_for(
        workspace,
        call("write_note", text="a"),
        call("ask_user", question="Which?", options=[{"label": "A", "value": "a"}]),
        call("write_note", text="b"),
        call("task_complete", summary="ok"),
        tools=[write_note],
        policy=policy,
    )
    handle = agent.start("go")
    assert await handle.wait_for_user() == "write_note(text='a')"
    handle.approve(True)
    question = await handle.wait_for_user()  # not the approval just given
    assert isinstance(question, Question)
    assert question.question == "Which?"
    handle.answer("a")
    assert await handle.wait_for_user() == "write_note(text='b')"
    handle.approve(False)
    assert await handle.wait_for_user() is None  # the run ended
    assert handle.state is AgentState.completed


async def test_a_fault_while_a_run_ends_still_wakes_whoever_waits_for_it(workspace, monkeypatch):
    def broken(self, note=""):
        raise RuntimeError("a bug while closing the history")

    monkeypatch.setattr("jupyter_agent.agent._run.Run.close_history", broken)
    agent = Agent("planner", ScriptedModel([{"text": "done"}]), workspace=workspace)
    handle = agent.start("go")
    await asyncio.wait_for(handle.wait(), 5)  # it used to wait forever
