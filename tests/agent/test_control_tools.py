"""The control tools, end to end on the scripted model: a plan submitted, its steps
tracked, Execute plan (again after a stop or a failure, followed while it runs), and
ask_user with or without options, answered, refused, or timing out."""

from __future__ import annotations

import pytest
from helpers import PLAN, assert_valid, call, calls, until
from scripted_runs import agent_for, kinds, scripted, tool_results

from jupyter_agent import Agent, ScriptedModel
from jupyter_agent.errors import AgentBusy
from jupyter_agent.events import AgentStartEvent, EventAdapter, ToolOutcome
from jupyter_agent.states import AgentState

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


async def test_an_answer_a_stop_overtakes_is_still_recorded_as_given(workspace):
    # The user answers, and Stops before the run has read the answer (both in one tick of
    # the agent's loop): the transcript must not say the question went unanswered.
    agent = agent_for(
        workspace,
        call("ask_user", question="Drop the rows?", options=[{"label": "Yes", "value": "y"}]),
        call("task_complete", summary="ok"),
    )
    handle = agent.start("clean")
    await until(lambda: handle.pending_question is not None)
    handle.answer("Yes")
    handle.stop()
    await handle.wait()
    assert handle.stop_reason == "manual_stop"
    answered = [e for e in handle.events_so_far if e.kind == "answer"]
    assert [(e.value, e.label) for e in answered] == [("y", "Yes")]
