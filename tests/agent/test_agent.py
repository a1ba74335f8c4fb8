"""Runs end to end on the scripted model: control tools, stop reasons, steering."""

from __future__ import annotations

import asyncio
import threading

import pytest
from helpers import PLAN, assert_valid, call, calls, of_type, until

from jupyter_agent import Agent, RunHandle, ScriptedModel, tool
from jupyter_agent.agent import Session
from jupyter_agent.errors import AgentBusy, IllegalTransition
from jupyter_agent.events import AgentStartEvent, Event, EventAdapter, ToolEndEvent, ToolOutcome
from jupyter_agent.models import Pricing
from jupyter_agent.permissions import Allow, Ask, Deny, Role, ToolCall
from jupyter_agent.plans import Question
from jupyter_agent.states import AgentState
from jupyter_agent.tools import ToolContext


def agent_for(workspace, *turns, role="actor", **options) -> Agent:
    return Agent(role, ScriptedModel(list(turns)), workspace=workspace, **options)


def scripted(agent: Agent) -> ScriptedModel:
    """The scripted model ``agent`` runs on (what ``agent_for`` gives it)."""
    assert isinstance(agent.model, ScriptedModel)
    return agent.model


def tool_results(agent: Agent) -> list[tuple[str, bool]]:
    return [(r.text, r.is_error) for m in agent.history for r in m.tool_results]


def kinds(handle) -> list[str]:
    return [e.kind for e in handle.events_so_far]


# --- control tools -------------------------------------------------------------------


async def test_planner_submits_a_plan_and_the_run_completes(workspace):
    agent = agent_for(workspace, call("submit_plan", "Here is my plan.", **PLAN), role="planner")
    handle = agent.start("Clean the sales data")
    assert handle.state in (AgentState.idle, AgentState.running)  # start returned at once
    await handle.wait()
    assert handle.state is AgentState.completed  # type: ignore[comparison-overlap]  # it ran on
    assert handle.stop_reason == "completed"
    assert handle.plan is not None and handle.plan.goal == "Clean the sales data"
    assert [p.status for p in handle.plan_progress] == ["pending", "pending"]
    assert "plan" in kinds(handle)
    assert agent.history[1].message_type == "plan"
    assert tool_results(agent) == [
        ("The plan (2 steps) is shown to the user for review. Stop here.", False)
    ]
    assert_valid(agent.history)

    one_step = {**PLAN, "steps": PLAN["steps"][:1]}
    agent.model = ScriptedModel([call("submit_plan", **one_step)])
    await agent.run("Only load it")
    assert tool_results(agent)[-1][0].startswith("The plan (1 step) is shown")
    assert agent.handle.stop_message == "Submitted a plan with 1 step for review."


async def test_actor_tracks_plan_steps_and_completes_with_a_summary(workspace):
    agent = agent_for(
        workspace,
        call("submit_plan", **PLAN),
        call("update_plan_step", step_number=1, status="in_progress"),
        calls(
            ("update_plan_step", {"step_number": 1, "status": "done"}),
            ("update_plan_step", {"step_number": 2, "status": "skipped", "note": "none found"}),
        ),
        call("send_update", message="Halfway there"),
        call("task_complete", summary="Removed 3 duplicates"),
        role="planner",
    )
    await agent.run("plan it")
    handle = await agent.run("execute the plan", role="actor")
    assert handle.role == "actor"
    assert handle.summary == "Removed 3 duplicates"
    assert [(p.status, p.note) for p in handle.plan_progress] == [
        ("done", ""),
        ("skipped", "none found"),
    ]
    updates = [e for e in handle.events_so_far if e.kind == "plan_step"]
    assert [(u.step_number, u.status) for u in updates] == [
        (1, "in_progress"),
        (1, "done"),
        (2, "skipped"),
    ]
    assert any(e.kind == "update" and e.message == "Halfway there" for e in handle.events_so_far)
    assert_valid(agent.history)


async def test_execute_plan_hands_the_last_plan_to_the_actor(workspace):
    agent = agent_for(
        workspace,
        call("submit_plan", **PLAN),
        call("update_plan_step", step_number=1, status="done"),
        call("task_complete", summary="Loaded it"),
        role="planner",
    )
    with pytest.raises(ValueError, match="no plan to execute yet"):
        agent.execute_plan()
    await agent.run("plan it")
    handle = await agent.execute_plan()
    assert (handle.role, handle.state, handle.summary) == (
        "actor",
        AgentState.completed,
        "Loaded it",
    )
    task = scripted(agent).requests[1].messages[-1]["content"]
    assert "update_plan_step" in str(task) and "Drop duplicate rows" in str(task)
    assert [p.status for p in handle.plan_progress] == ["done", "pending"]


async def test_a_planning_run_ends_with_its_plan_ready_and_execute_plan_says_so_as_data(
    workspace,
):
    agent = agent_for(
        workspace,
        call("submit_plan", **PLAN),
        call("task_complete", summary="Loaded it"),
        role="planner",
    )
    planned = await agent.run("plan it")
    [start] = [e for e in planned.events_so_far if e.kind == "agent_start"]
    [end] = [e for e in planned.events_so_far if e.kind == "completed"]
    assert (start.action, end.plan_ready) == (None, True)
    assert agent.history[0].message_type == "text"

    executed = await agent.execute_plan()
    [start] = [e for e in executed.events_so_far if e.kind == "agent_start"]
    [end] = [e for e in executed.events_so_far if e.kind == "completed"]
    assert (start.action, end.plan_ready) == ("execute_plan", False)
    # The prompt it became is marked in the history, so a resumed session shows the action.
    [prompt] = [m for m in agent.history if m.message_type == "execute_plan"]
    assert prompt.role == "user" and prompt.text == start.task
    # Carried in the event stream and in the session file alike.
    again = EventAdapter.validate_json(EventAdapter.dump_json(start))
    assert isinstance(again, AgentStartEvent)
    assert again.action == "execute_plan"
    resumed = Agent.resume(agent.session.id, workspace=workspace, model=ScriptedModel([]))
    assert [m.message_type for m in resumed.history].count("execute_plan") == 1


async def test_retry_after_a_failed_execution_executes_the_plan_again(workspace):
    # Retry after Execute plan failed sends Execute plan again (with its action), not the
    # prompt as if the user had typed it.
    agent = Agent(
        "planner",
        ScriptedModel([call("submit_plan", **PLAN), call("task_complete", summary="planned")]),
        workspace=workspace,
    )
    await agent.run("plan it")
    agent.model = ScriptedModel([], on_exhausted="error")
    failed = await agent.execute_plan()
    assert failed.stop_reason == "error"
    agent.model = ScriptedModel([call("task_complete", summary="done")])
    again = await agent.retry()
    [start] = [e for e in again.events_so_far if e.kind == "agent_start"]
    assert (start.action, again.role, again.summary) == ("execute_plan", "actor", "done")
    resumed = Agent.resume(agent.session.id, workspace=workspace, model=ScriptedModel([]))
    resumed.model = ScriptedModel([call("task_complete", summary="done again")])
    handle = await resumed.retry()
    [start] = [e for e in handle.events_so_far if e.kind == "agent_start"]
    assert start.action == "execute_plan"


async def test_execute_plan_while_that_plan_runs_follows_the_running_run(workspace):
    agent = agent_for(
        workspace,
        call("submit_plan", **PLAN),
        call("execute_command", command="echo cleaning"),  # asks first: the run waits
        call("task_complete", summary="Cleaned"),
        role="planner",
    )
    await agent.run("plan it")
    clicked = agent.execute_plan()  # the panel's button
    assert await clicked.wait_for_user() is not None
    followed = agent.execute_plan()  # a cell asking for the same, meanwhile
    assert followed.id == clicked.id
    with pytest.raises(AgentBusy, match="still running"):
        agent.execute_plan(role="planner")  # another role: another run, refused
    with pytest.raises(AgentBusy, match="still running"):
        agent.start("something else")
    followed.approve(True)
    assert (await followed.wait()).summary == "Cleaned"
    assert agent.execute_plan().id == clicked.id  # executed: not run a second time
    assert len([m for m in agent.history if m.role == "user" and "approved plan" in m.text]) == 1


async def test_execute_plan_after_a_stopped_execution_carries_on(workspace):
    agent = agent_for(
        workspace,
        call("submit_plan", **PLAN),
        call("execute_command", command="echo cleaning"),
        call("task_complete", summary="Cleaned"),
        role="planner",
    )
    await agent.run("plan it")
    first = agent.execute_plan()
    assert await first.wait_for_user() is not None
    first.stop()
    await first.wait()
    again = agent.execute_plan()
    assert again.id != first.id
    assert (await again.wait()).summary == "Cleaned"
    assert_valid(agent.history)
    agent.model = ScriptedModel([{"text": "Noted."}])
    await agent.run("thanks")  # a later run: executing the plan now is a new request
    handle = agent.execute_plan()
    assert handle.id not in (first.id, again.id)
    await handle.wait()


async def test_update_plan_step_without_a_plan_is_an_error_the_model_reads(workspace):
    agent = agent_for(workspace, call("update_plan_step", step_number=1, status="done"))
    await agent.run("go")
    assert tool_results(agent)[0] == (
        "There is no plan to update: no plan was submitted in this session.",
        True,
    )


async def test_ask_user_with_options_waits_for_the_answer(workspace):
    question = {
        "question": "Drop rows with missing prices?",
        "context": "12 rows have no price.",
        "severity": "major",
        "options": [
            {"label": "Drop them", "value": "drop"},
            {"label": "Keep them", "value": "keep"},
        ],
        "default": "keep",
    }
    agent = agent_for(workspace, call("ask_user", **question), call("task_complete", summary="ok"))
    handle = agent.start("clean")
    await until(lambda: handle.pending_question is not None)
    assert handle.state is AgentState.waiting_user
    with pytest.raises(ValueError, match="not one of the options"):
        handle.answer("maybe")
    handle.answer("Drop them")
    await handle.wait()
    assert tool_results(agent)[0] == ("The user chose “Drop them” (value: drop).", False)
    answered = [e for e in handle.events_so_far if e.kind == "answer"]
    assert answered[0].value == "drop"


async def test_ask_user_without_options_is_request_input(workspace):
    agent = agent_for(
        workspace, call("ask_user", question="Which file?"), call("task_complete", summary="ok")
    )
    handle = agent.start("go")
    await until(lambda: handle.pending_question is not None)
    question = handle.pending_question
    assert question is not None and question.free_text
    handle.answer("sales_2024.csv")
    await handle.wait()
    assert tool_results(agent)[0] == ("The user answered: sales_2024.csv", False)


async def test_answer_without_a_question_is_refused_at_once(workspace):
    agent = agent_for(workspace, {"text": "hi"})
    handle = await agent.run("go")
    with pytest.raises(ValueError, match="not waiting for an answer"):
        handle.answer("x")
    with pytest.raises(ValueError, match="waiting for approval"):
        handle.approve(True)


async def test_question_timeout_emits_the_event_and_stops_without_deciding(workspace):
    agent = agent_for(
        workspace,
        call("ask_user", question="Continue?"),
        call("task_complete", summary="must never happen"),
        question_timeout=0.05,
    )
    handle = await agent.run("go")
    assert handle.stop_reason == "input_timeout"
    assert handle.state is AgentState.cancelled
    assert "request_input_timeout" in kinds(handle)
    assert scripted(agent).remaining == 1  # it did not go on for the user
    text, is_error = tool_results(agent)[0]
    assert is_error and "No answer within 0.05 s" in text
    (ended,) = [e for e in handle.events_so_far if e.kind == "tool_end"]
    assert ended.outcome == ToolOutcome.stopped
    assert_valid(agent.history)


# --- tools and permissions ----------------------------------------------------------


@tool(category="files", permissions={"write_files"})
def write_note(text: str) -> str:
    """Write a note."""
    return f"wrote {text}"


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


class AskForWrites:
    def __init__(self) -> None:
        self.remembered: list[str] = []

    def decide(self, call: ToolCall):
        if call.name == "write_note" and "secret" in call.input.get("text", ""):
            return Deny("notes about secrets are not allowed")
        if call.name in self.remembered:
            return Allow("remembered")
        return Ask("writes need approval") if call.name == "write_note" else Allow()

    def remember(self, call: ToolCall) -> str:
        self.remembered.append(call.name)
        return f"allow {call.name} for this session"


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
