"""Git run by the agent, with real git and real bubblewrap: it still works, and runs nothing
a repository planted.

Invariants (a workspace repository, a nested one and a submodule; ``git_places``):

- git still works in the agent's own OS sandbox for its legitimate writes: ``git add``,
  ``git commit``, ``git checkout -b``, in the top repository, a nested one and a submodule;
- git run by the agent, "Always allow"ed, sandboxed or not, runs nothing a configuration
  planted before the session names (``core.fsmonitor``, a ``post-index-change`` hook): the
  command's environment overrides it, and a line that would take that away asks;
- a file tool or a command line that names a configuration git includes asks, with a
  warning.

What the OS refuses a command that points git elsewhere is ``test_git_redirects.py``'s.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from git_places import Place, init, run_in
from helpers import assert_valid, call, until

from jupyter_agent import Agent, ScriptedModel
from jupyter_agent.commands import analyze, command_hazards, with_git_overrides
from jupyter_agent.os_sandbox.launch import SandboxSettings
from jupyter_agent.tools import ToolContext
from jupyter_agent.tools.files import create_file
from jupyter_agent.workspace.access import WorkspaceAccess

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the bubblewrap sandbox is Linux's")


# --- the agent's own git still works ------------------------------------------------------


def test_git_add_commit_and_checkout_work_in_the_sandbox(place, sandbox):
    p = place
    nested = p.ws / "analysis" / "vendor"
    init(p, nested)
    upstream = p.ws.parent / "upstream"
    init(p, upstream)
    assert p.git("submodule", "add", "-q", str(upstream), "lib").returncode == 0
    assert p.git("commit", "-q", "-m", "lib").returncode == 0
    (p.ws / "githooks").mkdir()
    (p.ws / "githooks/pre-commit").write_text(f"#!/bin/sh\ntouch {p.ws}/hook-ran\n")
    (p.ws / "githooks/pre-commit").chmod(0o755)
    assert p.git("config", "core.hooksPath", "githooks").returncode == 0
    script = textwrap.dedent(
        """
        set -e
        echo change >> README.md && git add README.md && git commit -q -m top
        git checkout -q -b feature && git status --short && git stash list
        cd analysis/vendor
        echo change >> README.md && git add -A && git commit -q -m nested
        git checkout -q -b topic
        cd ../../lib
        echo change >> README.md && git add -A && git commit -q -m sub
        git checkout -q -b work
        echo done
        """
    )
    out = run_in(sandbox(), p, ["bash", "-c", script])
    assert out.strip().endswith("done")
    assert p.git("log", "-1", "--format=%s").stdout.strip() == "top"
    assert p.git("branch", "--show-current").stdout.strip() == "feature"
    assert p.git("log", "-1", "--format=%s", cwd=nested).stdout.strip() == "nested"
    assert p.git("log", "-1", "--format=%s", cwd=p.ws / "lib").stdout.strip() == "sub"
    assert (p.ws / "hook-ran").exists()  # the user's own hooks still run on the agent's commit
    assert not os.path.lexists(p.ws / ".git/commondir")  # what the sandbox placed went
    assert p.git("rev-parse", "--git-common-dir").stdout.strip() == ".git"


# --- git run by the agent: a planted configuration runs nothing --------------------------


def planted_repository(p: Place) -> Path:
    """The workspace's repository as a hostile download ships it: core.fsmonitor and a
    post-index-change hook that leave a mark in the workspace (writable to commands)."""
    script = p.ws.parent / "fsmonitor.sh"
    script.write_text(f"#!/bin/sh\ntouch {p.ws}/ran-fsmonitor\nexit 1\n")
    script.chmod(0o755)
    with open(p.ws / ".git/config", "a") as f:
        f.write(f"[core]\n\tfsmonitor = {script}\n")
    hook = p.ws / ".git/hooks/post-index-change"
    hook.write_text(f"#!/bin/sh\ntouch {p.ws}/ran-hook\n")
    hook.chmod(0o755)
    return script


@pytest.mark.parametrize("sandboxed", [True, False], ids=["sandboxed", "unsandboxed"])
async def test_an_always_allowed_git_status_runs_nothing_a_planted_config_names(place, sandboxed):
    p = place
    planted_repository(p)
    os.utime(p.ws / "README.md", (1_600_000_000, 1_600_000_000))  # git must refresh the index
    commands = ["git status", "git status --short", "git diff --stat", "git log -1 --oneline"]
    script = []
    for command in commands:
        script.append(call("execute_command", command=command))
    script.append(call("task_complete", summary="done"))
    agent = Agent(
        "actor",
        ScriptedModel(script),
        workspace=p.ws,
        persist=False,
        command_sandbox=SandboxSettings(enabled=sandboxed),
    )
    handle = agent.start("look around")
    while await handle.wait_for_user() is not None:
        handle.approve(True, remember=True)  # "Always allow"
        await until(lambda: handle.pending_approval is None or handle.done, timeout=5)
    await handle.wait()
    outputs = [r.text for m in agent.history for r in m.tool_results]
    assert any("README.md" in o or "first" in o for o in outputs), outputs
    assert sorted(x.name for x in p.ws.iterdir() if x.name.startswith("ran-")) == []
    assert_valid(agent.history)


def test_the_overrides_win_over_a_configuration_and_the_kernels_own_environment(place):
    p = place
    planted_repository(p)
    os.utime(p.ws / "README.md", (1_600_000_000, 1_600_000_000))  # git must refresh
    inherited = {**p.env, "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.fsmonitor"}
    inherited["GIT_CONFIG_VALUE_0"] = str(p.ws.parent / "fsmonitor.sh")
    inherited["GIT_CONFIG_PARAMETERS"] = f"'core.fsmonitor'='{p.ws.parent / 'fsmonitor.sh'}'"
    env = with_git_overrides(inherited, read_only=True)
    done = subprocess.run(
        ["git", "status", "--short"], cwd=p.ws, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert env["GIT_CONFIG_KEY_0"] == "core.fsmonitor"  # the kernel's own entry is kept…
    assert sorted(x.name for x in p.ws.iterdir() if x.name.startswith("ran-")) == []  # …and loses


@pytest.mark.parametrize(
    "line",
    [
        "env -u GIT_CONFIG_COUNT git status",
        "env --unset=GIT_CONFIG_KEY_0 git status",
        "env -i PATH=/usr/bin git status",
        "unset GIT_CONFIG_COUNT; git status",
        "unset $name; git status",
        "GIT_CONFIG_COUNT=0 git status",
        "export GIT_CONFIG_COUNT=0; git status",
    ],
)
def test_a_line_that_takes_the_overrides_away_asks(line):
    assert analyze(line).problems, line


def test_writing_a_configuration_git_includes_asks_from_a_file_tool_and_a_command(place):
    p = place
    (p.home / ".gitconfig").write_text(f"[include]\n\tpath = {p.ws}/shared.gitconfig\n")
    assert p.git("config", "include.path", "../team.gitconfig").returncode == 0
    nested = p.ws / "vendor" / "lib"
    init(p, nested)
    assert p.git("config", "include.path", "../lib.gitconfig", cwd=nested).returncode == 0
    ctx = ToolContext(workspace=p.ws)
    for rel, whose in (
        ("shared.gitconfig", "your own git configuration"),
        ("team.gitconfig", "the git configuration of work"),
        ("vendor/lib/lib.gitconfig", "the git configuration of lib"),
    ):
        hazards = create_file.assess(ctx, {"path": rel, "content": p.evil(rel)})
        assert [h.action for h in hazards] == ["ask"], (rel, hazards)
        assert whose in hazards[0].reason and "run commands" in hazards[0].reason
        line = analyze(f"printf '[core]\\n' >> {rel}")
        hazards = command_hazards(line, cwd=p.ws, sandbox=WorkspaceAccess(p.ws))
        assert [h.action for h in hazards] == ["ask"], (rel, hazards)
        assert whose in hazards[0].reason
    assert create_file.assess(ctx, {"path": "notes.md", "content": "x"}) == []
