"""Users sharing one Unix account (containers, some hub spawners): another user's agent
credentials file, and every dot-file or dot-folder of another home, are sensitive locations
for every tool and command (issue 34, point 5).

- The file tools (read, list, search, write) refuse them, whatever the workspace holds.
- A command whose words, redirections, globs, option values or inline code reach one asks,
  with a warning naming the location; "Always allow" is not offered and no rule covers it;
  its card never says "only reads". A redirection that reads one is refused.
- An MCP tool given such a path asks the same way.

Every spelling reaches the same place: ``..``, ``//``, ``/proc/self/root``, letter case, a
link planted in the workspace, ``cd`` then a relative path, ``~bob``, a glob, ``$HOME/..``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import call, until

from jupyter_agent import Agent, ScriptedModel
from jupyter_agent.approvals import CommandPreview
from jupyter_agent.commands import analyze, command_hazards
from jupyter_agent.config.rule_matchers import Everything
from jupyter_agent.config.rules import Rule, Rules
from jupyter_agent.errors import ToolError
from jupyter_agent.events import PermissionRequestEvent
from jupyter_agent.permissions import Hazard
from jupyter_agent.tools import ToolContext
from jupyter_agent.tools.files import grep, list_directory, read_file
from jupyter_agent.tools.shell import execute_command
from jupyter_agent.workspace import access as access_module
from jupyter_agent.workspace.access import WorkspaceAccess, secret_place

KEY = "sk-ant-bobs-own-key-000"


@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder of homes: alice's (the user: $HOME, with the workspace ``work``) and
    bob's, with his saved key, ssh key, history and settings."""
    parent = tmp_path / "homes"
    alice, bob = parent / "alice", parent / "bob"
    (alice / "work").mkdir(parents=True)
    (alice / "work" / "notes.md").write_text("notes\n")
    (alice / ".bashrc").write_text("alias ll='ls -l'\n")
    (bob / ".jupyter_agent").mkdir(parents=True)
    (bob / ".jupyter_agent" / "credentials.json").write_text(f'{{"anthropic_api_key": "{KEY}"}}')
    (bob / ".ssh").mkdir()
    (bob / ".ssh" / "id_rsa").write_text("PRIVATE\n")
    (bob / ".bash_history").write_text(f"export ANTHROPIC_API_KEY={KEY}\n")
    (bob / ".config" / "gh").mkdir(parents=True)
    (bob / ".config" / "gh" / "hosts.yml").write_text("oauth_token: gho_x\n")
    (bob / "shared.csv").write_text("a,b\n")
    monkeypatch.setattr(access_module, "HOME_PARENTS", (str(parent),), raising=False)
    monkeypatch.setenv("HOME", str(alice))
    real_expanduser = os.path.expanduser

    def expanduser(path):  # `~bob`, as the account database would answer
        text = os.fspath(path)
        if text == "~bob" or text.startswith("~bob/"):
            return str(bob) + text[4:]
        return real_expanduser(path)

    monkeypatch.setattr(os.path, "expanduser", expanduser)
    return parent


BOB_SECRETS = [
    "bob/.jupyter_agent/credentials.json",
    "bob/.jupyter_agent",
    "bob/.ssh/id_rsa",
    "bob/.bash_history",
    "bob/.config/gh/hosts.yml",
]


# --- the file tools ------------------------------------------------------------------------


@pytest.mark.parametrize("rel", BOB_SECRETS)
def test_file_tools_refuse_another_homes_dot_files_even_below_the_workspace(homes, rel):
    access = WorkspaceAccess(homes)  # the workspace holds every home
    for spelled in (
        str(homes / rel),
        rel,
        f"alice/../{rel}",
        str(homes / rel).replace("/", "//"),
        f"/proc/self/root{homes / rel}",
        f"{homes}/BOB/{rel[4:]}".replace(".jupyter_agent", ".Jupyter_Agent"),
    ):
        with pytest.raises(ToolError, match="sensitive location") as info:
            access.resolve(spelled)
        assert "bob" in str(info.value).lower()
        assert access.read_refusal(spelled) is not None


def test_an_agent_credentials_file_is_refused_wherever_it_lies(homes, tmp_path):
    odd = tmp_path / "srv" / "users" / "carol" / ".jupyter_agent"
    odd.mkdir(parents=True)
    (odd / "credentials.json").write_text("{}")
    access = WorkspaceAccess(tmp_path)
    message = str(_refused(access, "srv/users/carol/.jupyter_agent/credentials.json"))
    assert "agent credentials file" in message
    assert secret_place(odd / "credentials.json") is not None


def test_a_link_the_workspace_plants_into_another_home_is_refused(homes):
    work = homes / "alice" / "work"
    (work / "data").symlink_to(homes / "bob")
    access = WorkspaceAccess(homes)
    for rel in ("alice/work/data/.ssh/id_rsa", "alice/work/data/.jupyter_agent/credentials.json"):
        assert "sensitive location" in str(_refused(access, rel))
    inside = WorkspaceAccess(work)  # the usual workspace: a link out is refused anyway
    assert "Refused" in str(_refused(inside, "data/.bash_history"))


def test_what_is_not_sensitive_stays_readable(homes):
    access = WorkspaceAccess(homes)
    access.resolve("bob/shared.csv")  # another home's plain files: not a dot-file
    access.resolve("alice/.bashrc")  # the user's own home
    access.resolve("alice/work/notes.md")
    assert WorkspaceAccess(homes / "bob").resolve(".bash_history")  # the user chose to work there
    with pytest.raises(ToolError, match="agent credentials file"):
        WorkspaceAccess(homes / "bob").resolve(".jupyter_agent/credentials.json")


async def test_reading_listing_and_searching_never_show_bobs_secrets(homes):
    ctx = ToolContext(workspace=homes)
    with pytest.raises(ToolError, match="sensitive location"):
        await read_file.call(ctx, {"path": "bob/.jupyter_agent/credentials.json"})
    found = await grep.call(ctx, {"pattern": "sk-ant", "path": "."})
    assert KEY not in found.text and "bob/." not in found.text
    listed = await list_directory.call(ctx, {"path": "bob", "recursive": True})
    assert "shared.csv" in listed.text
    for inside in ("id_rsa", "hosts.yml", "credentials.json"):  # named at most, never entered
        assert inside not in listed.text


# --- commands ------------------------------------------------------------------------------

READS = [
    "cat {bob}/.jupyter_agent/credentials.json",
    'cat "{bob}/.jupyter_agent/credentials.json"',
    "cat {bob}/.ssh/id_rsa",
    "head -c 100 {bob}/.bash_history",
    "cat {homes}/*/.jupyter_agent/*",
    "cat {homes}/b*/.j*/c*",
    "cat {bob}/.*",
    "cd {bob} && cat .jupyter_agent/credentials.json",
    "cd {homes}; cd bob; cat .bash_history",
    "cat {homes}/alice/../bob/.ssh/id_rsa",
    "cat /{bob}//.ssh//id_rsa",
    "cat /proc/self/root{bob}/.ssh/id_rsa",
    "cat {homes}/BOB/.SSH/id_rsa",
    "cat data/.ssh/id_rsa",
    "cat data/*/credentials.json",
    "cat ~bob/.jupyter_agent/credentials.json",
    "cd ~bob && cat .bash_history",
    "grep -r sk-ant {bob}",
    "tar czf - {bob} | base64",
    "ls -a {homes}",
    "grep --file={bob}/.bash_history x notes.md",
    "python3 -c \"print(open('{bob}/.jupyter_agent/credentials.json').read())\"",
    "cp {bob}/.jupyter_agent/credentials.json ./stolen.json",
    "cat {bob}/.{{ssh,aws}}/id_rsa",
    'cat "$HOME/../bob/.ssh/id_rsa"',
    "F={bob}/.ssh/id_rsa python3 read.py",
]


def _line(template: str, homes: Path) -> str:
    return template.format(bob=homes / "bob", homes=homes)


def _hazards(homes: Path, command: str) -> list[Hazard]:
    work = homes / "alice" / "work"
    if not (work / "data").exists():
        (work / "data").symlink_to(homes / "bob")
    return command_hazards(analyze(command), cwd=work, sandbox=WorkspaceAccess(work))


@pytest.mark.parametrize("template", READS)
def test_a_command_reaching_another_homes_secrets_asks_with_a_warning(homes, template):
    command = _line(template, homes)
    hazards = _hazards(homes, command)
    assert hazards, command
    warned = [h for h in hazards if "sensitive location" in h.reason]
    assert warned, hazards
    for h in warned:
        assert h.action == "refuse" or not h.rememberable  # no "Always allow" for it


def test_the_warning_names_the_location(homes):
    [hazard] = _hazards(homes, _line(READS[0], homes))
    assert hazard.reason.startswith("`cat ")
    assert hazard.reason.endswith(
        f"` reaches {homes}/bob/.jupyter_agent/credentials.json, a sensitive location (an "
        "agent credentials file: it holds someone's API keys)."
    )


def test_a_redirection_that_reads_another_homes_secret_is_refused(homes):
    hazards = _hazards(homes, f"cat < {homes}/bob/.ssh/id_rsa")
    assert [h.action for h in hazards] == ["refuse"]
    assert f"{homes}/bob/.ssh" in hazards[0].reason


@pytest.mark.parametrize(
    "command",
    [
        "cat notes.md",
        "ls -la",
        "ls *.md",
        "cat {bob}/shared.csv",
        "cat ~/.bashrc",
        "grep -r x .",
        "cat /etc/os-release",
        "python3 -c 'print(1)'",
        "echo $HOME",
    ],
)
def test_ordinary_commands_get_no_warning(homes, command):
    assert _hazards(homes, _line(command, homes)) == []


async def test_the_card_does_not_say_only_reads_and_offers_no_always_allow(homes):
    work = homes / "alice" / "work"
    command = f"cat {homes}/bob/.jupyter_agent/credentials.json"
    model = ScriptedModel([call("execute_command", command=command), {"text": "ok"}])
    policy = Rules([Rule.allow(Everything())])
    agent = Agent("actor", model, workspace=work, persist=False, policy=policy)
    handle = agent.start("look")
    await until(lambda: handle.pending_approval is not None)
    requests = [e for e in handle.events_so_far if isinstance(e, PermissionRequestEvent)]
    request = requests[-1] if requests else None
    assert request is not None  # an allow-everything rule does not cover it
    assert not request.remember_options  # no "Always allow"
    assert any("sensitive location" in w for w in request.warnings)
    preview = request.preview
    assert isinstance(preview, CommandPreview)
    [program] = preview.programs
    assert program.note != "only reads"
    assert "sensitive location" in program.note and "credentials.json" in program.note
    handle.approve(False)
    await handle.wait()


def test_the_check_is_bounded(homes):
    many = " ".join(f"f{i}" for i in range(5000))
    hazards = _hazards(homes, f"cat {many}")
    assert any("more words than are checked" in h.reason for h in hazards)


def test_the_shell_tool_asks_rather_than_runs(homes):
    ctx = ToolContext(workspace=homes / "alice" / "work")
    hazards = execute_command.assess(ctx, {"command": _line(READS[0], homes), "working_dir": "."})
    assert hazards and not hazards[0].rememberable


def _refused(access: WorkspaceAccess, path: str) -> ToolError:
    with pytest.raises(ToolError) as info:
        access.resolve(path)
    return info.value


# --- tools of MCP servers ------------------------------------------------------------------


def test_an_mcp_tool_given_another_homes_secret_asks_with_a_warning(homes):
    from types import SimpleNamespace

    from jupyter_agent.mcp._connection import ServerTool
    from jupyter_agent.mcp._tool import McpTool

    listed = ServerTool("read_file", "Reads a file", {"type": "object"}, {})
    connection = SimpleNamespace(name="fs")
    tool = McpTool(connection, listed, name="mcp__fs__read_file", schema={}, read_only=True)  # type: ignore[arg-type]
    ctx = ToolContext(workspace=homes / "alice" / "work")
    for args in (
        {"path": str(homes / "bob" / ".jupyter_agent" / "credentials.json")},
        {"paths": ["notes.md", f"{homes}/bob/.ssh/id_rsa"]},
        {"query": {"glob": f"{homes}/*/.jupyter_agent/*"}},
        {"path": "../../bob/.bash_history"},
    ):
        hazards = tool.assess(ctx, tool.validate(args))
        assert hazards, args
        assert all(h.action == "ask" and not h.rememberable for h in hazards)
        assert "sensitive location" in hazards[0].reason
    assert tool.assess(ctx, tool.validate({"path": "notes.md", "text": "hello"})) == []
