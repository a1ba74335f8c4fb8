"""A server's ``envFile`` (VS Code's and Cursor's key).

Invariants: the file is read through the path gate, inside the agent's folder (or, from
the user's own settings, the home folder), never through a link that leads out, and at
most 256 KB of it; its values reach the server's environment and the secret redaction and
nothing else (no listing, trust prompt or message shows one).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from helpers import call

from jupyter_agent import Agent, ScriptedModel
from jupyter_agent.config.rules import McpServer, Rule, Rules
from jupyter_agent.mcp import McpServerConfig, McpServers, render_status
from jupyter_agent.mcp._connection import McpConnection, McpUnavailable
from jupyter_agent.mcp._env_file import EnvFileError, parse

SERVER = str(Path(__file__).with_name("mcp_server_for_tests.py"))
SECRET = "envfile-5ecret-value-4242"


def write_settings(folder: Path, text: str) -> None:
    path = folder / ".jupyter_agent" / "settings.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_the_lines_people_write_in_env_files_are_read():
    text = (
        "# a comment\n"
        "PLAIN=value with spaces  # and a comment\n"
        "export EXPORTED=yes\n"
        "SINGLE='kept as $written \\n'\n"
        'DOUBLE="two\\nlines \\"quoted\\""\n'
        "EMPTY=\n"
        "\n"
        "SPACED = around\n"
    )
    assert parse(text, "f") == {
        "PLAIN": "value with spaces",
        "EXPORTED": "yes",
        "SINGLE": "kept as $written \\n",
        "DOUBLE": 'two\nlines "quoted"',
        "EMPTY": "",
        "SPACED": "around",
    }
    with pytest.raises(EnvFileError) as caught:
        parse(f"GOOD=1\nthis line holds {SECRET}\n", "envFile x")
    assert str(caught.value) == "envFile x, line 2: not a NAME=value line"  # never the line
    with pytest.raises(EnvFileError, match="line 1: the quoted value is not closed"):
        parse(f'TOKEN="{SECRET}\n', "f")


def connection(workspace: Path, env_file: str, origin: str | None = "folder") -> McpConnection:
    config = McpServerConfig(command="x", env_file=env_file).in_workspace(workspace)
    config.placed(origin=origin)  # type: ignore[arg-type]
    return McpConnection("srv", config)


def test_an_env_file_is_read_inside_the_folder_and_no_link_leads_out(workspace, home):
    (workspace / ".env").write_text(f"TOKEN={SECRET}\n")
    assert connection(workspace, ".env").file_values() == {"TOKEN": SECRET}
    assert connection(workspace, "${workspaceFolder}/.env").file_values() == {"TOKEN": SECRET}
    # A link inside the folder is followed; one that leads out is refused.
    (workspace / "inner.env").symlink_to(workspace / ".env")
    assert connection(workspace, "inner.env").file_values() == {"TOKEN": SECRET}
    outside = workspace.parent / "outside.env"
    outside.write_text("STOLEN=1\n")
    (workspace / "out.env").symlink_to(outside)
    for given in ("out.env", str(outside), "../outside.env"):
        with pytest.raises(McpUnavailable, match="envFile"):
            connection(workspace, given).file_values()
    # A folder's entry may not reach into your home; yours may.
    (home / "mine.env").write_text("MINE=1\n")
    with pytest.raises(McpUnavailable, match="is not inside"):
        connection(workspace, "~/mine.env", origin="folder").file_values()
    assert connection(workspace, "~/mine.env", origin="user").file_values() == {"MINE": "1"}
    # Bounded, regular files only, said without a value.
    (workspace / "big.env").write_text("A=" + "x" * 300_000 + "\n")
    with pytest.raises(McpUnavailable, match="larger than 256 KB"):
        connection(workspace, "big.env").file_values()
    os.mkfifo(workspace / "pipe.env")
    with pytest.raises(McpUnavailable, match="envFile"):
        connection(workspace, "pipe.env").file_values()
    with pytest.raises(McpUnavailable, match="does not exist"):
        connection(workspace, "missing.env").file_values()


def test_env_file_values_are_secrets_from_the_start_and_shown_nowhere(home, workspace):
    (workspace / ".env").write_text(f"SERVICE_VALUE={SECRET}\n")
    write_settings(
        home,
        '[mcpServers.srv]\ncommand = "x"\nenvFile = ".env"\n'
        'headers = {}\nargs = ["--value", "${SERVICE_VALUE}"]\n',
    )
    agent = Agent("actor", ScriptedModel(), workspace=workspace)
    # Hidden before the server ever starts: the agent may read the file with its own tools.
    assert SECRET not in agent.secrets.redact(f"the file says {SECRET}")
    listing = render_status(agent.mcp.status())
    assert SECRET not in listing
    assert "envFile: .env (its values are hidden)" in listing
    # A ${NAME} of its other values is filled from the file.
    config = agent.mcp.connections["srv"].config
    filled = config.expanded({}, {"SERVICE_VALUE": SECRET})
    assert filled.args == ["--value", SECRET]
    assert filled.env == {"SERVICE_VALUE": SECRET}
    # An edit of the file is seen at the next redaction.
    (workspace / ".env").write_text("SERVICE_VALUE=another-5ecret-value-77\n")
    assert "another-5ecret-value-77" not in agent.secrets.redact("another-5ecret-value-77")


def test_the_trust_prompt_names_the_file_not_what_it_holds(home, workspace):
    (workspace / ".env").write_text(f"TOKEN={SECRET}\n")
    write_settings(workspace, '[mcpServers.srv]\ncommand = "x"\nenvFile = ".env"\n')
    agent = Agent("actor", ScriptedModel(), workspace=workspace)
    assert agent.trust_prompt is not None
    said = agent.trust_prompt.text()
    assert "reading the file `.env` into its environment" in said
    assert SECRET not in said


@pytest.mark.slow  # a real MCP server process
async def test_a_server_gets_its_env_file_and_the_model_never_sees_a_value(home, workspace):
    (workspace / ".env").write_text(f'export SERVER_TOKEN="{SECRET}"\n')
    settings_text = (
        f'[mcpServers.srv]\ncommand = "{sys.executable}"\nargs = ["{SERVER}"]\n'
        'envFile = "${workspaceFolder}/.env"\nstartup_timeout = 90\n'
    )
    write_settings(home, settings_text)
    rules = Rules.defaults()
    rules.add(Rule.allow(McpServer(server="srv"), scope="user"))
    model = ScriptedModel(
        [call("mcp__srv__leak", name="SERVER_TOKEN"), call("task_complete", summary="done")]
    )
    agent = Agent("actor", model, workspace=workspace, policy=rules)
    try:
        await agent.run("what is the token")
    finally:
        await agent.mcp.close()
    leak = next(r for m in agent.history for r in m.tool_results)
    assert leak.text.startswith("the value is ‹secret:"), leak.text  # it got the value
    assert SECRET not in str(agent.history)
    saved = (workspace / ".jupyter_agent").rglob("*.jsonl")
    assert all(SECRET not in p.read_text() for p in saved)


@pytest.mark.slow  # a real MCP server process
async def test_a_missing_env_file_stops_only_its_server_and_says_which(home, workspace):
    servers = McpServers(
        {
            "srv": McpServerConfig(command=sys.executable, args=[SERVER], env_file="no.env"),
            "ok": McpServerConfig(command=sys.executable, args=[SERVER], startup_timeout=90),
        }
    )
    try:
        notes = await servers.start_all()
    finally:
        await servers.close()
    assert len(notes) == 1
    assert "MCP server srv could not start: envFile" in notes[0]
    assert "no.env does not exist" in notes[0]
    assert servers.connections["ok"].tools
