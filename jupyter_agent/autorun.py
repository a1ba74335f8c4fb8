"""Paths whose content runs later, on the user's behalf, without anyone asking.

A git hook runs at the user's next commit, ``.bashrc`` when they open a terminal, an
IPython startup file when a kernel starts, a ``.pth`` file in site-packages whenever
Python starts. An agent that may write such a path can make code run outside every rule
and sandbox it lives under, so every write to one asks the user, with a warning, even
when a rule would allow it (the file tools, redirections, and commands whose operands
name them), and the OS sandbox keeps the ones that exist read-only for commands.

``.git/`` and ``.jupyter_agent/`` are not listed: the agent may never write there at all
(:data:`jupyter_agent.sandbox.PROTECTED_DIRS`).
"""

from __future__ import annotations

import functools
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ._system import system_program
from .globs import glob_matches
from .paths import read_regular

ANY_DEPTH: dict[str, str] = {
    ".husky": "git runs the hooks husky keeps here at your next commit",
    ".pre-commit-config.yaml": "pre-commit runs the commands it lists at your next commit",
    ".envrc": "direnv runs it when you enter the folder",
    ".vscode/tasks.json": "your editor can run its tasks when it opens the folder",
    ".devcontainer": "your editor runs its commands when it opens the folder in a container",
    ".Rprofile": "R runs it when it starts in this folder",
    "**/site-packages/*.pth": "Python runs it whenever it starts",
    "**/dist-packages/*.pth": "Python runs it whenever it starts",
    "sitecustomize.py": "Python runs it whenever it starts (when it is on the path)",
    "usercustomize.py": "Python runs it whenever it starts (when it is on the path)",
}
"""Gitignore-style patterns (relative to the workspace) and why each runs later."""

IN_HOME: dict[str, str] = {
    **dict.fromkeys(
        (
            ".bashrc",
            ".bash_profile",
            ".bash_login",
            ".bash_logout",
            ".profile",
            ".zshrc",
            ".zshenv",
            ".zprofile",
            ".zlogin",
            ".zlogout",
            ".kshrc",
            ".mkshrc",
            ".cshrc",
            ".tcshrc",
            ".login",
            ".logout",
            ".xprofile",
            ".xinitrc",
            ".xsession",
            ".xsessionrc",
        ),
        "your shell or desktop runs it when it starts",
    ),
    ".ipython": "IPython runs its startup files and configuration at every start",
    ".jupyter": "Jupyter runs its configuration files at every start",
    ".config": "programs read their settings here, and some run what they find there "
    "(autostart, systemd, git, fish)",
    ".local/bin": "programs here run in place of others on your PATH",
    ".local/lib": "Python loads code from here at every start",
    ".local/share/jupyter": "Jupyter starts kernels as its kernel specs here say",
    ".gitconfig": "git reads it, and it can make git run commands",
    ".julia/config": "Julia runs its startup file at every start",
    ".vimrc": "your editor runs it when it starts",
    ".emacs": "your editor runs it when it starts",
    ".emacs.d": "your editor runs it when it starts",
    ".npmrc": "npm reads it, and it can make npm run commands",
}
"""Paths relative to the home folder (they matter when the workspace holds the home folder)."""

_MADE_FOLDERS = (".ipython", ".jupyter", ".config", ".local/bin", ".local/lib")
"""Home folders the OS sandbox may create empty to keep them read-only (harmless when empty)."""


@dataclass(frozen=True)
class Autorun:
    """Where, in one workspace, code may be planted to run later."""

    workspace: Path
    home: Path | None
    """The home folder, when the workspace holds it."""
    hooks: tuple[Path, ...]
    """Folders git runs hooks from (``core.hooksPath``, when it is inside the workspace)."""

    def reason(self, path: Path | str) -> str | None:
        """Why writing ``path`` (an absolute, resolved path) makes code run later, if it does."""
        path = Path(path)
        for hooks in self.hooks:
            if _inside(path, hooks):
                return f"git runs the hooks in {hooks.name}/ (core.hooksPath) at your next commit"
        if self.home is not None and _inside(path, self.home):
            rel = path.relative_to(self.home).as_posix()
            for place, why in IN_HOME.items():
                if rel == place or rel.startswith(place + "/"):
                    return why
        if _inside(path, self.workspace):
            parts = list(path.relative_to(self.workspace).parts)
            for pattern, why in ANY_DEPTH.items():
                if glob_matches(pattern, parts):
                    return why
        return None

    def protected(self) -> list[Path]:
        """What the OS sandbox keeps read-only for commands: the places that exist at the
        workspace's top (deeper ones are left to the rules), the repository's hooks and
        configuration, the agent's own folder, and the home folder's start files."""
        ws = self.workspace
        paths = [ws / ".jupyter_agent", *self.hooks]
        paths.extend(_git_protected(ws))
        for place in ANY_DEPTH:
            if "*" not in place and os.path.lexists(ws / place):
                paths.append(ws / place)
        if self.home is not None:
            paths.extend(self.home / place for place in IN_HOME)
        return list(dict.fromkeys(paths))

    def prepare(self) -> None:
        """Create the empty folders :meth:`protected` keeps read-only, so the sandbox can
        mount them rather than leave an empty file where a folder belongs."""
        folders = [self.workspace / ".jupyter_agent"]
        git = self.workspace / ".git"
        if git.is_dir() and not git.is_symlink():
            folders.append(git / "hooks")
        if self.home is not None:
            folders.extend(self.home / place for place in _MADE_FOLDERS)
        for folder in folders:
            if not os.path.lexists(folder):
                try:
                    folder.mkdir(parents=True)
                except OSError:
                    pass


def autorun_for(workspace: Path | str) -> Autorun:
    """The :class:`Autorun` places of a workspace (its git configuration read again only
    when it changed)."""
    ws = Path(os.path.realpath(workspace))
    config = ws / ".git" / "config"
    try:
        stamp = config.stat().st_mtime_ns
    except OSError:
        stamp = 0
    return _autorun(ws, stamp)


@functools.lru_cache(maxsize=32)
def _autorun(ws: Path, config_stamp: int) -> Autorun:
    home = Path(os.path.realpath(os.path.expanduser("~")))
    hooks: list[Path] = []
    configured = _git_hooks_path(ws) if config_stamp else None
    if configured:
        folder = Path(os.path.realpath(ws / os.path.expanduser(configured)))
        if _inside(folder, ws):
            hooks.append(folder)
    return Autorun(ws, home if _inside(home, ws) else None, tuple(hooks))


def _git_hooks_path(ws: Path) -> str | None:
    """``core.hooksPath`` as git reads it (includes too); ``None`` without git or a value."""
    git = system_program("git")  # run by the kernel itself: never a file of the workspace
    if git is None:
        return None
    try:
        done = subprocess.run(
            [git, "-C", str(ws), "config", "--get", "core.hooksPath"],
            capture_output=True,
            text=True,
            timeout=5,
            env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0"},
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    value = done.stdout.strip()
    return value or None


def _git_protected(ws: Path) -> list[Path]:
    """The repository's configuration and hooks, and the `.git` pointer file itself."""
    git = ws / ".git"
    if git.is_file():
        found = [git]
        try:
            raw, _cut = read_regular(git, 4096)  # never a FIFO planted as a .git file
            pointer = raw.decode("utf-8", errors="replace").strip()
        except OSError:
            return found
        if pointer.startswith("gitdir:"):
            target = Path(os.path.realpath(ws / pointer.removeprefix("gitdir:").strip()))
            found.extend([target / "config", target / "hooks"])
        return found
    if not git.is_dir():
        return []
    found = [git / "config", git / "hooks"]
    found.extend(git / name for name in ("config.worktree", "modules") if (git / name).exists())
    return found


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents
