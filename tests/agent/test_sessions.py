from __future__ import annotations

import asyncio
import json
import logging
import os

import pytest
from helpers import PLAN, assert_valid, call

from jupyter_agent import Agent, ScriptedModel
from jupyter_agent.agent import Session
from jupyter_agent.errors import SessionError
from jupyter_agent.messages import Message
from jupyter_agent.sessions.index import SESSIONS_DIR


async def test_a_session_is_saved_beside_the_workspace_and_resumes(workspace):
    agent = Agent("planner", ScriptedModel([call("submit_plan", **PLAN)]), workspace=workspace)
    await agent.run("plan the cleanup")
    folder = workspace / SESSIONS_DIR / agent.session.id
    assert sorted(p.name for p in folder.iterdir()) == ["history.jsonl", "metadata.json"]
    meta = json.loads((folder / "metadata.json").read_text())
    assert meta["title"] == "plan the cleanup"
    assert meta["plan"]["goal"] == PLAN["goal"]
    assert meta["state"] == "completed"
    assert meta["usage"]["calls"] == 1

    # a new kernel: nothing in memory, only the files
    resumed = Agent.resume(
        agent.session.id, workspace=workspace, model=ScriptedModel([{"text": "Back."}])
    )
    assert resumed.role == "planner"
    assert resumed.history == agent.history
    assert resumed.session.metadata.plan == agent.session.metadata.plan
    handle = await resumed.run("continue", role="actor")
    assert handle.state.value == "completed"
    assert len(Session.load(workspace, agent.session.id).history) == len(agent.history) + 2
    assert_valid(resumed.history)


async def test_sessions_are_listed_newest_first(workspace):
    first = Agent("planner", ScriptedModel([{"text": "a"}]), workspace=workspace)
    await first.run("one")
    second = Agent("planner", ScriptedModel([{"text": "b"}]), workspace=workspace)
    await second.run("two")
    listed = Agent.sessions(workspace)
    assert [m.session_id for m in listed] == [second.session.id, first.session.id]
    assert [m.title for m in listed] == ["two", "one"]


def test_unknown_session_says_which_exist(workspace):
    Session.create(workspace, session_id="abc")
    with pytest.raises(SessionError, match=r"no session 'nope' .*known: abc"):
        Session.load(workspace, "nope")


def test_a_torn_last_line_is_tolerated_and_repaired_on_append(workspace):
    session = Session.create(workspace, session_id="s1")
    session.append(Message.user("hello"))
    session.append(Message.assistant("hi"))
    session.close()
    log = workspace / SESSIONS_DIR / "s1" / "history.jsonl"
    with open(log, "ab") as f:
        f.write(b'{"role": "user", "content": [{"type": "te')  # a crash mid-write
    loaded = Session.load(workspace, "s1")
    assert [m.text for m in loaded.history] == ["hello", "hi"]
    loaded.append(Message.user("again"))
    loaded.close()
    assert [m.text for m in Session.load(workspace, "s1").history] == ["hello", "hi", "again"]


def test_a_damaged_line_in_the_middle_is_an_error(workspace):
    session = Session.create(workspace, session_id="s2")
    session.append(Message.user("hello"))
    session.close()
    log = workspace / SESSIONS_DIR / "s2" / "history.jsonl"
    log.write_bytes(b"garbage\n" + log.read_bytes())
    with pytest.raises(SessionError, match=r"history\.jsonl:1 is not a valid message"):
        Session.load(workspace, "s2")


def test_metadata_is_rewritten_atomically(workspace, monkeypatch):
    session = Session.create(workspace, session_id="s3", title="before")
    path = workspace / SESSIONS_DIR / "s3" / "metadata.json"
    session.metadata.title = "after"

    def crash(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="disk full"):
        session.save()
    assert json.loads(path.read_text())["title"] == "before"  # the old file is intact
    assert [p.name for p in path.parent.iterdir()] == ["metadata.json"]  # no temp file left


def _records(workspace, sid):
    log = workspace / SESSIONS_DIR / sid / "history.jsonl"
    return [json.loads(line)["content"][0]["text"] for line in log.read_text().splitlines()]


def _lines(workspace, sid):
    log = workspace / SESSIONS_DIR / sid / "history.jsonl"
    return len(log.read_bytes().splitlines()) if log.exists() else 0


async def test_in_a_running_loop_records_reach_the_disk_at_the_next_turn(workspace):
    session = Session.create(workspace, session_id="s4")
    assert [m.session_id for m in Session.list(workspace)] == ["s4"]  # listed at once
    session.append(Message.user("one"))
    session.append(Message.assistant("two"))
    await asyncio.sleep(0)  # the loop turns, as when a run goes on to its next request
    assert _records(workspace, "s4") == ["one", "two"]
    session.metadata.title = "renamed"
    session.save()
    await asyncio.sleep(0)
    assert Session.load(workspace, "s4").metadata.title == "renamed"


async def test_held_writes_wait_for_their_release(workspace):
    session = Session.create(workspace, session_id="s7")
    session.append(Message.user("one"))  # due at the next turn...
    release = session.hold_writes()  # ...but a request is about to go out
    session.append(Message.assistant("two"))
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert _lines(workspace, "s7") == 0  # held, however often the loop turns
    release()
    assert _records(workspace, "s7") == ["one", "two"]  # written at once, in order
    session.append(Message.user("three"))
    await asyncio.sleep(0)
    assert _records(workspace, "s7") == ["one", "two", "three"]  # back to the next turn

    stale = session.hold_writes()
    current = session.hold_writes()  # a later hold replaces the earlier one
    session.append(Message.assistant("four"))
    stale()
    await asyncio.sleep(0)
    assert _lines(workspace, "s7") == 3
    current()
    current()  # a second release does nothing
    assert _records(workspace, "s7") == ["one", "two", "three", "four"]

    session.hold_writes(limit=0.5)
    session.append(Message.user("waits"))
    await asyncio.sleep(0)
    assert _lines(workspace, "s7") == 4
    for _ in range(200):  # a hold is never released: its limit lets the writes go
        if _lines(workspace, "s7") == 5:
            break
        await asyncio.sleep(0.05)
    assert _records(workspace, "s7")[-1] == "waits"

    session.hold_writes()
    session.append(Message.user("five"))
    session.flush()  # writes now and ends the hold
    session.append(Message.assistant("six"))
    await asyncio.sleep(0)
    assert _records(workspace, "s7")[-2:] == ["five", "six"]


async def test_a_step_is_written_once_its_next_request_is_out(workspace):
    """A run holds what it records while it sends the next request, and writes it once
    the request is out: the disk work overlaps with the model's answer."""
    on_disk: list[tuple[int, int]] = []

    class Probe(ScriptedModel):
        async def stream(self, request):
            before = _lines(workspace, agent.session.id)
            request.on_sent()
            on_disk.append((before, _lines(workspace, agent.session.id)))
            async for part in super().stream(request):
                yield part

    agent = Agent(
        "planner",
        Probe([call("send_update", message="looking"), {"text": "done"}]),
        workspace=workspace,
    )
    await agent.run("look around")
    # step 1: the task is written as its request goes out; step 2: the reply is written
    # while its tool call is decided (off the loop), and the tool's result joins it only
    # once the next request is out, not ahead of it
    assert on_disk == [(0, 1), (2, 3)]
    assert _lines(workspace, agent.session.id) == 4


async def test_a_refused_write_is_kept_and_retried_in_order(workspace, monkeypatch, caplog):
    from jupyter_agent.sessions import store as _session

    session = Session.create(workspace, session_id="s5")
    real_open = _session._open_log
    failures = iter([OSError("disk full")])

    def open_log(store, sid):
        for exc in failures:
            raise exc
        return real_open(store, sid)

    monkeypatch.setattr(_session, "_open_log", open_log)
    session.append(Message.user("one"))
    with caplog.at_level(logging.WARNING):
        await asyncio.sleep(0)
    assert "could not write session s5: disk full" in caplog.text
    session.append(Message.assistant("two"))
    await asyncio.sleep(0)
    assert _records(workspace, "s5") == ["one", "two"]


def test_a_write_refused_half_way_leaves_no_torn_record(workspace, monkeypatch):
    from jupyter_agent.sessions import store as _session

    real_open = _session._open_log
    refusals = iter([True])

    class HalfFull:  # the disk fills up in the middle of a write
        def __init__(self, log):
            self.log = log

        def write(self, data):
            if next(refusals, False):
                self.log.write(bytes(data[: len(data) // 2]))
                raise OSError("No space left on device")
            return self.log.write(data)

        def __getattr__(self, name):
            return getattr(self.log, name)

    monkeypatch.setattr(_session, "_open_log", lambda *a: HalfFull(real_open(*a)))
    session = Session.create(workspace, session_id="s6")
    with pytest.raises(OSError, match="No space left"):
        session.append(Message.user("one"))  # no loop running: written at once
    session.append(Message.assistant("two"))  # the retry writes both, whole
    session.close()
    assert [m.text for m in Session.load(workspace, "s6").history] == ["one", "two"]


async def test_a_run_ends_with_its_session_on_disk_even_when_the_disk_refuses(
    workspace, monkeypatch, caplog
):
    agent = Agent("planner", ScriptedModel([{"text": "done"}]), workspace=workspace)
    agent.session.flush()
    folder = agent.session.path
    handle = await agent.run("first")
    # on disk when wait() returns, without another turn of the loop
    assert Session.load(workspace, agent.session.id).metadata.state == "completed"
    assert len(Session.load(workspace, agent.session.id).history) == len(agent.history)

    def refuse(*args, **kwargs):
        raise OSError("read-only file system")

    monkeypatch.setattr("jupyter_agent.workspace.paths.Root.write", refuse)
    agent.model = ScriptedModel([{"text": "again"}])
    with caplog.at_level(logging.WARNING):
        handle = await asyncio.wait_for(agent.run("second"), 5)
    assert handle.state.value == "completed"  # the run ends; the failure is reported
    assert "read-only file system" in caplog.text
    assert folder is not None and (folder / "metadata.json").exists()


async def test_a_run_ends_even_when_writing_its_session_fails_unexpectedly(
    workspace, monkeypatch, caplog
):
    def broken(*args, **kwargs):
        raise RuntimeError("the writer broke")

    agent = Agent("planner", ScriptedModel([{"text": "done"}]), workspace=workspace)
    monkeypatch.setattr("jupyter_agent.workspace.paths.Root.write", broken)
    with caplog.at_level(logging.ERROR):
        handle = await asyncio.wait_for(agent.run("go"), 5)  # it used to wait forever
    assert handle.state.value == "completed"
    assert "the writer broke" in caplog.text


async def test_in_memory_sessions_write_nothing(workspace):
    agent = Agent("planner", ScriptedModel([{"text": "a"}]), workspace=workspace, persist=False)
    await agent.run("x")
    assert not (workspace / ".jupyter_agent").exists()
    assert agent.session.path is None


async def test_the_api_key_is_never_written(workspace, monkeypatch, messages_server):
    from jupyter_agent.testing import Reply, text

    key = "sk-ant-test-SECRET-0123456789abcdef"
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", messages_server.url)
    messages_server.push(Reply([text("hello")]))
    agent = Agent("planner", "claude-sonnet-4-6", workspace=workspace)
    handle = await agent.run("say hi")
    assert handle.state.value == "completed"
    headers = messages_server.requests[0].headers
    assert key in (
        headers.get("x-api-key"),
        headers.get("authorization", "").removeprefix("Bearer "),
    )  # used...
    for path in workspace.rglob("*"):
        if path.is_file():
            assert key.encode() not in path.read_bytes(), path  # ...and written nowhere
