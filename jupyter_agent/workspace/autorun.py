"""Paths whose content runs later, on the user's behalf, without anyone asking.

A git hook runs at the user's next commit, ``.bashrc`` when they open a terminal, an
IPython startup file when a kernel starts, a ``.pth`` file in site-packages whenever
Python starts, ``core.fsmonitor`` in a configuration git was pointed at by ``.git/commondir``
at the next ``git status``. An agent that may write such a path can make code run outside
every rule and sandbox it lives under. One table says which paths these are and why
(:data:`HOME_PLACES`, :data:`USER_LEVEL`, :data:`ANY_DEPTH`, and git's redirects from
:mod:`jupyter_agent.workspace.git_redirects`), and every guard reads it through :class:`Autorun`:

- the file tools and the write operands of commands ask, with the reason as a warning,
  before writing one (:meth:`Autorun.reason`), and before writing files whose names only the
  command's input knows (an archive, a patch) into a folder that holds some
  (:meth:`Autorun.spread_reason`);
- the OS sandbox keeps them read-only for commands, the missing ones included
  (:meth:`Autorun.protected`).

Which apply: git's redirects, :data:`USER_LEVEL` and the places environment variables name
always; :data:`HOME_PLACES` when the home folder lies in the workspace or in a writable
folder of the sandbox (elsewhere it is read-only already); :data:`ANY_DEPTH` in the
workspace. ``.git/`` and ``.jupyter_agent/`` inside the workspace are never written by the
file tools at all (:data:`jupyter_agent.workspace.access.PROTECTED_DIRS`).
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .git_redirects import GitRedirects, git_redirects
from .globs import glob_matches


@dataclass(frozen=True)
class Place:
    """A path of the home folder whose content runs later."""

    path: str
    """Relative to the home folder; a folder covers everything in it."""
    runs: str
    """What kind of program runs it (for the table's readers and the tests)."""
    why: str
    """The warning, in words a user reads on an approval card."""


def _places(runs: str, why: str, *paths: str) -> tuple[Place, ...]:
    return tuple(Place(path, runs, why) for path in paths)


HOME_PLACES: tuple[Place, ...] = (
    *_places(
        "shell",
        "your shell runs it when it starts",
        *(".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".bash_aliases"),
        *(".bash_completion", ".profile", ".shrc", ".kshrc", ".mkshrc", ".cshrc", ".tcshrc"),
        *(".login", ".logout", ".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout"),
        *(".zsh", ".oh-my-zsh", ".p10k.zsh", ".zplug", ".zinit", ".antigen", ".xonshrc"),
    ),
    *_places(
        "shell",
        "bash and other readline programs read it, and a key binding can type a command",
        ".inputrc",
    ),
    *_places(
        "login",
        "it sets the environment of your next login (PATH, LD_PRELOAD…)",
        ".pam_environment",
    ),
    *_places(
        "desktop",
        "your desktop session runs it when it starts",
        *(".xprofile", ".xinitrc", ".xsession", ".xsessionrc", ".Xclients", ".kde", ".kde4"),
    ),
    *_places(
        "settings",
        "programs read their settings here, and many run what they find there (autostart "
        "entries, systemd units, shells, editors, git, pip)",
        ".config",
    ),
    *_places(
        "desktop",
        "your desktop starts the programs its entries name when you log in",
        ".config/autostart",
    ),
    *_places(
        "desktop",
        "systemd runs the services and timers it defines for you",
        ".config/systemd",
    ),
    *_places(
        "installed",
        "programs installed for you live here, and they run: ~/.local/bin is on your PATH, "
        "Python loads ~/.local/lib at every start, editors, desktop entries and D-Bus "
        "services load from ~/.local/share",
        ".local",
    ),
    *_places("path", "programs here run in place of others on your PATH", ".local/bin", "bin"),
    *_places("python", "Python loads code from here at every start", ".local/lib"),
    *_places(
        "jupyter", "Jupyter starts kernels as its kernel specs here say", ".local/share/jupyter"
    ),
    *_places(
        "path",
        "its programs are on your PATH, or your shell start files load it",
        *(".cargo", ".rustup", "go/bin", ".nvm", ".pyenv", ".rbenv", ".sdkman", ".asdf"),
        *(".volta", ".deno", ".bun", ".juliaup"),
    ),
    *_places(
        "editor",
        "your editor runs it (or the plugins in it) when it starts",
        *(".vimrc", ".gvimrc", ".exrc", ".vim", ".ideavimrc", ".emacs", ".emacs.el"),
        *(".emacs.d", ".doom.d", ".spacemacs", ".atom", ".vscode", ".vscode-oss"),
        *(".vscode-server", ".vscode-server-insiders", ".cursor", ".cursor-server"),
        *(".windsurf", ".windsurf-server"),
    ),
    *_places(
        "terminal",
        "your terminal multiplexer or terminal runs it when it starts",
        *(".tmux.conf", ".tmux", ".screenrc", ".byobu", ".wezterm.lua"),
    ),
    *_places(
        "ssh",
        "ssh runs the commands its configuration names, and authorized_keys lets others in",
        ".ssh",
    ),
    *_places(
        "python",
        "Python or its installers run it (a startup file, build settings, an index to "
        "install from)",
        *(".pythonrc", ".pythonrc.py", ".pystartup", ".pydistutils.cfg", ".pip", ".condarc"),
        ".conda",
    ),
    *_places(
        "jupyter",
        "IPython runs its startup files and configuration at every start",
        ".ipython",
    ),
    *_places("jupyter", "Jupyter runs its configuration files at every start", ".jupyter"),
    *_places(
        "packages",
        "a package manager or build tool reads it, and it can make it run commands",
        *(".npmrc", ".yarnrc", ".yarnrc.yml", ".bunfig.toml", ".gemrc", ".bundle", ".gradle"),
        *(".m2", ".sbt", ".ivy2", ".R", ".Renviron"),
    ),
    *_places("languages", "R runs it when it starts", ".Rprofile"),
    *_places("languages", "Julia runs its startup file and packages", ".julia"),
    *_places(
        "credentials",
        "the tool reads it, and it can make the tool run a command (credential_process, "
        "exec plugins, credential helpers)",
        *(".aws", ".kube", ".docker", ".gnupg"),
    ),
    *_places("tools", "programs run the commands it lists to open files", ".mailcap"),
    *_places("tools", "less runs it to show files", ".lessfilter"),
    *_places(
        "git",
        "pre-commit runs the hook repositories kept here at your next commit",
        ".cache/pre-commit",
    ),
    *_places("git", "git reads it, and it can make git run commands", ".gitconfig"),
    *_places(
        "git", "git reads its configuration here, and it can make git run commands", ".config/git"
    ),
    *_places(
        "agent",
        "the agent's own settings are here: a change could turn its sandbox and rules off",
        ".jupyter_agent",
    ),
)
"""Paths of the home folder that run code later, with what runs them and why (they matter
when a folder commands may write holds the home folder)."""

USER_LEVEL = (".jupyter_agent", ".gitconfig", ".config/git")
"""Places of :data:`HOME_PLACES` kept read-only in the sandbox whatever the workspace is (when
a writable folder holds them without holding the home folder itself)."""

ENVIRONMENT_PLACES: dict[str, str] = {
    "PYTHONSTARTUP": "Python runs it when an interactive session starts (PYTHONSTARTUP)",
    "PYTHONUSERBASE": "Python loads code from here at every start (PYTHONUSERBASE)",
    "ZDOTDIR": "zsh runs its start files from here (ZDOTDIR)",
    "IPYTHONDIR": "IPython runs its startup files and configuration from here (IPYTHONDIR)",
    "JUPYTER_CONFIG_DIR": "Jupyter runs its configuration files from here (JUPYTER_CONFIG_DIR)",
    "XDG_CONFIG_HOME": "programs read their settings here, and many run what they find there "
    "(XDG_CONFIG_HOME)",
}
"""Environment variables naming a file or folder that runs code later, wherever it is."""

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

_MADE_FOLDERS = (".ipython", ".jupyter", ".config", ".local/bin", ".local/lib", ".cache")
"""Home folders created empty before a command (harmless when empty): the sandbox then
mounts them, or what it protects inside them, rather than block a missing one with an
empty file, which would keep programs from using it (``.cache`` holds ``.cache/pre-commit``;
blocking a missing ``.cache`` would refuse every cache)."""


RECENT_SECONDS = 5.0
_RECENT: dict[tuple[tuple[Path, ...], Path], tuple[float, GitRedirects]] = {}


class Autorun:
    """Where, for one workspace and the folders its commands may write, code may be
    planted to run later."""

    def __init__(self, workspace: Path, writable: Sequence[Path] = ()) -> None:
        self.workspace = workspace
        """The workspace, resolved."""
        self.roots = tuple(dict.fromkeys([workspace, *writable]))
        """The folders commands may write (resolved), the workspace first."""
        self.home = Path(os.path.realpath(os.path.expanduser("~")))
        self.home_exposed = any(_inside(self.home, root) for root in self.roots)
        """Whether a folder commands may write holds the home folder: :data:`HOME_PLACES`
        then apply."""

    @functools.cached_property
    def git(self) -> GitRedirects:
        """Git's redirects in these folders, found now (for the sandbox: a walk per launch)."""
        found = git_redirects(self.roots, self.home)
        if len(_RECENT) > 16:
            _RECENT.clear()
        _RECENT[(self.roots, self.home)] = (time.monotonic(), found)
        return found

    @functools.cached_property
    def _recent_git(self) -> GitRedirects:
        """Git's redirects as found at most :data:`RECENT_SECONDS` ago, for the write checks
        that run before each call (the launch then looks again): only the user can change
        what they name meanwhile, since commands cannot write git's configuration."""
        cached = _RECENT.get((self.roots, self.home))
        if cached is not None and time.monotonic() - cached[0] <= RECENT_SECONDS:
            return cached[1]
        return self.git

    def reason(self, path: Path | str) -> str | None:
        """Why writing ``path`` (an absolute, resolved path) makes code run later, if it does."""
        path = Path(path)
        for hooks, why in self._recent_git.hooks.items():
            if _inside(path, hooks):
                return why
        config = self._recent_git.configs.get(path)
        if config is not None:
            return f"git reads it as configuration ({config}), and it can make git run commands"
        for place, why in self._environment_places:
            if _inside(path, place):
                return why
        if _inside(path, self.home):
            rel = path.relative_to(self.home).as_posix()
            found = _home_place(rel, user_level_only=not self.home_exposed)
            if found is not None:
                return found.why
        if _inside(path, self.workspace):
            parts = list(path.relative_to(self.workspace).parts)
            for pattern, why in ANY_DEPTH.items():
                if glob_matches(pattern, parts):
                    return why
        return None

    def spread_reason(self, folder: Path | str) -> str | None:
        """Why writing files named only at run time (by an archive, a patch, a tree copied
        whole) into ``folder`` may plant code that runs later: the folder is such a place,
        or holds some of the home folder's."""
        folder = Path(folder)
        why = self.reason(folder)
        if why is not None or not self.home_exposed:
            return why
        below = [p for p in HOME_PLACES if _inside(self.home / p.path, folder)]
        if not below:
            return None
        shown = ", ".join(p.path for p in below[:5]) + (", …" if len(below) > 5 else "")
        return (
            "the names of the files it writes are known only when it runs, and that folder "
            f"holds your home folder's files that run code later ({shown})"
        )

    def protected(self) -> list[Path]:
        """What the OS sandbox keeps read-only for commands (those outside the writable
        folders are read-only anyway): git's redirects, the agent's own folder, the user's
        git and agent folders, the places environment variables name, the home folder's
        code-running places when it is exposed, and the run-later files at the workspace's
        top (deeper ones are left to the write checks)."""
        ws = self.workspace
        paths = [ws / ".jupyter_agent", *self.git.paths]
        for place in ANY_DEPTH:
            if "*" not in place and os.path.lexists(ws / place):
                paths.append(ws / place)
        paths.extend(self.home / rel for rel in USER_LEVEL)
        paths.extend(place for place, _ in self._environment_places)
        if self.home_exposed:
            paths.extend(self.home / p.path for p in HOME_PLACES)
        return list(dict.fromkeys(paths))

    def fills(self) -> dict[Path, bytes]:
        """Missing protected paths that must read as this content in the sandbox (a missing
        ``commondir`` must stay missing to git, and an empty one is an error)."""
        return dict(self.git.fills)

    def prepare(self) -> None:
        """Create the empty folders :meth:`protected` keeps read-only, so the sandbox can
        mount them rather than leave an empty file where a folder belongs."""
        folders = [self.workspace / ".jupyter_agent"]
        git = self.workspace / ".git"
        if git.is_dir() and not git.is_symlink():
            folders.append(git / "hooks")
        if self.home_exposed:
            folders.extend(self.home / place for place in _MADE_FOLDERS)
        for folder in folders:
            if not os.path.lexists(folder):
                try:
                    # path gate: empty folders inside the workspace, before a command runs
                    folder.mkdir(parents=True)
                except OSError:
                    pass

    @functools.cached_property
    def _environment_places(self) -> list[tuple[Path, str]]:
        places = []
        xdg = os.environ.get("XDG_CONFIG_HOME")
        if xdg and os.path.isabs(xdg):
            places.append(
                (
                    Path(xdg) / "git",
                    "git reads its configuration here, and it can make git run "
                    "commands (XDG_CONFIG_HOME)",
                )
            )
        for variable, why in ENVIRONMENT_PLACES.items():
            value = os.environ.get(variable)
            if value and os.path.isabs(os.path.expanduser(value)):
                places.append((Path(os.path.realpath(os.path.expanduser(value))), why))
        return places


def _home_place(rel: str, *, user_level_only: bool) -> Place | None:
    """The most specific place of the home table that holds ``rel``."""
    best: Place | None = None
    for place in HOME_PLACES:
        if user_level_only and place.path not in USER_LEVEL:
            continue
        if (rel == place.path or rel.startswith(place.path + "/")) and (
            best is None or len(place.path) > len(best.path)
        ):
            best = place
    return best


def autorun_for(workspace: Path | str, writable: Iterable[Path | str] = ()) -> Autorun:
    """The :class:`Autorun` places of a workspace whose commands may also write
    ``writable`` (the OS sandbox's extra folders)."""
    ws = Path(os.path.realpath(workspace))
    roots = [Path(os.path.realpath(os.path.expanduser(os.fspath(w)))) for w in writable]
    return Autorun(ws, roots)


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents
