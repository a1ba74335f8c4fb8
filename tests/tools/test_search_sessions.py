"""search_sessions: the Planner recalls past sessions of its workspace, and changes nothing.

Runs go through the real run loop with a scripted model; the sessions are real ones,
written by earlier agents in the same workspace.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from helpers import PLAN, assert_valid, call

from jupyter_agent import Agent, ScriptedModel
from jupyter_agent.permissions import PLANNER
from jupyter_agent.sessions.index import SESSIONS_DIR, SessionIndex


async def test_the_planner_finds_a_past_sessions_plan_through_the_run_loop(
    workspace: Path,
) -> None:
    past = Agent("planner", ScriptedModel([call("submit_plan", **PLAN)]), workspace=workspace)
    await past.run("tidy up sales.csv")
    other = Agent("planner", ScriptedModel([{"text": "Plotted."}]), workspace=workspace)
    await other.run("plot the weather")

    model = ScriptedModel(
        [call("search_sessions", query="duplicate rows"), {"text": "We did this before."}]
    )
    planner = Agent("planner", model, workspace=workspace)
    handle = await planner.run("how did we handle duplicates last time?")

    assert handle.state.value == "completed"
    assert "search_sessions" in {t["name"] for t in model.requests[0].tools}
    (result,) = [r for m in planner.history for r in m.tool_results]
    assert not result.is_error, result.text
    text = result.text
    assert f"tidy up sales.csv — session {past.session.id}" in text
    assert "plan (submit_plan): " in text and "Drop **duplicate** **rows**" in text
    assert other.session.id not in text
    assert_valid(planner.history)


async def test_the_current_session_is_left_out_unless_asked_for(workspace: Path) -> None:
    turns = [
        call("search_sessions", query="zebra"),
        call("search_sessions", query="zebra", include_current=True),
        {"text": "done"},
    ]
    agent = Agent("planner", ScriptedModel(turns), workspace=workspace)
    await agent.run("remember the zebra crossing")
    first, second = [r.text for m in agent.history for r in m.tool_results]
    assert first == "No past session of this workspace mentions 'zebra'."
    assert f"session {agent.session.id}" in second


async def test_a_query_of_only_syntax_is_a_clear_tool_error_and_the_run_goes_on(
    workspace: Path,
) -> None:
    (workspace / SESSIONS_DIR).mkdir(parents=True)
    turns = [
        call("search_sessions", query='( * -" )'),
        call("search_sessions", query="x", limit=500),
        {"text": "ok"},
    ]
    agent = Agent("planner", ScriptedModel(turns), workspace=workspace)
    handle = await agent.run("search")
    assert handle.state.value == "completed"
    syntax, limit = [r for m in agent.history for r in m.tool_results]
    assert syntax.is_error and "Nothing to search for" in syntax.text
    assert limit.is_error and "limit must be between 1 and 20" in limit.text


async def test_a_planner_searching_a_workspace_without_sessions_writes_nothing(
    workspace: Path,
) -> None:
    (workspace / "notes.md").write_text("hello\n")
    model = ScriptedModel([call("search_sessions", query="anything"), {"text": "none"}])
    agent = Agent("planner", model, workspace=workspace, persist=False)
    await agent.run("what did we do before?")
    assert sorted(p.name for p in workspace.iterdir()) == ["notes.md"]
    tool = agent.tools["search_sessions"]
    assert tool.permissions <= PLANNER.permissions and tool.category == "read"


def test_agent_search_sessions_gives_the_hits_as_objects(workspace: Path) -> None:
    past = Agent("planner", ScriptedModel([{"text": "The median is 4.2"}]), workspace=workspace)
    asyncio.run(past.run("compute the median latency"))
    assert SessionIndex.of(workspace / SESSIONS_DIR).wait()
    now = Agent("planner", ScriptedModel(), workspace=workspace)
    (hit,) = now.search_sessions("median")
    assert hit.session_id == past.session.id and hit.title == "compute the median latency"
    assert hit.matches == 2
    assert past.search_sessions("median") == []  # its own session is left out
    assert past.search_sessions("median", include_current=True)[0].session_id == past.session.id


async def test_a_hit_shows_its_notebook_and_outcome_and_read_session_reads_more(
    workspace: Path,
) -> None:
    """The model sees what a past session came to under the passage that matched, with its
    notebook (another notebook's cell ids are not this one's), and reads more of it with
    read_session: a read tool the Planner has, secrets hidden as in every result."""
    secret = "hunter2-correct-horse-battery"
    past = Agent(
        "actor",
        ScriptedModel(
            [call("list_directory", path="."), call("task_complete", summary="Dropped 12 rows.")]
        ),
        workspace=workspace,
    )
    past.session.work_on("a.ipynb")
    await past.run(f"dedupe the sales table, password {secret}")
    model = ScriptedModel(
        [
            call("search_sessions", query="dedupe sales"),
            call("read_session", session_id=past.session.id),
            call("read_session", session_id="../../etc"),
            call("read_session", session_id="nosuchsession"),
            {"text": "done"},
        ]
    )
    planner = Agent("planner", model, workspace=workspace)
    planner.session.work_on("b.ipynb")
    planner.secrets.add(secret)
    await planner.run("what did we do about duplicates?")
    found, read, bad, missing = [r for m in planner.history for r in m.tool_results]
    assert not found.is_error, found.text
    assert "notebook a.ipynb (another notebook: its cell ids are not this one's)" in found.text
    assert "   outcome (summary): Dropped 12 rows." in found.text
    assert found.text.endswith("read_session(session_id) reads more of a session.")
    assert not read.is_error, read.text
    lines = read.text.splitlines()
    assert lines[0].startswith(f"Session {past.session.id}: dedupe the sales table")
    assert (
        lines[1] == "Notebook: notebook a.ipynb (another notebook: its cell ids are not this one's)"
    )
    assert "#1 user: dedupe the sales table, password" in read.text
    assert '#2 tool call list_directory: {"path": "."}' in read.text
    assert "#3 tool result list_directory: " in read.text
    assert '#4 tool call task_complete: {"summary": "Dropped 12 rows."}' in read.text
    assert secret not in found.text + read.text
    assert bad.is_error and "is not a session id" in bad.text
    assert missing.is_error and "no session 'nosuchsession'" in missing.text
    assert "known" not in missing.text  # no list of the workspace's sessions
    tool = planner.tools["read_session"]
    assert tool.category == "read" and tool.permissions <= PLANNER.permissions
    assert "read_session" in {t["name"] for t in model.requests[0].tools}
    assert_valid(planner.history)


def test_read_session_gives_a_long_session_in_parts(workspace: Path) -> None:
    from jupyter_agent.agent import Session
    from jupyter_agent.messages import Message
    from jupyter_agent.tools import sessions as tools

    session = Session.create(workspace, title="long")
    for number in range(1, 41):
        session.append(Message.user(f"question {number} " + "x" * 900))
    session.close()
    first = tools.describe_session(session, 1, None, str)
    assert first.startswith("Session ") and "Notebook: notebook unknown" in first
    assert len(first) <= tools.READ_CHARS + 200
    *_, more = first.splitlines()
    assert more.startswith("[Messages ") and "start=" in more
    start = int(more.rsplit("start=", 1)[1].rstrip(")]"))
    second = tools.describe_session(session, start, None, str)
    assert second.splitlines()[0] == f"Messages {start} to 40:"
    assert f"#{start} user: question {start} " in second
    assert tools.describe_session(session, 41, None, str).endswith(
        "The session has 40 messages: nothing from message 41."
    )
