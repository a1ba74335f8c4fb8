"""Where git can be redirected: the files that make git read another configuration, run
other hooks or use other objects, in and around the repositories of a workspace.

Git does not read only ``.git/config`` and ``.git/hooks``. It follows ``.git/commondir``, a
``.git`` *file* (``gitdir: …``: linked worktrees, submodules), ``worktrees/*/{gitdir,
commondir}``, ``objects/info/alternates``, ``config.worktree``, ``info/`` (its attributes pick
the filter and diff drivers git runs), ``[include]``/``[includeIf]`` paths,
``core.hooksPath`` and ``init.templateDir`` (its hooks are copied into every new
repository). :func:`git_redirects` lists them for every repository found in the given
folders (at any depth, within a bound), for the repository that holds the workspace, and for
the user's own git configuration, so that the OS sandbox keeps them read-only for commands
and the write checks ask about the configuration files among them.

Invariants:

- Nothing here runs git on a repository. A configuration file is read by us (a regular file
  only, opened without blocking: a planted FIFO is skipped) and parsed by ``git config
  --no-includes --file -`` from its standard input, outside any repository; a plain scan of
  the text adds any ``path``/``hooksPath`` value git's parser might read differently, so a
  crafted file can hide nothing (it can only make more files read-only).
- The walk is bounded: breadth first (shallow repositories first), at most
  :data:`WALK_ENTRIES` folder entries and :data:`WALK_DEPTH` levels, never into the folders
  in :data:`NOT_WALKED` (installed packages and caches), never through a symbolic link.
  Beyond the bound, repositories are not found; :attr:`GitRedirects.complete` says so.
"""

from __future__ import annotations

import functools
import os
import re
import stat
import subprocess
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .paths import read_regular
from .stamps import settled
from .system_programs import system_program

WALK_ENTRIES = 50_000
"""Folder entries the walk for nested repositories looks at, at most (about 0.1 s)."""
WALK_DEPTH = 12
NOT_WALKED = frozenset(
    {
        "node_modules",
        "site-packages",
        "dist-packages",
        "__pycache__",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".ipynb_checkpoints",
        ".jupyter_agent",
        ".cache",
        ".local",
        ".npm",
        ".cargo",
        ".rustup",
        ".conda",
        ".julia",
        ".m2",
        ".gradle",
    }
)
"""Folders of installed packages and caches: large, and not where anyone runs git."""

GIT_FOLDER_REDIRECTS: dict[str, str] = {
    "config": "git's configuration (it can make git run commands)",
    "config.worktree": "git's per-worktree configuration",
    "commondir": "it points git at another repository's configuration and hooks",
    "hooks": "git runs the hooks in it",
    "info": "its attributes choose the filters and diff drivers git runs",
    "objects/info/alternates": "it makes git read objects from other folders",
}
"""What, in a repository's git folder, redirects git (paths relative to that folder)."""

LINKED_REDIRECTS = ("commondir", "gitdir", "config.worktree")
"""What redirects git in a linked worktree's own git folder (``.git/worktrees/<name>/``)."""

COMMONDIR_OF_ITS_OWN = b".\n"
"""A ``commondir`` that names its own folder: git behaves as without one (an empty one is an
error), so a missing ``commondir`` is kept missing by a read-only one holding this."""

_CONFIG_MAX_BYTES = 4 << 20
_MAX_CONFIGS = 256
_MAX_INCLUDE_DEPTH = 10  # git's own limit
_KEYS = r"^(include|includeif\..*)\.path$|^core\.hookspath$|^init\.templatedir$"
_SCAN = re.compile(
    r"""(?im)(?:^|[\]\s;])\s*(path|hookspath|templatedir)\s*=\s*("(?:[^"\\\n]|\\.)*"|[^\n#;]*)"""
)


@dataclass
class GitRedirects:
    """The places that redirect git, for the repositories of some folders."""

    paths: list[Path] = field(default_factory=list)
    """Keep these read-only (an existing one, or a missing one: it must not appear)."""
    fills: dict[Path, bytes] = field(default_factory=dict)
    """Missing paths that must read as this content inside the sandbox (see
    :data:`COMMONDIR_OF_ITS_OWN`)."""
    configs: dict[Path, str] = field(default_factory=dict)
    """Configuration files git reads, with who reads them (the user's git, a repository)."""
    hooks: dict[Path, str] = field(default_factory=dict)
    """Folders named by ``core.hooksPath`` (git runs its hooks from there) or
    ``init.templateDir`` (git copies it, hooks included, into every new repository), with
    whose setting it is."""
    complete: bool = True
    """False: the walk stopped at its bound and deeper repositories were not looked for."""


def git_redirects(folders: Sequence[Path], home: Path | None = None) -> GitRedirects:
    """The redirects of every repository in ``folders`` (resolved paths), of the repository
    that holds the first of them, and of the user's own git configuration."""
    found = GitRedirects()
    user_configs = _user_configs(home)
    user_hooks: list[str] = []
    for config in user_configs:
        for included, hooks in _config_tree(config):
            found.configs.setdefault(included, "your own git configuration includes it")
            user_hooks.extend(hooks)
        found.configs.setdefault(config, "it is your own git configuration")
    for value in [*user_hooks, os.environ.get("GIT_TEMPLATE_DIR", "")]:
        target = os.path.expanduser(value) if value else ""
        if os.path.isabs(target):  # the same for every repository
            found.hooks.setdefault(Path(os.path.normpath(target)), _HOOKS_WHY.format("yours"))
    repos, found.complete = _repositories(folders)
    if folders:
        above = _enclosing_repository(folders[0])
        if above is not None:
            repos.insert(0, above)
    seen: set[Path] = set()
    for top, git in repos:
        _add_repository(found, top, git, user_hooks, seen)
    found.paths.extend(found.configs)
    found.paths.extend(found.hooks)
    found.paths = list(dict.fromkeys(found.paths))
    return found


def _add_repository(
    found: GitRedirects, top: Path, git: Path, user_hooks: list[str], seen: set[Path]
) -> None:
    """One repository: its ``.git`` entry, its git folder(s) and what they name."""
    if not os.path.isdir(git) or os.path.islink(git):
        found.paths.append(git)  # a .git file or link stays as it is (a folder cannot move:
        # the read-only paths inside it are mounts)
    gitdir = _gitdir_of(git)
    if gitdir is None:
        return
    hook_values = list(user_hooks)
    for folder in _git_folders(gitdir):
        if folder in seen:
            continue
        seen.add(folder)
        linked = os.path.lexists(folder / "gitdir")
        for name in LINKED_REDIRECTS if linked else GIT_FOLDER_REDIRECTS:
            found.paths.append(folder / name)
        if not linked and not os.path.lexists(folder / "commondir"):
            found.fills[folder / "commondir"] = COMMONDIR_OF_ITS_OWN
        for config in (folder / "config", folder / "config.worktree"):
            shown = f"the git configuration of {top.name or top}"
            for included, hooks in _config_tree(config):
                if included != config:
                    found.configs.setdefault(included, f"{shown} includes it")
                hook_values.extend(hooks)
    for value in hook_values:
        target = Path(os.path.expanduser(value))
        if not target.is_absolute():
            target = top / target  # git runs hooks from the top of the worktree
        found.hooks.setdefault(
            Path(os.path.normpath(target)), _HOOKS_WHY.format(f"of {top.name or top}")
        )


_HOOKS_WHY = (
    "git runs the hooks in it, or copies them into every new repository (core.hooksPath or "
    "init.templateDir, {})"
)


def _git_folders(gitdir: Path) -> list[Path]:
    """A repository's git folder, the common one it names, its linked worktrees' folders
    and its submodules' (at any depth)."""
    folders = [gitdir]
    common = _read_pointer(gitdir / "commondir", gitdir)
    if common is not None and common != gitdir:
        folders.append(common)
    todo = list(folders)
    while todo and len(folders) < 1000:
        folder = todo.pop()
        for sub in ("worktrees", "modules"):
            for entry in _subfolders(folder / sub):
                if sub == "worktrees":
                    folders.append(entry)
                    continue
                # modules/<name>/ is a git folder when it holds HEAD; else a/b/ nesting
                if os.path.lexists(entry / "HEAD"):
                    folders.append(entry)
                    todo.append(entry)
                else:
                    todo.append(entry.parent / entry.name)  # a folder of a nested name
                    for deeper in _subfolders(entry):
                        if os.path.lexists(deeper / "HEAD"):
                            folders.append(deeper)
                            todo.append(deeper)
    return list(dict.fromkeys(folders))


def _subfolders(folder: Path) -> list[Path]:
    try:
        with os.scandir(folder) as it:
            return [Path(e.path) for e in it if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []


def _gitdir_of(git: Path) -> Path | None:
    """The git folder a ``.git`` entry stands for (through a ``gitdir:`` file or a link)."""
    try:
        mode = os.lstat(git).st_mode
    except OSError:
        return None
    if stat.S_ISLNK(mode) or stat.S_ISDIR(mode):
        real = Path(os.path.realpath(git))
        return real if real.is_dir() else None
    if stat.S_ISREG(mode):
        text = _read_small(git)
        if text is None or not text.startswith(b"gitdir:"):
            return None
        value = text[len(b"gitdir:") :].strip().decode("utf-8", "replace")
        return Path(os.path.realpath(git.parent / value)) if value else None
    return None


def _read_pointer(path: Path, folder: Path) -> Path | None:
    text = _read_small(path)
    if text is None:
        return None
    value = text.strip().decode("utf-8", "replace")
    return Path(os.path.realpath(folder / value)) if value else None


def _repositories(folders: Sequence[Path]) -> tuple[list[tuple[Path, Path]], bool]:
    """(worktree top, its ``.git`` entry) for every repository in ``folders``, breadth first,
    within the bound; and whether the walk was complete."""
    found: list[tuple[Path, Path]] = []
    queue: deque[tuple[str, int]] = deque((os.fspath(f), 0) for f in folders)
    budget = WALK_ENTRIES
    visited: set[str] = set()
    while queue:
        folder, depth = queue.popleft()
        if folder in visited:
            continue
        visited.add(folder)
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError:
            continue
        budget -= len(entries)
        if budget < 0:
            return found, False
        for entry in entries:
            if entry.name == ".git":
                found.append((Path(folder), Path(entry.path)))
            elif (
                depth < WALK_DEPTH
                and entry.name not in NOT_WALKED
                and entry.is_dir(follow_symlinks=False)
            ):
                queue.append((entry.path, depth + 1))
    return found, True


def _enclosing_repository(folder: Path) -> tuple[Path, Path] | None:
    """The repository git finds from above ``folder`` (it may name files inside it)."""
    for parent in Path(folder).parents:
        git = parent / ".git"
        if os.path.lexists(git):
            return parent, git
    return None


def _user_configs(home: Path | None) -> list[Path]:
    """The user's and the system's git configuration files (as git finds them)."""
    home = home or Path(os.path.expanduser("~"))
    xdg = os.environ.get("XDG_CONFIG_HOME") or str(home / ".config")
    files = [home / ".gitconfig", Path(xdg) / "git" / "config", Path("/etc/gitconfig")]
    for variable in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM"):
        if value := os.environ.get(variable):
            files.append(Path(value))
    return [Path(os.path.abspath(f)) for f in dict.fromkeys(files)]


def _config_tree(config: Path) -> list[tuple[Path, list[str]]]:
    """``config`` and every file it includes (recursively, as far as git goes), each with
    the ``core.hooksPath`` and ``init.templateDir`` values it holds."""
    out: list[tuple[Path, list[str]]] = []
    todo = [(Path(os.path.abspath(config)), 0)]
    seen: set[Path] = set()
    while todo and len(seen) < _MAX_CONFIGS:
        path, depth = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        includes, hooks = _config_values(path)
        out.append((path, hooks))
        if depth >= _MAX_INCLUDE_DEPTH:
            continue
        for value in includes:
            todo.extend((target, depth + 1) for target in _include_targets(value, path))
    return out


def _include_targets(value: str, config: Path) -> list[Path]:
    """Where git looks for an included file: relative to the including file's folder as git
    opened it (and, to be safe, as it resolves through links)."""
    if not value or value.startswith("%(prefix)/"):
        return []
    expanded = os.path.expanduser(value)
    if os.path.isabs(expanded):
        return [Path(os.path.normpath(expanded))]
    folders = {os.path.dirname(os.path.abspath(config)), os.path.dirname(os.path.realpath(config))}
    return [Path(os.path.normpath(os.path.join(f, expanded))) for f in sorted(folders)]


def _config_values(path: Path) -> tuple[list[str], list[str]]:
    """(include paths, hooksPath and templateDir values) of one configuration file; none if
    unreadable."""
    try:
        info = os.stat(path)
    except OSError:
        return [], []
    if not stat.S_ISREG(info.st_mode):
        return [], []
    if not settled(info):  # a rewrite now could keep this status: read it as it is
        return _parse(str(path))
    return _parsed(str(path), info.st_ino, info.st_mtime_ns, info.st_ctime_ns, info.st_size)


@functools.lru_cache(maxsize=512)
def _parsed(
    path: str, inode: int, mtime: int, ctime: int, size: int
) -> tuple[list[str], list[str]]:
    """:func:`_parse`, remembered by the file's status (settled: the caller checks)."""
    return _parse(path)


def _parse(path: str) -> tuple[list[str], list[str]]:
    data = _read_small(Path(path), _CONFIG_MAX_BYTES)
    if data is None:
        return [], []
    includes: list[str] = []
    hooks: list[str] = []
    for key, value in _git_parse(data):
        (includes if key.endswith(".path") else hooks).append(value)
    for match in _SCAN.finditer(data.decode("utf-8", "replace")):
        value = match.group(2).strip()
        if value.startswith('"') and value.endswith('"') and len(value) >= 2:
            value = value[1:-1].replace('\\"', '"').replace("\\\\", "\\")
        (includes if match.group(1).lower() == "path" else hooks).append(value)
    return list(dict.fromkeys(includes)), list(dict.fromkeys(hooks))


def _git_parse(data: bytes) -> Iterable[tuple[str, str]]:
    """(key, value) of the include paths, hooksPath and templateDir, as git reads them."""
    git = system_program("git")
    if git is None:
        return []
    try:
        done = subprocess.run(
            [git, "config", "--no-includes", "--file", "-", "--null", "--get-regexp", _KEYS],
            input=data,
            capture_output=True,
            cwd="/",
            env={
                "PATH": "/usr/bin:/bin",
                "GIT_CONFIG_NOSYSTEM": "1",
                "GIT_CONFIG_GLOBAL": "/dev/null",
                "HOME": "/nonexistent",
            },
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    pairs = []
    for record in done.stdout.split(b"\0"):
        key, _, value = record.partition(b"\n")
        if key:
            pairs.append((key.decode("utf-8", "replace"), value.decode("utf-8", "replace")))
    return pairs


def _read_small(path: Path, limit: int = 65536) -> bytes | None:
    """A regular file's first ``limit`` bytes; ``None`` for anything else. Never blocks
    (through the path gate: git's own files, possibly through the user's dotfile links)."""
    try:
        return read_regular(path, limit)[0]
    except OSError:
        return None
