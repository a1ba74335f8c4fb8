"""What no rule may decide about a command line: refusals, and warnings that make it ask.

The permission rules judge programs; these checks judge *paths*, with the same
workspace rules as the file tools:

- a write (a redirection, or an operand of ``cp``, ``rm``, ``tee``, ``git config``…) outside
  the workspace, into ``.git/`` or ``.jupyter_agent/``, or to a secret file is refused;
- a write to a path that makes code run later (a git hook, ``.bashrc``, an IPython
  startup file, a file git's configuration includes) asks, with a warning, and so does a
  write of files named only by the command's input (``tar -x``, ``unzip``, ``git apply``)
  into a folder that holds such paths (:mod:`jupyter_agent.workspace.autorun`);
- a write to a path only known at run time asks;
- a word, a redirection or a glob that reaches a sensitive location (an agent credentials
  file, another user's dot-files, ``~/.ssh``…: :mod:`jupyter_agent.workspace.reach`) asks,
  with a warning naming it, whatever rule allowed the program; a redirection that reads
  one is refused;
- running a workspace file (a script, a Makefile, the tests) that changed during the
  session asks again, whatever rule allowed the command before;
- anything the parser did not fully understand asks.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Sequence
from pathlib import Path

from ..errors import ToolError
from ..permissions import Hazard
from ..workspace.access import Sensitive, WorkspaceAccess
from ..workspace.autorun import autorun_for
from ..workspace.paths import read_regular
from ..workspace.provenance import WrittenFiles
from ..workspace.reach import reach_of
from .analysis import CommandLine, PathUse, Word

HARMLESS_TARGETS = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/")


def command_hazards(
    line: CommandLine,
    *,
    cwd: Path,
    sandbox: WorkspaceAccess,
    written: WrittenFiles | None = None,
    scratch: Sequence[Path] = (),
    writable: Sequence[Path] = (),
    path_env: str | None = None,
) -> list[Hazard]:
    """The refusals and warnings for ``line`` run in ``cwd``. ``scratch``: folders outside
    the workspace that commands may write (the sandbox's private /tmp, extra writable
    folders); ``writable``: the extra writable folders among them (real folders of the
    host, where code-running files may lie); ``path_env``: the PATH the command gets."""
    hazards = [Hazard("ask", _sentence(p)) for p in line.problems]
    autorun = autorun_for(sandbox.root, writable)
    scratch = [*scratch, *writable]
    for use in line.writes():
        for path in _places(use, cwd, hazards, "writes to"):
            if _harmless(path):
                continue
            if _scratch(path, sandbox.root, scratch):
                real = Path(os.path.realpath(path))
                shown = str(path)
            else:
                try:
                    real = sandbox.resolve(str(path), for_write=True)
                except ToolError as exc:
                    hazards.append(Hazard("refuse", f"`{_short(use.source)}`: {exc}"))
                    continue
                shown = sandbox.relative(real)
            why = autorun.reason(real)
            if why:
                hazards.append(
                    Hazard(
                        "ask",
                        f"`{_short(use.source)}` writes {shown}, and {why}.",
                        rememberable=False,
                    )
                )
    for source, folder in _spread_folders(line, cwd):
        why = autorun.spread_reason(Path(os.path.realpath(folder)))
        if why:
            hazards.append(
                Hazard(
                    "ask",
                    f"`{_short(source)}` writes files into {folder}, and {why}.",
                    rememberable=False,
                )
            )
    for use in line.reads():
        for path in _places(use, cwd, [], "reads"):
            reason = sandbox.read_refusal(path)
            if reason:
                hazards.append(Hazard("refuse", f"`{_short(use.source)}`: {reason}"))
    refused = {h.reason for h in hazards if h.action == "refuse"}
    for source, places in sensitive_reach(line, cwd, sandbox).items():
        if any(r.startswith(f"`{_short(source)}`:") for r in refused):
            continue  # refused already (a redirection that reads it)
        hazards.extend(
            Hazard(
                "ask",
                f"`{_short(source)}` reaches {p.place}, a sensitive location ({p.why}).",
                rememberable=False,
            )
            for p in places
        )
    if written is not None:
        hazards.extend(_changed_code(line, cwd, sandbox, written, path_env))
    hazards.extend(_foreign_git(line, cwd, sandbox))
    return list(dict.fromkeys(hazards))


MAX_WORDS = 2000
"""Words of one line checked for the sensitive locations they reach (the rest ask)."""


def sensitive_reach(
    line: CommandLine, cwd: Path, sandbox: WorkspaceAccess
) -> dict[str, list[Sensitive]]:
    """The sensitive locations each piece of ``line`` (a program's simple command, a
    redirection; as written) may reach through its words: operands, option values, code
    given inline, globs, in every folder it may run in."""
    found: dict[str, dict[Sensitive, None]] = {}
    words: list[tuple[str, Word, frozenset[str | None]]] = []
    for inv in line.invocations:
        words.extend((inv.text, w, inv.cwds) for w in inv.words)
        words.extend((inv.text, a.value, inv.cwds) for a in inv.assignments)
    words.extend((r.text, r.target, r.cwds) for r in line.redirects)
    for source, word, cwds in words[:MAX_WORDS]:
        folders = [
            os.path.normpath(os.path.join(cwd, os.path.expanduser(c) if c[:1] == "~" else c))
            for c in cwds
            if c is not None
        ]
        for place in reach_of(
            word.value, raw=word.text, folders=folders, access=sandbox, glob=word.glob
        ):
            found.setdefault(source, {}).setdefault(place)
    if len(words) > MAX_WORDS:
        found.setdefault(line.text, {}).setdefault(TOO_MANY)
    return {source: list(places) for source, places in found.items()}


TOO_MANY = Sensitive("more words than are checked", "one of them may name another user's dot-files")


def _places(use: PathUse, cwd: Path, hazards: list[Hazard], verb: str) -> list[Path]:
    """The absolute paths ``use`` may name (one per folder it may run in)."""
    target = use.target
    if not target.static or target.value is None:
        hazards.append(
            Hazard("ask", f"`{_short(use.source)}` {verb} a path only known at run time.")
        )
        return []
    value = os.path.expanduser(target.value) if target.value.startswith("~") else target.value
    if os.path.isabs(value):
        return [Path(os.path.normpath(value))]
    places: list[Path] = []
    for folder in sorted(use.cwds, key=lambda c: (c is None, c or "")):
        if folder is None:
            hazards.append(
                Hazard(
                    "ask",
                    f"`{_short(use.source)}` {verb} {value} in a folder only known at run time.",
                )
            )
            continue
        base = os.path.expanduser(folder) if folder.startswith("~") else folder
        places.append(Path(os.path.normpath(os.path.join(cwd, base, value))))
    return places


def _spread_folders(line: CommandLine, cwd: Path) -> list[tuple[str, Path]]:
    """(the command, a folder) where a program writes files only its input names; a patch
    git applies lands at the top of the repository."""
    found: list[tuple[str, Path]] = []
    for inv in line.invocations:
        for word in inv.effect.spreads:
            for path in _places(PathUse(word, inv.cwds, inv.text), cwd, [], "writes to"):
                if inv.program == "git":
                    path = _worktree_top(path)
                found.append((inv.text, path))
    return found


def _worktree_top(folder: Path) -> Path:
    for candidate in (folder, *folder.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return folder


TEST_SET_UP = ("conftest.py", "pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini")
"""What pytest loads from the folders between the workspace's top and the tests it runs."""


class _ChangedCode:
    """The hazards found so far, each path reported once."""

    def __init__(self, sandbox: WorkspaceAccess, written: WrittenFiles) -> None:
        self.sandbox = sandbox
        self.written = written
        self.hazards: list[Hazard] = []
        self.reported: set[str] = set()

    def ask(self, source: str, what: str, paths: list[str]) -> None:
        shown = ", ".join(self.sandbox.relative(p) for p in paths[:5])
        more = f" and {len(paths) - 5} more" if len(paths) > 5 else ""
        self.hazards.append(
            Hazard(
                "ask",
                f"`{_short(source)}` runs {what}, changed during this session: {shown}{more}.",
                tuple(paths),
            )
        )
        self.reported.update(paths)

    def in_workspace(self, path: Path) -> bool:
        return _inside(path, self.sandbox.root) or _inside(path, self.sandbox.given_root)

    def script(self, use: PathUse, path: Path) -> None:
        """A file the line runs: asked about when it changed."""
        if os.path.lexists(path) and self.written.changed(path):
            self.ask(use.source, use.what, [str(path)])

    def folder(self, use: PathUse, path: Path) -> None:
        """A folder the line runs code from (tests): any changed file under it, and the
        test set-up files pytest loads from the folders above it."""
        changed = self.written.changed_under(path)
        if changed is None:
            self.hazards.append(
                Hazard(
                    "ask",
                    f"`{_short(use.source)}` runs {use.what} in {self.sandbox.relative(path)}, "
                    "too many to check for changes.",
                )
            )
            return
        for folder in _between(self.sandbox.root, path):
            changed.extend(
                str(folder / name)
                for name in TEST_SET_UP
                if (folder / name).is_file() and self.written.changed(folder / name)
            )
        if changed:
            self.ask(use.source, use.what, list(dict.fromkeys(changed)))

    def code_runner(self, text: str) -> None:
        """A program that runs code (python -c, a REPL): what it runs may import or load
        other workspace code the agent wrote."""
        unseen = [p for p in self.written.unseen_code(self.sandbox.root) if p not in self.reported]
        if unseen:
            self.ask(text, "code that may load files the agent wrote", unseen)

    def program(self, name: str | None, text: str, path_env: str | None) -> None:
        """A program found on ``PATH`` inside the workspace that changed."""
        if not name or "/" in name:
            return
        found_at = shutil.which(name, path=path_env)
        if found_at is None:
            return
        real = Path(os.path.realpath(found_at))
        if _inside(real, self.sandbox.root) and self.written.changed(real):
            self.ask(text, f"`{name}` from the workspace", [str(real)])


def _changed_code(
    line: CommandLine,
    cwd: Path,
    sandbox: WorkspaceAccess,
    written: WrittenFiles,
    path_env: str | None,
) -> list[Hazard]:
    """Workspace code the line would run that changed during the session (and that the
    user has not approved running since)."""
    found = _ChangedCode(sandbox, written)
    for use in line.runs():
        quiet: list[Hazard] = []  # a script named only at run time is asked about already
        for path in _places(use, cwd, quiet, "runs"):
            if not found.in_workspace(path):
                continue
            if use.folder:
                found.folder(use, path)
            else:
                found.script(use, path)
    for inv in line.invocations:
        if inv.kind == "runs_code":
            found.code_runner(inv.text)
        else:
            found.program(inv.program, inv.text, path_env)
    return found.hazards


def _between(root: Path, path: Path) -> list[Path]:
    """The folders from ``root`` down to ``path`` (``path`` itself when it is a folder)."""
    real = Path(os.path.realpath(path))
    folders = [real] if real.is_dir() else []
    folders.extend(p for p in real.parents if _inside(p, root))
    return folders


_GIT_OWN_KEYS = re.compile(
    r"(core\.(repositoryformatversion|filemode|bare|logallrefupdates|ignorecase|"
    r"precomposeunicode|symlinks|autocrlf|eol|safecrlf|quotepath|longpaths|"
    r"sparsecheckout|worktree)|remote\..*\.(url|pushurl|fetch|push|tagopt|prune|mirror)|"
    r"branch\..*\.(remote|merge|rebase|pushremote|description)|user\.(name|email)|"
    r"init\.defaultbranch|extensions\.(objectformat|worktreeconfig|refstorage)|"
    r"gc\..*|pull\.(rebase|ff)|fetch\.prune|submodule\..*\.(url|active|update|branch)|"
    r"lfs\.repositoryformatversion|maintenance\..*)\Z"
)
"""Keys git writes itself (init, clone, remote, branch): none of them runs a command."""


def _foreign_git(line: CommandLine, cwd: Path, sandbox: WorkspaceAccess) -> list[Hazard]:
    """git in a repository nested in the workspace reads that repository's configuration,
    which anyone who could write there may have made run commands (core.fsmonitor runs at
    every `git status`). Only the workspace's own repository (or one above it) is the
    user's; a nested one whose configuration says more than git itself writes asks."""
    found: list[Hazard] = []
    for inv in line.invocations:
        if inv.program != "git":
            continue
        folders = [
            nxt.value
            for flag, nxt in zip(inv.words, inv.words[1:], strict=False)
            if flag.value == "-C" and nxt.static and nxt.value
        ]
        for place in _places(PathUse(Word(".", "."), inv.cwds, inv.text), cwd, [], "runs"):
            for folder in folders:
                place = Path(os.path.normpath(os.path.join(place, folder)))
            repo = _repository_of(place, sandbox.root)
            if repo is None:
                continue
            why = _untrusted_git_config(repo)
            if why:
                found.append(
                    Hazard(
                        "ask",
                        f"`{_short(inv.text)}` uses the repository "
                        f"{sandbox.relative(repo)}, whose {why}",
                    )
                )
    return found


def _repository_of(folder: Path, root: Path) -> Path | None:
    """The nested `.git` (inside the workspace, below its top) that git would use here."""
    real = Path(os.path.realpath(folder))
    for candidate in (real, *real.parents):
        if candidate == root or not _inside(candidate, root):
            return None  # the workspace's own repository, or none: the user's
        git = candidate / ".git"
        if os.path.lexists(git):
            return git
    return None


def _untrusted_git_config(git: Path) -> str:
    if git.is_file():
        return ".git file points git at another folder (its configuration may run commands)."
    try:
        data, _cut = read_regular(git / "config", 65536)  # never a FIFO planted as a config
        text = data.decode("utf-8", errors="replace")
    except OSError:
        return ""
    section = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            header = line.strip("[]").strip()
            name, _, sub = header.partition(" ")
            section = name.lower() + (("." + sub.strip('"')) if sub else "")
            continue
        key = line.split("=", 1)[0].strip().lower()
        full = f"{section}.{key}"
        if not _GIT_OWN_KEYS.match(full):
            return f"configuration sets {full}, which git may run as a command."
    return ""


def _scratch(path: Path, workspace: Path, scratch: Sequence[Path]) -> bool:
    """Whether ``path`` lies in a folder only the sandbox sees (its private /tmp), and not
    in the workspace: a workspace under /tmp is bound at its real path, over the private
    /tmp, so its files are the real ones and keep every check."""
    real = Path(os.path.realpath(path))
    if _inside(real, workspace) or _inside(path, workspace):
        return False
    return any(_inside(path, s) for s in scratch)


def _harmless(path: Path) -> bool:
    text = str(path)
    return any(text == t or (t.endswith("/") and text.startswith(t)) for t in HARMLESS_TARGETS)


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _sentence(problem: str) -> str:
    text = problem[0].upper() + problem[1:] if problem else problem
    return text if text.endswith(".") else text + "."
