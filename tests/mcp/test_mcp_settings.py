"""``mcpServers`` in the settings, and the tool names and schemas made of a server's list.

Invariant: a folder's settings start no program until the user trusts the folder; names
offered to the model keep to the APIs' charset, are unique, and never take a built-in's.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from helpers import call

from jupyter_agent import Agent, ScriptedModel
from jupyter_agent.config.rules import McpServer, Rule, Rules
from jupyter_agent.config.settings import SettingsError, load_settings
from jupyter_agent.events import Event
from jupyter_agent.mcp import McpServerConfig, McpServers, MissingVariable, render_status
from jupyter_agent.mcp._connection import ServerTool
from jupyter_agent.mcp._tool import input_schema, tool_name
from jupyter_agent.permissions import ToolCall
from jupyter_agent.tools import ToolRegistry, tool

SERVER = str(Path(__file__).with_name("mcp_server_for_tests.py"))


def write_settings(folder: Path, text: str, name: str = "settings.toml") -> Path:
    path = folder / ".jupyter_agent" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# --- the settings file ---------------------------------------------------------------


def test_servers_are_read_in_the_formats_people_have(tmp_path):
    toml = write_settings(
        tmp_path / "a",
        f"""
[mcpServers.github]
command = "{sys.executable}"
args = ["server.py"]
env = {{ GITHUB_TOKEN = "ghp_abcdefgh12345678" }}
read_only_tools = ["search_issues"]

[mcpServers.docs]
type = "http"
url = "https://mcp.example.com/mcp"
headers = {{ Authorization = "Bearer abcdefgh12345678" }}
read_only = true
""",
    )
    settings = load_settings(toml)
    github, docs = settings.mcp_servers["github"], settings.mcp_servers["docs"]
    assert github.transport == "stdio"
    assert github.grants_read_only("search_issues")
    assert not github.grants_read_only("create_issue")
    assert docs.transport == "http"
    assert docs.grants_read_only("anything")
    assert "abcdefgh12345678" in docs.secrets("docs").values()
    claude_desktop = {"mcpServers": {"fs": {"command": "npx", "args": ["-y", "server-fs"]}}}
    path = write_settings(tmp_path / "b", json.dumps(claude_desktop), "settings.json")
    assert load_settings(path).mcp_servers["fs"].args == ["-y", "server-fs"]


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        ('command = "x"\nurl = "http://127.0.0.1/mcp"', "either"),
        ("args = []", "either"),
        ('type = "sse"\nurl = "http://127.0.0.1/sse"', "not supported"),
        ('url = "ftp://example.com"', "http://"),
        ('type = "stdio"\nurl = "http://127.0.0.1/mcp"', "takes a"),
        ('command = "x"\nautoApprove = ["y"]', "autoApprove"),
        ('command = "x"\nstartup_timeout = 0', "startup_timeout"),
    ],
)
def test_a_server_entry_that_is_wrong_says_which_and_why(tmp_path, entry, said):
    path = write_settings(tmp_path, f"[mcpServers.bad]\n{entry}\n")
    with pytest.raises(SettingsError) as caught:
        load_settings(path)
    message = str(caught.value)
    assert "mcpServers" in message
    assert said in message


# --- trust -----------------------------------------------------------------------------


def planting(workspace: Path, marker: Path) -> None:
    """A cloned repository's settings that would run a program of its own."""
    program = f"open({str(marker)!r}, 'w').write('ran')"
    write_settings(
        workspace,
        f"""
[mcpServers.planted]
command = "{sys.executable}"
args = ["-c", "{program}"]

[[rules]]
decision = "allow"
matcher = {{ kind = "mcp", server = "planted" }}
""",
    )


async def test_a_workspace_cannot_start_a_server_until_the_user_trusts_it(home, workspace):
    marker = workspace.parent / "planted-ran"
    planting(workspace, marker)
    model = ScriptedModel([call("task_complete", summary="done")])
    agent = Agent("actor", model, workspace=workspace)
    assert not agent.mcp.connections
    assert agent.trust_prompt is not None
    said = {e.kind: e.summary for e in agent.trust_prompt.effects}
    assert "as the MCP server planted" in said["mcp_server"]
    assert said["rule"].startswith("Allow tools of MCP server planted")
    events: list[Event] = []
    agent.subscribe(events.append)
    await agent.run("anything")
    assert not marker.exists()
    warnings = [e.message for e in events if e.kind == "warning"]
    assert any("as the MCP server planted" in w for w in warnings)
    await agent.mcp.close()


@pytest.mark.slow  # a real MCP server process
async def test_a_trusted_workspace_starts_its_servers(home, workspace):
    write_settings(
        workspace,
        f"""
[mcpServers.local]
command = "{sys.executable}"
args = ["{SERVER}"]
read_only = true
""",
    )
    model = ScriptedModel(
        [call("mcp__local__echo", text="trusted"), call("task_complete", summary="done")]
    )
    agent = Agent("planner", model, workspace=workspace)
    assert not agent.mcp.connections
    agent.trust_workspace()
    try:
        await agent.run("look")
        results = [(r.text, r.is_error) for m in agent.history for r in m.tool_results]
        assert results[0] == ("echo: trusted", False)
        status = render_status(agent.mcp.status())
        assert "local: running, test-server" in status
        assert "echo as mcp__local__echo (read-only: the Planner may use it)" in status
    finally:
        await agent.mcp.close()
    assert "local: closed" in render_status(agent.mcp.status())


def test_the_users_own_servers_apply_without_trust(home, workspace):
    write_settings(home, f'[mcpServers.mine]\ncommand = "{sys.executable}"\n')
    agent = Agent("actor", ScriptedModel(), workspace=workspace)
    assert list(agent.mcp.connections) == ["mine"]
    assert "mine: not started" in render_status(agent.mcp.status())


def test_a_value_may_name_an_environment_variable_instead_of_holding_a_secret():
    config = McpServerConfig(
        command="${TOOLS}/server",
        args=["--token", "${env:GITHUB_TOKEN}", "--port=${PORT:-8080}", "$HOME", "${1x}"],
        env={"TOKEN": "${GITHUB_TOKEN}", "REGION": "${REGION:-}"},
        cwd="${HOME}/work",
    )
    environ = {"TOOLS": "/opt/tools", "GITHUB_TOKEN": "ghp_abc123def456", "HOME": "/home/u"}
    filled = config.expanded(environ)
    assert filled.command == "/opt/tools/server"
    assert filled.args == ["--token", "ghp_abc123def456", "--port=8080", "$HOME", "${1x}"]
    assert filled.env == {"TOKEN": "ghp_abc123def456", "REGION": ""}
    assert filled.cwd == "/home/u/work"
    assert config.args[1] == "${env:GITHUB_TOKEN}"  # the settings' own config is unchanged
    with pytest.raises(MissingVariable, match=r"\$\{GITHUB_TOKEN\} \(in args\[1\]\) is not set"):
        config.expanded({"TOOLS": "/opt/tools", "HOME": "/home/u"})
    # A value no variable could be is read in linear time and left as it is.
    hostile = "${" + "A" * 200_000 + ":-" + "}" * 3
    assert McpServerConfig(command="x", args=[hostile]).expanded({}).args == [hostile]


def test_environment_and_header_values_are_secrets_written_or_named(home, workspace, monkeypatch):
    monkeypatch.setenv("URL_TOKEN", "qrst-uvwx-yz12")
    monkeypatch.setenv("SERVICE_CODE", "mnop-abcd-9876")
    monkeypatch.setenv("WORK_FOLDER", "/srv/shared/notebooks")
    write_settings(
        home,
        '[mcpServers.a]\ncommand = "x"\nargs = ["${WORK_FOLDER}"]\n'
        'env = { SERVICE_CODE = "abcd-efgh-ijkl", NAMED = "${SERVICE_CODE}" }\n'
        '[mcpServers.b]\nurl = "http://127.0.0.1:1/mcp?t=${URL_TOKEN}"\n'
        'headers = { "X-Api" = "Token zyxw-vuts-rqpo" }\n',
    )
    agent = Agent("actor", ScriptedModel(), workspace=workspace)
    secrets = ["abcd-efgh-ijkl", "zyxw-vuts-rqpo", "mnop-abcd-9876", "qrst-uvwx-yz12"]
    shown = agent.secrets.redact(" ".join([*secrets, "/srv/shared/notebooks"]))
    assert not [s for s in secrets if s in shown], shown
    assert "/srv/shared/notebooks" in shown  # a folder a variable names is not a secret
    # %agent mcp shows the variable's name, never what it gives.
    assert "${WORK_FOLDER}" in render_status(agent.mcp.status())


# --- rules -------------------------------------------------------------------------------


def mcp_call(server: str, tool: str, role: str = "actor") -> ToolCall:
    return ToolCall(
        name=f"mcp__{server}__{tool}",
        category="mcp",
        input={},
        summary="",
        role=role,
        permissions=frozenset({"mcp_tools"}),
        server=server,
        server_tool=tool,
    )


def test_mcp_tools_ask_by_default_and_rules_match_them_by_server_or_name():
    rules = Rules.defaults()
    decision = rules.decide(mcp_call("github", "search"))
    assert decision.decision == "ask"
    assert decision.reason == "tools of MCP servers need your approval"
    rules.add(Rule.allow(McpServer(server="github", tool="search*"), scope="user"))
    rules.add(Rule.deny("mcp__github__delete_repo", scope="user"))
    assert rules.decide(mcp_call("github", "search_issues")).decision == "allow"
    assert rules.decide(mcp_call("github", "create_issue")).decision == "ask"
    assert rules.decide(mcp_call("other", "search")).decision == "ask"
    assert rules.decide(mcp_call("github", "delete_repo")).decision == "deny"
    # A built-in tool is no MCP server's, whatever its name.
    assert not McpServer().matches(
        ToolCall(name="read_file", category="read", input={}, summary="", role="actor")
    )
    assert McpServer(server="github").describe() == "tools of MCP server github"
    assert McpServer(server="github", tool="x").describe() == "MCP server github: tool x"
    saved = Rules.from_json(Rules([Rule.allow(McpServer(server="g"))]).to_json())
    assert saved.rules[0].matcher == McpServer(server="g")


# --- names and schemas ----------------------------------------------------------------


def test_tool_names_keep_to_the_api_charset_and_stay_unique():
    taken: set[str] = set()
    first = tool_name("a.b", "c", taken)
    taken.add(first)
    second = tool_name("a_b", "c", taken)
    assert first == "mcp__a_b__c"
    assert second != first
    assert second.startswith("mcp__a_b__c_")
    long = tool_name("server-with-a-long-name", "tool_" + "x" * 80, set())
    assert len(long) <= 64
    for name in (first, second, long, tool_name("ünïcode srv", "tööl/name", set())):
        assert all(c.isascii() and (c.isalnum() or c in "_-") for c in name), name


def test_a_tool_named_like_a_builtin_or_yours_gets_another_name(workspace):
    @tool
    def mcp__srv__echo() -> str:
        """Mine, not the server's."""
        return "mine"

    registry = ToolRegistry([mcp__srv__echo])
    servers = McpServers({"srv": McpServerConfig(command="x")})
    listed = ServerTool("echo", "Echo", {"type": "object", "properties": {}}, {})
    servers.connections["srv"].tools = [listed]
    notes = servers.update(registry)
    assert notes == []
    assert registry["mcp__srv__echo"].server is None  # yours stays
    theirs = [t for t in registry if t.server == "srv"]
    assert len(theirs) == 1
    assert theirs[0].name.startswith("mcp__srv__echo_")


def test_a_schema_that_is_not_an_object_leaves_the_tool_out_and_says_so():
    assert input_schema({"type": "string"}) is None
    assert input_schema(["not", "a", "schema"]) is None
    assert input_schema({"properties": {"a": {"type": "integer"}}}) == {
        "type": "object",
        "properties": {"a": {"type": "integer"}},
    }
    registry = ToolRegistry()
    servers = McpServers({"srv": McpServerConfig(command="x")})
    servers.connections["srv"].tools = [
        ServerTool("odd", "", {"type": "string"}, {}),
        ServerTool("fine", "", {"type": "object"}, {}),
    ]
    notes = servers.update(registry)
    assert registry.names() == ["mcp__srv__fine"]
    assert notes == [
        "MCP server srv: tool 'odd' left out: its input schema is not a JSON object schema"
    ]
    assert servers.update(registry) == []  # said once


def test_a_server_claiming_read_only_is_not_believed():
    servers = McpServers({"srv": McpServerConfig(command="x")})
    servers.connections["srv"].tools = [
        ServerTool("wipe", "", {"type": "object"}, {"readOnlyHint": True}),
    ]
    registry = ToolRegistry()
    servers.update(registry)
    wipe = registry["mcp__srv__wipe"]
    assert wipe.permissions == {"mcp_tools"}
    assert wipe.category == "mcp"
    shown = render_status(servers.status())
    assert (
        "wipe as mcp__srv__wipe (the server says it only reads; read_only_tools grants it)" in shown
    )


async def test_a_disabled_server_is_never_started(home, workspace):
    write_settings(home, f'[mcpServers.off]\ncommand = "{sys.executable}"\nenabled = false\n')
    model = ScriptedModel([call("task_complete", summary="done")])
    agent = Agent("actor", model, workspace=workspace)
    await agent.run("anything")
    assert agent.mcp.connections["off"].state == "disabled"
    assert "off: disabled" in render_status(agent.mcp.status())
    assert await agent.mcp.start_all() == []


# --- results ------------------------------------------------------------------------------


def test_a_result_of_every_kind_becomes_text_the_model_can_read():
    from jupyter_agent.mcp._results import MAX_IMAGES, to_output

    structured = to_output("s", "t", {"content": [], "structuredContent": {"rows": 3}})
    assert structured.text == '{\n "rows": 3\n}'
    odd = to_output(
        "s",
        "t",
        {
            "content": [
                {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
                {"type": "resource", "resource": {"uri": "x://b", "blob": "AAAA"}},
                {"type": "hologram"},
                {"type": "image", "data": "not base64!", "mimeType": "image/png"},
            ],
            "isError": True,
        },
    )
    assert odd.is_error
    assert "[audio audio/wav: not shown to you]" in odd.text
    assert "[embedded resource x://b] binary, 3 bytes" in odd.text
    assert "'hologram'" in odd.text
    assert "unreadable" in odd.text
    assert odd.images == []
    empty = to_output("s", "t", {"content": []})
    assert empty.text == "(the tool returned no content)"
    import base64
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (8, 8), "blue").save(out, format="PNG")
    png = {
        "type": "image",
        "data": base64.b64encode(out.getvalue()).decode(),
        "mimeType": "image/png",
    }
    many = to_output("s", "t", {"content": [png] * (MAX_IMAGES + 2)})
    assert len(many.images) == MAX_IMAGES
    assert "not attached (at most 5 per result)" in many.text


def test_a_chatty_servers_stderr_keeps_only_its_end_on_disk():
    import os

    from jupyter_agent.mcp._connection import STDERR_KEPT, McpConnection, _stderr_file

    connection = McpConnection("chatty", McpServerConfig(command="x"))
    with _stderr_file() as log:
        connection._stderr = log
        log.write("noise\n" * (STDERR_KEPT // 6 + 10) + "the last words\n")
        log.flush()
        connection._trim_stderr()
        log.write("and after\n")
        log.flush()
        assert os.fstat(log.fileno()).st_size < 10_000
        tail = connection._stderr_tail()
        assert tail.endswith("the last words and after)")


async def test_a_server_that_keeps_failing_backs_off_then_waits_to_be_asked_again():
    servers = McpServers({"gone": McpServerConfig(command="/nonexistent/mcp-server-xyz")})
    connection = servers.connections["gone"]
    first = await servers.start(servers.connections.values())
    assert len(first) == 1
    assert "not found" in first[0]
    assert connection.retry_in() == 0  # the first retry is at once
    assert await servers.start(servers.connections.values()) == []  # same news: not repeated
    assert connection.starts == 2
    assert "in 2 s or later" in connection.describe()
    assert await servers.start(servers.connections.values()) == []
    assert connection.starts == 2  # backing off: not tried again yet
    connection._failed_at -= 10  # as if the back-off had passed
    await servers.start(servers.connections.values())
    assert connection.starts == 3
    assert connection.retry_in() is None
    assert "gave up after 3 attempts; %agent mcp tries again" in connection.describe()
    notes = await servers.start_all()  # %agent mcp
    assert connection.starts == 4
    assert "not found" in notes[0]
