"""MCP servers in agent runs: a real server process (``mcp_server_for_tests.py``, written
with the mcp SDK) over stdio, and over streamable HTTP on loopback.

Invariants: an MCP tool asks unless a rule allows it; the Planner is never offered one
the user did not grant read-only (nor is its server started for it); results pass the
secret redaction and a size bound; a crash is said and survived; a Stop during a hanging
call returns at once and leaves a valid history; nothing is left running afterwards.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import assert_valid, call, own_processes, until

from jupyter_agent import Agent, ScriptedModel
from jupyter_agent.config.rules import McpServer, Rule, Rules
from jupyter_agent.config.settings import Settings
from jupyter_agent.events import Event
from jupyter_agent.mcp import McpServerConfig, render_status

pytestmark = pytest.mark.slow  # real MCP server processes (each loads the mcp package: ~1.5 CPU-s)

SERVER = str(Path(__file__).with_name("mcp_server_for_tests.py"))
SECRET = "tok-5ecret-value-1234"


def stdio(**options: Any) -> McpServerConfig:
    """The test server over stdio; its start bounded for a loaded machine, where Python and
    the mcp package load slowly (tests of the bound itself pass their own)."""
    return McpServerConfig(
        command=sys.executable, args=[SERVER], **{"startup_timeout": 90.0, **options}
    )


def allowing(server: str) -> Rules:
    """The default rules, and the user's rule allowing every tool of ``server``."""
    rules = Rules.defaults()
    rules.add(Rule.allow(McpServer(server=server), scope="user"))
    return rules


def results(agent: Agent) -> list[tuple[str, bool]]:
    return [(r.text, r.is_error) for m in agent.history for r in m.tool_results]


@pytest.fixture
async def make_agent(home: Path, workspace: Path) -> AsyncIterator[Any]:
    """Agents with the given MCP servers; their servers are shut down after the test."""
    made: list[Agent] = []

    def make(
        role: str, turns: list[Any], servers: dict[str, McpServerConfig], **options: Any
    ) -> tuple[Agent, list[Event]]:
        settings = Settings(mcp_servers=servers)
        agent = Agent(role, ScriptedModel(turns), workspace=workspace, settings=settings, **options)
        events: list[Event] = []
        agent.subscribe(events.append)
        made.append(agent)
        return agent, events

    yield make
    for agent in made:
        await agent.mcp.close()
    # Closing stops every stdio program the agents started (the HTTP one is the fixture's).
    left = [cmd for _, cmd, _ in own_processes() if SERVER in cmd and "--http" not in cmd]
    assert left == []


def offered(agent: Agent) -> list[str]:
    """The tool names the model was offered in its first request."""
    model = agent.model
    assert isinstance(model, ScriptedModel)
    return [t["name"] for t in model.requests[0].tools]


# --- over stdio ----------------------------------------------------------------------


async def test_an_mcp_tool_asks_by_default_and_runs_once_approved(make_agent):
    agent, events = make_agent(
        "actor",
        [call("mcp__srv__echo", text="hello"), call("task_complete", summary="done")],
        {"srv": stdio()},
    )
    handle = agent.start("say hello through the server")
    await until(lambda: handle.pending_approval is not None, timeout=30)
    request = next(e for e in events if e.kind == "permission_request")
    assert request.tool_name == "mcp__srv__echo"
    assert request.reason == "tools of MCP servers need your approval"
    assert request.summary.startswith("srv · echo(")
    handle.approve(True)
    await handle.wait()
    assert results(agent)[0] == ("echo: hello", False)
    echo = next(t for t in agent.model.requests[0].tools if t["name"] == "mcp__srv__echo")
    assert echo["input_schema"]["properties"]["text"]["type"] == "string"
    assert "MCP server srv" in echo["description"]
    assert_valid(agent.history)


async def test_a_rule_by_server_and_tool_allows_that_tool_and_no_other(make_agent):
    rules = Rules.defaults()
    rules.add(Rule.allow(McpServer(server="srv", tool="ec*"), scope="user"))
    agent, events = make_agent(
        "actor",
        [
            call("mcp__srv__echo", text="hi"),
            call("mcp__srv__add", a=2, b=3),
            call("task_complete", summary="done"),
        ],
        {"srv": stdio()},
        policy=rules,
    )
    handle = agent.start("use the server")
    await until(lambda: handle.pending_approval is not None, timeout=30)
    asked = [e.tool_name for e in events if e.kind == "permission_request"]
    assert asked == ["mcp__srv__add"]  # echo ran without asking
    handle.approve(True)
    await handle.wait()
    assert results(agent)[:2] == [("echo: hi", False), ('{\n  "sum": 5\n}', False)]


async def test_the_planner_is_not_offered_mcp_tools_and_a_call_anyway_is_refused(make_agent):
    agent, _ = make_agent(
        "planner",
        [call("mcp__srv__echo", text="sneaky"), call("task_complete", summary="done")],
        {"srv": stdio()},
    )
    await agent.run("look around")
    assert not any(name.startswith("mcp__") for name in offered(agent))
    text, is_error = results(agent)[0]
    assert is_error
    assert "Unknown tool 'mcp__srv__echo'" in text
    # Nothing the Planner could use: its server was never even started.
    assert agent.mcp.connections["srv"].state == "not started"
    # Once the Actor has started it, its tools are known, and still refused to the Planner.
    agent.policy.add(Rule.allow(McpServer(server="srv"), scope="user"))
    agent.model.add(call("mcp__srv__echo", text="actor"), call("task_complete", summary="ok"))
    await agent.run("as the actor", role="actor")
    agent.model.add(call("mcp__srv__echo", text="sneaky"), call("task_complete", summary="ok"))
    await agent.run("look again", role="planner")
    text, is_error = results(agent)[-2]
    assert is_error
    assert "the planner role may not call mcp__srv__echo" in text
    assert "mcp_tools" in text
    assert not any(t["name"].startswith("mcp__") for t in agent.model.requests[-1].tools)


async def test_the_planner_is_offered_what_the_user_granted_read_only(make_agent):
    agent, events = make_agent(
        "planner",
        [
            call("mcp__srv__echo", text="read"),
            call("mcp__srv__add", a=1, b=1),
            call("task_complete", summary="done"),
        ],
        {"srv": stdio(read_only_tools=["echo"])},
    )
    await agent.run("look around")
    names = offered(agent)
    assert "mcp__srv__echo" in names
    assert "mcp__srv__add" not in names
    got = results(agent)
    assert got[0] == ("echo: read", False)  # granted: runs without asking
    assert got[1][1]
    assert "may not call mcp__srv__add" in got[1][0]
    assert not any(e.kind == "permission_request" for e in events)


async def test_results_carry_images_errors_and_resources_and_hide_secrets(make_agent):
    rules = allowing("srv")
    agent, _ = make_agent(
        "actor",
        [
            call("mcp__srv__picture"),
            call("mcp__srv__fail"),
            call("mcp__srv__leak", name="SERVER_TOKEN"),
            call("mcp__srv__link"),
            call("mcp__srv__huge"),
            call("task_complete", summary="done"),
        ],
        {"srv": stdio(env={"SERVER_TOKEN": SECRET})},
        policy=rules,
    )
    await agent.run("use every tool")
    blocks = [r for m in agent.history for r in m.tool_results]
    picture, fail, leak, link, huge = blocks[:5]
    assert "a red square" in picture.text
    assert [b.type for b in picture.content].count("image") == 1
    assert fail.is_error
    assert fail.text == "no such issue"
    assert SECRET not in leak.text
    assert "‹secret:" in leak.text
    assert "report.csv" in link.text
    assert "the memo text" in link.text
    assert len(huge.text) < 31_000
    assert "the result was cut" in huge.text
    saved = (agent.workspace / ".jupyter_agent").rglob("history.jsonl")
    assert all(SECRET not in p.read_text() for p in saved)


async def test_a_secret_named_by_variable_reaches_the_server_and_nothing_else(
    make_agent, monkeypatch
):
    monkeypatch.setenv("MY_SERVER_TOKEN", SECRET)
    rules = allowing("srv")
    agent, events = make_agent(
        "actor",
        [
            call("mcp__srv__leak", name="SERVER_TOKEN"),
            call("mcp__unset__echo", text="hi"),
            call("task_complete", summary="done"),
        ],
        {
            "srv": stdio(env={"SERVER_TOKEN": "${MY_SERVER_TOKEN}"}),
            "unset": stdio(env={"SERVER_TOKEN": "${NOT_SET_ANYWHERE}"}),
        },
        policy=rules,
    )
    await agent.run("use them")
    leak = [r for m in agent.history for r in m.tool_results][0]
    # The server got the value (not the variable's name, not nothing), and it is hidden.
    assert leak.text.startswith("the value is ‹secret:"), leak.text
    assert SECRET not in str(agent.history)
    warnings = [e.message for e in events if e.kind == "warning"]
    assert any("${NOT_SET_ANYWHERE} (in env.SERVER_TOKEN) is not set" in w for w in warnings)


async def test_a_server_that_crashes_is_said_and_restarted_at_next_use(make_agent):
    rules = allowing("srv")
    agent, events = make_agent(
        "actor",
        [
            call("mcp__srv__chatter", line="an earlier line, long before"),
            call("mcp__srv__crash"),
            call("mcp__srv__echo", text="again"),
            call("task_complete", summary="done"),
        ],
        {"srv": stdio()},
        policy=rules,
    )
    await agent.run("crash it")
    said, crashed, again = results(agent)[:3]
    assert said == ("said", False)
    assert crashed[1]
    assert crashed[0] == (
        "MCP server srv stopped answering: the server exited or closed the connection during "
        "a call (stderr: about to crash on purpose). It is started again at its next use."
    )  # its cause: what it wrote during the call, not before
    warnings = [e.message for e in events if e.kind == "warning"]
    assert any("started again at its next use" in w for w in warnings)
    assert again == ("echo: again", False)
    assert agent.mcp.connections["srv"].starts == 2
    assert_valid(agent.history)


async def test_stop_during_a_hanging_call_returns_at_once_and_the_server_stays_usable(
    make_agent,
):
    rules = allowing("srv")
    agent, events = make_agent("actor", [call("mcp__srv__hang")], {"srv": stdio()}, policy=rules)
    handle = agent.start("wait for ever")
    await until(lambda: any(e.kind == "tool_start" for e in events), timeout=30)
    await asyncio.sleep(0.3)  # the request is out, the server is sleeping on it
    stopped = time.monotonic()
    handle.stop()
    await asyncio.wait_for(handle.wait(), 30)
    assert time.monotonic() - stopped < 20  # not the hour the call sleeps
    assert handle.stop_reason == "manual_stop"
    assert results(agent)[0][1]
    assert_valid(agent.history)
    # The server was told, and stopped the call's work.
    connection = agent.mcp.connections["srv"]
    await until(lambda: "hang was cancelled" in connection._stderr_tail(), timeout=5)
    agent.model.add(call("mcp__srv__echo", text="still here"), call("task_complete", summary="ok"))
    await agent.run("go on")
    assert ("echo: still here", False) in results(agent)
    assert agent.mcp.connections["srv"].starts == 1


async def test_a_server_that_never_answers_initialize_is_given_up_within_its_timeout(make_agent):
    config = McpServerConfig(command=sys.executable, args=[SERVER, "--silent"], startup_timeout=1.0)
    agent, events = make_agent("actor", [call("task_complete", summary="done")], {"quiet": config})
    started = time.monotonic()
    await agent.run("anything")
    assert time.monotonic() - started < 15  # its 1 s, not for ever: the server never answers
    assert agent.handle is not None and agent.handle.stop_reason == "completed"
    warnings = [e.message for e in events if e.kind == "warning"]
    assert any("MCP server quiet could not start: no answer within 1 s" in w for w in warnings)
    assert agent.mcp.connections["quiet"].state == "failed"


async def test_a_program_that_is_not_there_is_said_plainly(make_agent):
    config = McpServerConfig(command="/nonexistent/mcp-server-xyz")
    agent, events = make_agent("actor", [call("task_complete", summary="done")], {"gone": config})
    await agent.run("anything")
    warnings = [e.message for e in events if e.kind == "warning"]
    assert any("not found" in w and "gone" in w for w in warnings), warnings


async def test_without_the_mcp_package_a_configured_server_gives_one_clear_message(
    make_agent, monkeypatch
):
    monkeypatch.setitem(sys.modules, "mcp", None)  # as if it were not installed
    agent, events = make_agent(
        "actor",
        [call("task_complete", summary="a"), call("task_complete", summary="b")],
        {"srv": stdio()},
    )
    await agent.run("first")
    await agent.run("second")
    warnings = [e.message for e in events if e.kind == "warning"]
    assert len([w for w in warnings if "mcp package" in w]) == 1
    assert "pip install" in warnings[0]


# --- over streamable HTTP ----------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(flag: str, *more: str) -> tuple[subprocess.Popen[bytes], int]:
    """The test server over HTTP (``--http``) or SSE (``--sse``) on a free port, listening."""
    port = _free_port()
    # Its own log (uvicorn's, as a client goes) is not what these tests look at.
    proc = subprocess.Popen(
        [sys.executable, SERVER, flag, str(port), *more], stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, port
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                raise RuntimeError("the MCP server did not start") from None
            time.sleep(0.05)


@pytest.fixture
def sse_server() -> Iterator[int]:
    """The test server over the older HTTP+SSE transport only; its port."""
    proc, port = _serve("--sse")
    try:
        yield port
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture
def http_server() -> Iterator[str]:
    port = _free_port()
    proc = subprocess.Popen([sys.executable, SERVER, "--http", str(port)])
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("the HTTP MCP server did not start") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)


async def test_a_streamable_http_server_is_listed_called_and_asked_about(make_agent, http_server):
    config = McpServerConfig(url=http_server, headers={"Authorization": f"Bearer {SECRET}"})
    agent, events = make_agent(
        "actor",
        [
            call("mcp__web__echo", text="over http"),
            call("mcp__web__picture"),
            call("task_complete", summary="done"),
        ],
        {"web": config},
    )
    handle = agent.start("use the web server")
    for _ in range(2):
        await until(lambda: handle.pending_approval is not None or handle.done, timeout=30)
        handle.approve(True)
        await until(lambda: handle.pending_approval is None)
    await handle.wait()
    got = [r for m in agent.history for r in m.tool_results]
    assert got[0].text == "echo: over http"
    assert [b.type for b in got[1].content].count("image") == 1
    asked = [e.tool_name for e in events if e.kind == "permission_request"]
    assert asked == ["mcp__web__echo", "mcp__web__picture"]
    # The header's token is a secret like the environment's.
    assert agent.secrets.redact(f"token {SECRET}") != f"token {SECRET}"


async def test_stop_while_a_server_starts_returns_at_once_and_the_start_stays_bounded(
    make_agent,
):
    config = McpServerConfig(command=sys.executable, args=[SERVER, "--silent"], startup_timeout=5.0)
    agent, _ = make_agent("actor", [call("task_complete", summary="done")], {"quiet": config})
    handle = agent.start("anything")
    connection = agent.mcp.connections["quiet"]
    await until(lambda: connection.state == "starting", timeout=10)
    handle.stop()
    await asyncio.wait_for(handle.wait(), 30)
    assert connection.state == "starting"  # the run ended without waiting for the start
    assert_valid(agent.history)
    # Nobody waits for it now; its own timer still ends the start.
    await until(lambda: connection.state == "failed", timeout=30)
    assert "no answer within 5 s" in connection.error


async def test_a_call_that_outlasts_its_timeout_is_cancelled_and_said(make_agent):
    rules = allowing("srv")
    agent, _ = make_agent(
        "actor",
        [
            call("mcp__srv__hang"),
            call("mcp__srv__echo", text="next"),
            call("task_complete", summary="done"),
        ],
        {"srv": stdio(call_timeout=1.0)},
        policy=rules,
    )
    await asyncio.wait_for(agent.run("wait"), 30)
    hung, after = results(agent)[:2]
    assert hung == (
        "MCP server srv did not answer hang within 1 s; the call was cancelled.",
        True,
    )
    assert after == ("echo: next", False)


async def test_what_a_server_says_of_its_tools_is_redacted_too(make_agent, monkeypatch):
    monkeypatch.setenv("SERVICE_API_KEY", "describe-5ecret-998877")
    agent, _ = make_agent("actor", [call("task_complete", summary="done")], {"srv": stdio()})
    servers = agent.mcp
    from jupyter_agent.mcp._connection import ServerTool

    servers.connections["srv"].tools = [
        ServerTool(
            "peek",
            "Uses key describe-5ecret-998877 for you",
            {"type": "object", "properties": {"k": {"default": "describe-5ecret-998877"}}},
            {},
        )
    ]
    servers.update(agent.tools)
    spec = agent.tools["mcp__srv__peek"].spec()
    assert "describe-5ecret-998877" not in str(spec)


async def test_a_server_that_dies_while_idle_is_started_again_and_said(make_agent):
    rules = allowing("srv")
    agent, events = make_agent(
        "actor",
        [call("mcp__srv__echo", text="one"), call("task_complete", summary="done")],
        {"srv": stdio()},
        policy=rules,
    )
    await agent.run("first")
    connection = agent.mcp.connections["srv"]
    [pid] = [p for p, cmd, _ in own_processes() if SERVER in cmd and "--http" not in cmd]
    os.kill(pid, signal.SIGKILL)
    await until(lambda: connection.state == "failed", timeout=10)
    assert "exited or closed the connection" in connection.error
    agent.model.add(call("mcp__srv__echo", text="two"), call("task_complete", summary="done"))
    await agent.run("second")
    assert ("echo: two", False) in results(agent)
    warnings = [e.message for e in events if e.kind == "warning"]
    assert any("MCP server srv had stopped" in w and "started again" in w for w in warnings)


async def test_a_subagent_shares_its_parents_servers(make_agent):
    turns = {
        "parent": [
            call("mcp__srv__echo", text="parent"),
            call("delegate", task="child-task: echo once", role="planner"),
            call("task_complete", summary="done"),
        ],
        "child": [call("mcp__srv__echo", text="child"), call("task_complete", summary="ok")],
    }

    def answer(request: Any) -> dict[str, Any]:
        first = request.messages[0]["content"]
        text = first if isinstance(first, str) else "".join(b.get("text", "") for b in first)
        return turns["child" if "child-task" in text else "parent"].pop(0)

    rules = allowing("srv")
    agent, _ = make_agent(
        "actor", [answer] * 6, {"srv": stdio(read_only_tools=["echo"])}, policy=rules
    )
    handle = await agent.run("go")
    assert results(agent)[0] == ("echo: parent", False)
    [child] = [c.agent for c in handle.children]
    assert ("echo: child", False) in results(child)
    assert child.mcp is agent.mcp
    assert agent.mcp.connections["srv"].starts == 1


async def test_an_http_server_that_goes_away_is_said_and_reconnected(make_agent):
    port = _free_port()

    def serve() -> subprocess.Popen[bytes]:
        proc = subprocess.Popen([sys.executable, SERVER, "--http", str(port)])
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                return proc
            except OSError:
                assert time.monotonic() < deadline, "the HTTP MCP server did not start"
                time.sleep(0.05)

    rules = allowing("web")
    proc = serve()
    try:
        agent, events = make_agent(
            "actor",
            [call("mcp__web__echo", text="one"), call("task_complete", summary="done")],
            {"web": McpServerConfig(url=f"http://127.0.0.1:{port}/mcp")},
            policy=rules,
        )
        await agent.run("first")
        proc.terminate()
        proc.wait(10)
        agent.model.add(call("mcp__web__echo", text="two"), call("task_complete", summary="x"))
        await asyncio.wait_for(agent.run("second"), 30)
        gone = results(agent)[-2]
        assert gone[1]
        assert "MCP server web stopped answering" in gone[0]
        assert "ConnectError: All connection attempts failed" in gone[0]  # its cause
        assert any(
            "started again at its next use" in e.message for e in events if e.kind == "warning"
        )
        proc = serve()
        agent.model.add(call("mcp__web__echo", text="three"), call("task_complete", summary="x"))
        await agent.run("third")
        assert ("echo: three", False) in results(agent)
    finally:
        proc.terminate()
        proc.wait(10)


async def test_stop_during_a_call_to_a_frozen_server_returns_at_once(make_agent):
    rules = allowing("srv")
    agent, events = make_agent("actor", [call("mcp__srv__freeze")], {"srv": stdio()}, policy=rules)
    handle = agent.start("freeze it")
    await until(lambda: any(e.kind == "tool_start" for e in events), timeout=30)
    await asyncio.sleep(0.3)
    stopped = time.monotonic()
    handle.stop()
    await asyncio.wait_for(handle.wait(), 30)
    assert time.monotonic() - stopped < 20  # not the hour the server is frozen for
    assert_valid(agent.history)
    closing = time.monotonic()
    await agent.mcp.close()  # a server that reads nothing is killed, within bounds
    assert time.monotonic() - closing < 40  # its 10 s close timeout, then a kill


async def test_a_servers_progress_shows_on_the_calls_row(make_agent):
    rules = allowing("srv")
    agent, events = make_agent(
        "actor",
        [call("mcp__srv__count"), call("task_complete", summary="done")],
        {"srv": stdio()},
        policy=rules,
    )
    await agent.run("count")
    assert results(agent)[0] == ("counted", False)
    progress = [e.output for e in events if e.kind == "tool_progress"]
    assert progress == ["1/3 step 1", "2/3 step 2", "3/3 step 3"]


# --- over SSE ---------------------------------------------------------------------------


async def test_an_sse_server_is_reached_as_each_client_names_it(make_agent, sse_server):
    url = f"http://127.0.0.1:{sse_server}/sse"
    entries = {
        "claude": McpServerConfig.model_validate({"type": "sse", "url": url}),
        "cline": McpServerConfig.model_validate({"transportType": "sse", "url": url}),
        "cursor": McpServerConfig.model_validate({"url": url}),  # a URL ending in /sse
        "vscode": McpServerConfig.model_validate({"type": "http", "url": url}),
    }
    turns = [call(f"mcp__{n}__echo", text=n) for n in entries]
    agent, _ = make_agent(
        "actor",
        [*turns, call("mcp__claude__picture"), call("task_complete", summary="done")],
        entries,
        policy=allowing("*"),
    )
    await agent.run("use them all")
    got = results(agent)
    assert got[:4] == [(f"echo: {n}", False) for n in entries]
    picture = [r for m in agent.history for r in m.tool_results][4]
    assert [b.type for b in picture.content].count("image") == 1
    used = {n: c.transport_used for n, c in agent.mcp.connections.items()}
    assert used == dict.fromkeys(entries, "sse")
    # VS Code's "http" asked for streamable HTTP first: the server refused, and it says so.
    listing = render_status(agent.mcp.status())
    assert "vscode: running, test-server" in listing
    assert "reached over SSE (streamable HTTP: " in listing


async def test_a_url_that_speaks_neither_says_what_each_transport_answered(make_agent, sse_server):
    config = McpServerConfig(url=f"http://127.0.0.1:{sse_server}/nothing-here")
    agent, _ = make_agent("actor", [call("task_complete", summary="done")], {"web": config})
    await agent.run("anything")
    error = agent.mcp.connections["web"].error
    assert error.startswith("streamable HTTP: "), error
    assert "; SSE: HTTP 404" in error


# --- what the SDK logs -------------------------------------------------------------------


async def test_the_sdks_log_lines_stay_out_of_the_notebook(make_agent, caplog):
    """A kernel shows what reaches the root logger's handlers (or Python's last resort,
    which writes WARNING and above to the cell's stderr): nothing the SDK logs while it
    serves our servers may reach them, at any level, nor at shutdown."""
    import logging

    caplog.set_level(logging.DEBUG)
    proc, port = _serve("--http")
    try:
        agent, _ = make_agent(
            "actor",
            [call("mcp__web__echo", text="one"), call("task_complete", summary="done")],
            {"web": McpServerConfig(url=f"http://127.0.0.1:{port}/mcp")},
            policy=allowing("web"),
        )
        await agent.run("first")
        proc.terminate()
        proc.wait(10)
        agent.model.add(call("mcp__web__echo", text="two"), call("task_complete", summary="x"))
        await asyncio.wait_for(agent.run("second"), 30)
        await agent.mcp.close()
    finally:
        proc.kill()
        proc.wait(10)
    sdk = [
        f"{r.name} {r.levelname} {r.getMessage()}"
        for r in caplog.records
        if r.name.split(".")[0] in ("mcp", "httpx", "httpx2", "httpcore", "httpcore2")
    ]
    assert sdk == []
    # They went to our own debug log instead.
    ours = [r.getMessage() for r in caplog.records if r.name == "jupyter_agent.mcp._connection"]
    assert any("MCP server web, mcp.client" in line for line in ours), ours
    # The user's own MCP code in the kernel still logs as it always did.
    logging.getLogger("mcp.client.session").warning("the user's own")
    assert "the user's own" in caplog.text


# --- many tools, and images --------------------------------------------------------------


async def test_a_server_with_many_tools_says_their_weight_and_offers_what_you_choose(make_agent):
    many = McpServerConfig(
        command=sys.executable, args=[SERVER, "--many", "80"], startup_timeout=90.0
    )
    chosen = McpServerConfig(
        command=sys.executable,
        args=[SERVER, "--many", "80"],
        tools=["echo", "tool_1*"],
        disabled_tools=["tool_12"],
        startup_timeout=90.0,
    )
    agent, events = make_agent(
        "actor", [call("task_complete", summary="done")], {"big": many, "small": chosen}
    )
    await agent.run("anything")
    warnings = [e.message for e in events if e.kind == "warning"]
    [said] = [w for w in warnings if "MCP server big" in w]
    assert said.startswith("MCP server big offers 92 tools: their names, descriptions and ")
    assert "KB to every request to the model" in said
    assert "tools = [" in said
    assert not any("MCP server small" in w for w in warnings)
    names = offered(agent)
    assert len([n for n in names if n.startswith("mcp__big__")]) == 92
    small = sorted(n for n in names if n.startswith("mcp__small__"))
    assert small == sorted(
        ["mcp__small__echo", "mcp__small__tool_1"]
        + [f"mcp__small__tool_1{i}" for i in range(10) if i != 2]
    )
    listing = render_status(agent.mcp.status())
    assert "92 tools, 92 offered, about " in listing
    assert "KB in every request: offer fewer with tools = [...]" in listing
    assert "- tool_12 (not offered: disabled_tools)" in listing
    assert "- add (not offered: tools)" in listing
    size = next(s for s in agent.mcp.status() if s.name == "big").offered_bytes
    assert size > 20_000


async def test_an_image_with_a_careless_checksum_from_a_server_is_attached(make_agent):
    agent, _ = make_agent(
        "actor",
        [call("mcp__srv__picture", bad_crc=True), call("task_complete", summary="done")],
        {"srv": stdio()},
        policy=allowing("srv"),
    )
    await agent.run("a picture")
    picture = next(r for m in agent.history for r in m.tool_results)
    assert "[image 1 attached]" in picture.text, picture.text
    assert [b.type for b in picture.content].count("image") == 1
