"""Subagents through ``delegate``: no escalation, one budget, side by side, one Stop.

What a user relies on:

1. delegating never widens what an agent may do: a Planner starts only Planners, and no
   agent starts a role (built in or from settings) with a permission it lacks; an
   unknown role is refused with the roles it may use;
2. a subagent spends from its parent's limits and its usage is its parent's too;
3. delegate calls of one turn run at the same time (bounded), and their results come
   back in the turn's order;
4. Stop stops every subagent, and every history (parent and children) stays a valid
   conversation that can be continued;
5. a subagent shares its parent's rules, and its questions and approvals reach the user.
"""

from __future__ import annotations

import asyncio
import io
import json
from typing import Any

from helpers import assert_valid, call, calls, until

from jupyter_agent import Agent, AnthropicModel, ScriptedModel, tool
from jupyter_agent.agent import RunHandle
from jupyter_agent.agent.render import TextRenderer
from jupyter_agent.config.rules import Rule, Rules
from jupyter_agent.events import QuestionEvent
from jupyter_agent.messages import INTERRUPTED_RESULT
from jupyter_agent.models import Pricing
from jupyter_agent.permissions import Allow, Ask, Permission, Role, ToolCall
from jupyter_agent.states import AgentState
from jupyter_agent.testing import MessagesServer, Reply, text, tool_use


@tool(category="files", permissions={"write_files"})
def note(text: str) -> str:
    """Write a note (a write: the Planner may not)."""
    return f"noted {text}"


@tool(category="read", permissions={"read_files"})
def look(what: str) -> str:
    """Look at something (a read)."""
    return f"saw {what}"


def first_text(request: Any) -> str:
    """The first user message of a request: the task its agent was started on."""
    content = request.messages[0]["content"]
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content if b.get("type") == "text")


def routed(parent: list[dict[str, Any]], **children: list[dict[str, Any]]) -> ScriptedModel:
    """One scripted model for a parent and its subagents: a request whose task names a
    key of ``children`` takes that child's next turn, any other the parent's."""
    queues = {"": list(parent), **{k: list(v) for k, v in children.items()}}

    def answer(request: Any) -> dict[str, Any]:
        task = first_text(request)
        key = next((k for k in children if k in task), "")
        turns = queues[key]
        return turns.pop(0) if turns else {"text": f"({key or 'parent'}: no more turns)"}

    return ScriptedModel([answer] * 200, pricing=Pricing(10.0, 10.0))


def results(agent: Agent) -> list[tuple[str, bool]]:
    return [(r.text, r.is_error) for m in agent.history for r in m.tool_results]


def child_agents(handle: RunHandle) -> list[Agent]:
    return [c.agent for c in handle.children]


# --- 1. no escalation -------------------------------------------------------------


async def test_a_planner_cannot_delegate_to_an_actor(workspace):
    model = routed(
        [call("delegate", task="edit the file", role="actor"), {"text": "ok"}],
        edit=[call("note", text="x")],
    )
    agent = Agent("planner", model, workspace=workspace, tools=[note])
    handle = await agent.run("go")
    (result,) = results(agent)
    assert result[1] is True
    assert result[0].startswith("Refused: the planner role may not delegate to the actor role")
    assert "The roles you may delegate to: planner." in result[0]
    assert handle.children == []
    assert agent.session.metadata.child_session_ids == []
    assert [e for e in handle.events_so_far if e.kind == "subagent_spawned"] == []


async def test_no_role_from_settings_with_more_permissions_can_be_delegated_to(workspace):
    # A custom role that only adds one permission to the Planner's: still more.
    reviewer = Role("reviewer", Permission.READ_ONLY | {Permission.EXECUTE_COMMANDS})
    reader = Role("reader", frozenset({Permission.READ_FILES}))
    model = routed(
        [
            calls(
                ("delegate", {"task": "run the tests", "role": "reviewer"}),
                ("delegate", {"task": "anything", "role": "wizard"}),
                ("delegate", {"task": "read notes.md", "role": "reader"}),
            ),
            {"text": "ok"},
        ],
        notes=[{"text": "notes say hi"}],
    )
    agent = Agent("planner", model, workspace=workspace, roles=[reviewer, reader])
    handle = await agent.run("go")
    (refused, unknown, allowed) = results(agent)
    assert refused[1] and "may not delegate to the reviewer role" in refused[0]
    assert "(execute_commands)" in refused[0]
    assert refused[0].endswith("The roles you may delegate to: planner, reader.")
    assert unknown == (
        "There is no role 'wizard'. The roles you may delegate to: planner, reader.",
        True,
    )
    assert allowed[1] is False and "notes say hi" in allowed[0]
    assert [c.role for c in handle.children] == ["reader"]


async def test_an_actor_may_delegate_to_an_actor_and_a_planner(workspace):
    model = routed(
        [
            calls(
                ("delegate", {"task": "write note A", "role": "actor"}),
                ("delegate", {"task": "plan B"}),
            ),
            {"text": "both done"},
        ],
        A=[call("note", text="A"), call("task_complete", summary="wrote A")],
        B=[{"text": "B needs nothing"}],
    )
    agent = Agent("actor", model, workspace=workspace, tools=[note])
    handle = await agent.run("go")
    assert [r[1] for r in results(agent)] == [False, False]
    assert "wrote A" in results(agent)[0][0] and "B needs nothing" in results(agent)[1][0]
    assert [c.role for c in handle.children] == ["actor", "planner"]
    assert handle.summary == "both done"


async def test_delegation_depth_is_bounded(workspace):
    model = routed(
        [call("delegate", task="level one: delegate level two"), {"text": "ok"}],
        one=[call("delegate", task="level two"), {"text": "one done"}],
        two=[{"text": "two done"}],
    )
    agent = Agent("planner", model, workspace=workspace, delegation_depth=1)
    handle = await agent.run("go")
    (child,) = handle.children
    # Not offered at the limit, and refused if called anyway.
    assert "delegate" not in [t.name for t in child._run.tools]
    [(child_result, _)] = [(r.text, r.is_error) for m in child.history for r in m.tool_results]
    assert child_result.startswith("Unknown tool 'delegate'")
    assert child.children == []


# --- 2. one budget, one usage ----------------------------------------------------------


@tool(category="read", permissions={"read_files"})
def busy() -> str:
    """Do a little work."""
    return "worked"


async def test_a_child_cannot_spend_beyond_the_parents_budget(workspace):
    model = routed(
        [call("delegate", task="spend forever"), {"text": "ok"}],
        spend=[call("busy") for _ in range(50)],
    )
    agent = Agent("planner", model, workspace=workspace, tools=[busy], budget_usd=0.5)
    handle = await agent.run("go")
    (child,) = handle.children
    assert child.stop_reason == "budget"
    assert "of its planner parent's $0.5000 budget" in child.stop_message
    (result, is_error) = results(agent)[0]
    assert is_error and "ran out of budget" in result
    # It stopped at the first step past the parent's budget: one call's cost over at most.
    per_call = child.usage.cost_usd / child.usage.calls
    assert handle.usage.cost_usd < 0.5 + 2 * per_call
    assert child.step < 50
    assert handle.stop_reason == "budget"  # and the parent stops too: nothing left


async def test_a_childs_usage_counts_in_its_parents_run_and_session(workspace):
    model = routed(
        [call("delegate", task="look around"), {"text": "done"}],
        around=[call("look", what="data"), {"text": "saw data"}],
    )
    agent = Agent("planner", model, workspace=workspace, tools=[look])
    handle = await agent.run("go")
    (child,) = handle.children
    own = sum(
        e.input_tokens
        for e in handle.events_so_far
        if e.kind == "usage" and e.run_id == handle.id and e.input_tokens
    )
    assert child.usage.calls == 2 and handle.usage.calls == 4
    assert handle.usage.input_tokens == own  # every UsageEvent of the parent counted once
    assert handle.usage.input_tokens > child.usage.input_tokens > 0
    assert handle.usage.cost_usd > child.usage.cost_usd > 0
    assert agent.session.metadata.usage.calls == 4
    # The panel's usage line reads the parent's own usage events: the last one has it all.
    last = [e for e in handle.events_so_far if e.kind == "usage"][-1]
    assert last.run_cost_usd == handle.usage.cost_usd


async def test_sessions_are_linked_both_ways_on_disk(workspace):
    model = routed(
        [call("delegate", task="look around"), {"text": "done"}], around=[{"text": "ok"}]
    )
    agent = Agent("planner", model, workspace=workspace)
    handle = await agent.run("go")
    (child,) = handle.children
    assert agent.session.path is not None and child.agent.session.path is not None
    parent_meta = json.loads((agent.session.path / "metadata.json").read_text())
    child_meta = json.loads((child.agent.session.path / "metadata.json").read_text())
    assert parent_meta["child_session_ids"] == [child.session_id]
    assert child_meta["parent_session_id"] == agent.session.id
    start = next(e for e in handle.events_so_far if e.kind == "subagent_spawned")
    assert child_meta["parent_tool_use_id"] == start.parent_tool_use_id
    assert start.parent_tool_use_id == agent.history[1].tool_uses[0].id
    # The child's own session lists apart from the user's (the panel's picker hides it).
    assert {m.session_id for m in Agent.sessions(workspace)} >= {agent.session.id}


# --- 3. side by side, in order ------------------------------------------------------


def _task(body: dict[str, Any]) -> str:
    content = body["messages"][0]["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


async def test_two_children_run_at_once_and_their_results_come_back_in_order(workspace):
    with MessagesServer() as server:
        held: list[str] = []

        def respond(body: dict[str, Any]) -> Reply:
            task = _task(body)
            replied = any(
                m["role"] == "user" and m is not body["messages"][0] for m in body["messages"]
            )
            if "child" not in task:
                if not replied:
                    return Reply(
                        [
                            tool_use("delegate", {"task": "child A: count rows"}),
                            tool_use("delegate", {"task": "child B: count columns"}),
                        ],
                        "tool_use",
                    )
                return Reply([text("A and B reported")])
            name = "A" if "child A" in task else "B"
            held.append(name)
            # Each child's stream stops after a few events until released: both can only
            # be held at once if both requests are in flight together.
            return Reply([text(f"child {name} result " * 3)], hold_after=3)

        server.responder = respond
        model = AnthropicModel("claude-test", base_url=server.url, api_key="k", retry_delay=0.001)
        agent = Agent("planner", model, workspace=workspace)
        handle = agent.start("go")
        await until(lambda: len(held) == 2, timeout=10)
        both = [r for r in server.requests if "child" in _task(r.body)]
        assert len(both) == 2 and all(r.outcome is None for r in both)  # both open at once
        # B may be released first; the results still come back in the turn's order.
        server.release()
        await handle.wait()
    assert handle.state is AgentState.completed, handle.stop_message
    (a, b) = results(agent)
    assert "child A result" in a[0] and "child B result" in b[0]
    assert [c.task for c in handle.children] == ["child A: count rows", "child B: count columns"]
    assert_valid(agent.history)


async def test_at_most_delegates_at_once_children_run_together(workspace):
    running: list[int] = []
    peak = 0

    @tool(category="read", permissions={"read_files"})
    async def slow(tag: str) -> str:
        """Take a while."""
        nonlocal peak
        running.append(1)
        peak = max(peak, len(running))
        await asyncio.sleep(0.05)
        running.pop()
        return tag

    tasks = [f"job {i}" for i in range(4)]
    model = routed(
        [calls(*(("delegate", {"task": t}) for t in tasks)), {"text": "all done"}],
        **{f"{i}": [call("slow", tag=f"t{i}"), {"text": f"result {i}"}] for i in range(4)},
    )
    agent = Agent("planner", model, workspace=workspace, tools=[slow], delegates_at_once=2)
    handle = await agent.run("go")
    assert peak == 2
    assert [f"result {i}" in t for i, (t, _) in enumerate(results(agent))] == [True] * 4
    assert handle.summary == "all done"


# --- 4. Stop stops them all -----------------------------------------------------------


@tool(category="read", permissions={"read_files"})
async def nap(seconds: float) -> str:
    """Sleep a while."""
    await asyncio.sleep(seconds)
    return "slept"


async def test_stop_during_two_running_children_leaves_every_history_valid_and_resumable(
    workspace,
):
    model = routed(
        [
            calls(("delegate", {"task": "first nap"}), ("delegate", {"task": "second nap"})),
            {"text": "again: fine"},
        ],
        first=[call("nap", seconds=30)],
        second=[call("nap", seconds=30)],
    )
    agent = Agent("planner", model, workspace=workspace, tools=[nap])
    handle = agent.start("go")
    await until(lambda: len(handle.children) == 2)
    children = handle.children
    await until(lambda: all(c.state is AgentState.tool_executing for c in children))
    handle.stop()
    await asyncio.wait_for(handle.wait(), 5)
    assert handle.stop_reason == "manual_stop"
    assert all(c.done and c.stop_reason == "manual_stop" for c in children)
    assert results(agent) == [(INTERRUPTED_RESULT, True), (INTERRUPTED_RESULT, True)]
    assert_valid(agent.history)
    ends = [e for e in handle.events_so_far if e.kind == "subagent_complete"]
    assert [e.state for e in ends] == [AgentState.cancelled] * 2
    for child in children:
        assert_valid(child.history)
        assert child.history[-1].tool_results[0].text == INTERRUPTED_RESULT
        # Each child's session continues from disk.
        resumed = Agent.resume(
            child.session_id,
            workspace=workspace,
            model=ScriptedModel([{"text": "continued"}]),
        )
        assert (await resumed.run("go on")).summary == "continued"
        assert_valid(resumed.history)
    # And the parent goes on.
    assert (await handle.send("again")).summary == "again: fine"
    assert_valid(agent.history)


# --- 5. rules, questions and approvals ---------------------------------------------------


class AskForNotes:
    """Asks about ``note`` until a session rule allows it (a stand-in for Rules)."""

    def __init__(self) -> None:
        self.allowed_sessions: set[str] = set()
        self.seen: list[tuple[str, str]] = []

    def decide(self, call: ToolCall):
        self.seen.append((call.name, call.session_id))
        if call.name != "note" or call.session_id in self.allowed_sessions:
            return Allow()
        return Ask("notes need approval")

    def remember(self, call: ToolCall) -> str | None:
        self.allowed_sessions.add(call.session_id)
        return "allow note this session"

    def preview_remember(self, call: ToolCall) -> str | None:
        return "allow note this session"


async def test_a_child_shares_its_parents_rules_and_always_allow(workspace):
    policy = AskForNotes()
    model = routed(
        [
            call("delegate", task="note it", role="actor"),
            call("note", text="parent"),
            {"text": "ok"},
        ],
        it=[call("note", text="child"), {"text": "noted"}],
    )
    agent = Agent("actor", model, workspace=workspace, tools=[note], policy=policy)
    handle = agent.start("go")
    await until(lambda: len(handle.children) == 1)
    (child,) = handle.children
    assert await child.wait_for_user() == "note(text='child')"
    child.approve(True, remember=True)  # Always allow, in the child
    await handle.wait()
    # The parent's own note then runs without asking: one session's rules for both.
    assert [e.kind for e in handle.events_so_far if e.kind == "permission_request"] == []
    assert {sid for name, sid in policy.seen if name == "note"} == {agent.session.id}
    assert results(agent)[-1] == ("noted parent", False)


async def test_a_roles_rules_never_let_a_parent_skip_an_approval_through_a_subagent(workspace):
    # The user's rules: notes ask, except for a scribe, whose notes run.
    def rules() -> Rules:
        ruled = Rules.defaults()
        ruled.add(Rule.ask("note", priority=50), Rule.allow("note", scope="role", target="scribe"))
        return ruled

    scribe = Role("scribe", frozenset({Permission.WRITE_FILES}))
    # A scribe the user started writes without asking (the rule does apply)...
    alone = Agent(
        "scribe",
        ScriptedModel([call("note", text="own"), {"text": "ok"}]),
        workspace=workspace,
        tools=[note],
        roles=[scribe],
        policy=rules(),
    )
    await alone.run("go")
    assert results(alone) == [("noted own", False)]
    # ...but an Actor, asked about notes, cannot write one through a scribe unasked.
    model = routed(
        [call("delegate", task="scribe it", role="scribe"), {"text": "ok"}],
        scribe=[call("note", text="via"), {"text": "done"}],
    )
    agent = Agent("actor", model, workspace=workspace, tools=[note], roles=[scribe], policy=rules())
    handle = agent.start("go")
    await until(lambda: len(handle.children) == 1)
    (child,) = handle.children
    assert await child.wait_for_user() == "note(text='via')"
    child.deny()
    await handle.wait()
    assert results(child.agent)[0][1] is True


async def test_pause_pauses_the_running_subagents_and_resume_resumes_them(workspace):
    model = routed(
        [call("delegate", task="nap then look"), {"text": "ok"}],
        nap=[call("nap", seconds=1.0), call("look", what="x"), {"text": "looked"}],
    )
    agent = Agent("planner", model, workspace=workspace, tools=[nap, look])
    handle = agent.start("go")
    await until(lambda: len(handle.children) == 1)
    (child,) = handle.children
    # Paused while its nap runs: it takes effect when the nap ends, before the next call.
    await until(lambda: any(e.kind == "tool_start" for e in child.events_so_far))
    handle.pause()
    await until(lambda: child.state is AgentState.paused)
    assert [e.name for e in child.events_so_far if e.kind == "tool_start"] == ["nap"]
    handle.resume()
    await handle.wait()
    assert child.summary == "looked" and handle.summary == "ok"


async def test_a_childs_question_reaches_the_user_and_the_answer_the_child(workspace):
    model = routed(
        [call("delegate", task="ask which file"), {"text": "ok"}],
        which=[
            call(
                "ask_user",
                question="Which file?",
                options=[
                    {"label": "a.csv", "value": "a"},
                    {"label": "b.csv", "value": "b"},
                ],
            ),
            {"text": "will use it"},
        ],
    )
    agent = Agent("planner", model, workspace=workspace)
    handle = agent.start("go")
    await until(
        lambda: any(
            e.kind == "subagent_output" and e.event.kind == "question" for e in handle.events_so_far
        )
    )
    wrapped = next(
        e
        for e in handle.events_so_far
        if e.kind == "subagent_output" and e.event.kind == "question"
    )
    asked = wrapped.event
    assert isinstance(asked, QuestionEvent)
    found = handle.waiting_on(asked.question_id)
    assert found is not None and found.session_id == wrapped.child_session_id
    found.answer("b")
    await handle.wait()
    (child,) = handle.children
    assert results(child.agent)[0][0] == "The user chose “b.csv” (value: b)."
    assert handle.state is AgentState.completed


# --- the text renderer -------------------------------------------------------------------


async def test_the_text_renderer_shows_each_subagent_indented_under_its_call(workspace):
    model = routed(
        [
            calls(("delegate", {"task": "job A"}), ("delegate", {"task": "job B"})),
            {"text": "both reported"},
        ],
        A=[call("look", what="a.csv"), {"text": "A found 3 rows\nand no gaps"}],
        B=[{"text": "B found nothing"}],
    )
    out = io.StringIO()
    agent = Agent("planner", model, workspace=workspace, tools=[look])
    agent.subscribe(TextRenderer(out, color=False))
    handle = await agent.run("go")
    (a, b) = handle.children
    lines = out.getvalue().splitlines()
    assert f"↳ 1: planner subagent {a.session_id}: job A" in lines
    assert f"↳ 2: planner subagent {b.session_id}: job B" in lines
    # The subagents' own lines, whole, indented and numbered (they ran at once).
    assert "  1│ ⚙ look(what='a.csv')" in lines
    assert lines.index("  1│ A found 3 rows") + 1 == lines.index("  1│ and no gaps")
    assert "  2│ B found nothing" in lines
    assert f"↳ 1: subagent {a.session_id} ended completed" in lines
    assert "both reported" in lines
