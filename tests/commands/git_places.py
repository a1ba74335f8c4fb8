"""A workspace holding a git repository, a victim folder beside it and a home folder of its
own, for the tests of git in the agent's OS sandbox (``test_git_redirects.py``,
``test_agent_git.py``): git as the user runs it, outside any sandbox, and commands run in
the sandbox as the shell tool runs them. The fixtures' bodies live here as context
managers; each test module declares the fixtures it uses with them."""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from jupyter_agent.os_sandbox.launch import OsSandbox, SandboxSettings
from jupyter_agent.tools.shell import workspace_os_sandbox


@dataclass
class Place:
    ws: Path
    outside: Path
    """The victim: a folder beside the workspace, not under /tmp (commands get a private one)."""
    home: Path
    """The user's home folder for this test (outside the workspace)."""
    env: dict[str, str]

    def git(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        """git as the user runs it, outside any sandbox."""
        return subprocess.run(
            ["git", *args],
            cwd=cwd or self.ws,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )

    def evil(self, name: str) -> str:
        """A configuration that runs a command at the next `git status`."""
        return f'[core]\n\tfsmonitor = "touch {self.outside}/ran-{name}; false"\n'

    def ran(self) -> list[str]:
        return sorted(p.name for p in self.outside.iterdir() if p.name.startswith("ran-"))

    def evil_gitdir(self, folder: Path, name: str) -> Path:
        """A git folder the agent made (not named .git): what a redirect would point at."""
        folder.mkdir(parents=True)
        (folder / "config").write_text(self.evil(name))
        (folder / "HEAD").write_text("ref: refs/heads/main\n")
        (folder / "objects").mkdir()
        (folder / "refs").mkdir()
        hooks = folder / "hooks"
        hooks.mkdir()
        for hook in ("pre-commit", "post-index-change", "post-checkout"):
            (hooks / hook).write_text(f"#!/bin/sh\ntouch {self.outside}/ran-{name}-{hook}\n")
            (hooks / hook).chmod(0o755)
        return folder


@contextmanager
def git_place(monkeypatch: pytest.MonkeyPatch) -> Iterator[Place]:
    """A place under the home folder (not under /tmp: commands get a private one), its
    workspace a repository with one commit, removed afterwards."""
    base = Path.home() / ".cache" / "jupyter_agent-tests" / uuid.uuid4().hex[:12]
    ws, outside, home = base / "work", base / "outside", base / "home"
    for folder in (ws, outside, home):
        folder.mkdir(parents=True)
    (outside / "keep.txt").write_text("the user's file\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "u",
        "GIT_AUTHOR_EMAIL": "u@example.invalid",
        "GIT_COMMITTER_NAME": "u",
        "GIT_COMMITTER_EMAIL": "u@example.invalid",
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "protocol.file.allow",
        "GIT_CONFIG_VALUE_0": "always",
    }
    p = Place(ws, outside, home, env)
    init(p, ws)
    try:
        yield p
    finally:
        shutil.rmtree(base, ignore_errors=True)


def init(p: Place, folder: Path) -> None:
    """A repository with one commit."""
    folder.mkdir(parents=True, exist_ok=True)
    assert p.git("init", "-q", "-b", "main", str(folder)).returncode == 0
    (folder / "README.md").write_text("# readme\n")
    assert p.git("add", "README.md", cwd=folder).returncode == 0
    done = p.git("commit", "-q", "-m", "first", cwd=folder)
    assert done.returncode == 0, done.stderr


@contextmanager
def sandbox_maker(place: Place) -> Iterator[Callable[..., OsSandbox]]:
    """The agent's own OS sandboxes on the place's workspace, active (or the test fails,
    saying why), closed afterwards."""
    made: list[OsSandbox] = []

    def make(**settings: object) -> OsSandbox:
        sb = workspace_os_sandbox(place.ws, settings=SandboxSettings(**settings))  # type: ignore[arg-type]
        made.append(sb)
        status = sb.status()
        assert status.active, f"no OS sandbox on this Linux machine: {status.detail}"
        return sb

    try:
        yield make
    finally:
        for sb in made:
            sb.close()


def run_in(sb: OsSandbox, p: Place, argv: list[str], cwd: Path | None = None) -> str:
    """Run ``argv`` in the sandbox as the shell tool does; its stdout."""
    cwd = cwd or p.ws
    launch = sb.launch(argv, cwd)
    try:
        done = subprocess.run(
            launch.argv,
            cwd=cwd,
            pass_fds=launch.pass_fds,
            start_new_session=True,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            env=p.env,
        )
    finally:
        launch.close()
    assert done.returncode == 0, done.stderr
    return done.stdout
