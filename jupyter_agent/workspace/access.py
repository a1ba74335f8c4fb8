"""Workspace access: which paths the file and shell tools may touch.

(Called "the sandbox" before the OS sandbox of commands came, :mod:`jupyter_agent.os_sandbox`;
``Sandbox`` stays as an alias of :class:`WorkspaceAccess` for code written then.)

Every path a tool receives goes through :meth:`WorkspaceAccess.resolve`, which anchors it at the
workspace root, follows symbolic links, and refuses (with a :class:`ToolError` the model
reads) anything that leads outside the root, into a place that holds credentials, into a
file that may hold secrets, or — for writes — into git's internals or the agent's own
session store.

Workspace access decides; the path gate (:mod:`jupyter_agent.workspace.paths`) opens: the file tools
read, list and write through :attr:`WorkspaceAccess.gate`, the workspace pinned as a root beneath
which no link is followed out, so a path swapped for a link after the check cannot lead
them elsewhere.

It guards the file tools only. A shell command can reach anything its user can;
commands are guarded by the permission rules and the user's approval instead, with this
module's notion of a sensitive location (:meth:`WorkspaceAccess.sensitive_location`) as the warning
their cards carry (:mod:`jupyter_agent.workspace.reach`).

Sensitive locations are of three kinds, each refused to the file tools: the configured places
(:data:`DEFAULT_SENSITIVE`, ``~`` being the user's own home); an agent credentials file
wherever it lies (``.jupyter_agent/credentials.json``, in any home); and, on a machine whose
users share one Unix account (containers, some hub spawners), everything in another user's
home whose name starts with a dot (their settings, keys and histories).
"""

from __future__ import annotations

import difflib
import functools
import itertools
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from ..errors import ToolError
from .globs import glob_matches
from .paths import Root

DEFAULT_DENY_GLOBS: tuple[str, ...] = (
    ".env",
    ".env.*",
    ".envrc",
    ".netrc",
    ".pgpass",
    "*.pem",
    "id_rsa*",
    "id_ecdsa*",
    "id_ed25519*",
    "id_dsa*",
)
"""Files refused by default (gitignore-style, relative to the workspace root)."""

DEFAULT_SENSITIVE: tuple[str, ...] = (
    "~/.ssh",
    "~/.aws",
    "~/.gnupg",
    "~/.config/gcloud",
    "~/.kube",
    "~/.docker/config.json",
    "~/.netrc",
    "~/.pgpass",
    "~/.jupyter_agent/credentials.json",  # the model's API key, if the user saved it
    "/etc",
    "/proc",
    "/sys",
)
"""Places refused even when the workspace root lies above them (``~`` is the real home)."""

SYSTEM_PLACES = frozenset({"/etc", "/proc", "/sys"})
"""The sensitive places commands read as a matter of course (``cat /etc/os-release``)."""

HOME_PARENTS: tuple[str, ...] = ("/home", "/Users", "/var/home")
"""Folders each of whose sub-folders is someone's home (Linux, macOS, Fedora's atomic
desktops); ``/root`` and the homes the account database lists are homes too."""

AGENT_CREDENTIALS: tuple[str, str] = (".jupyter_agent", "credentials.json")
"""An agent credentials file, in whichever home (or anywhere else) it lies."""

OTHER_HOME = "another user's home folder: its dot-files hold their settings and credentials"
"""Why another home's dot-files are a sensitive location."""

MAX_ACCOUNTS = 5000
"""Accounts read from the account database (once): a directory service may list many."""

MAX_PATH_CHARS = 4096
"""Longer paths are refused before anything echoes them (Linux's own limit is 4,096 bytes)."""

SKIP_DIRS = frozenset(
    {".git", "node_modules", ".jupyter_agent", "__pycache__", ".ipynb_checkpoints"}
)
"""Folders the listing and search tools do not descend into unless asked to."""

PROTECTED_DIRS: dict[str, str] = {
    ".git": "git's internals (use git commands instead)",
    ".jupyter_agent": "the agent's own session store",
}
"""Folders the file tools never write into, at any depth."""

_DENY_REASONS: dict[str, str] = {
    ".env": ".env files may hold secrets",
    ".env.*": ".env files may hold secrets",
    "*.pem": ".pem files may hold private keys",
    ".envrc": ".envrc files set environment variables, secrets among them",
    ".netrc": ".netrc files hold passwords",
    ".pgpass": ".pgpass files hold database passwords",
    "id_rsa*": "SSH key files are private",
    "id_ecdsa*": "SSH key files are private",
    "id_ed25519*": "SSH key files are private",
    "id_dsa*": "SSH key files are private",
}


def _check_given(path: object) -> None:
    """Refuse what is no path at all: not a string, too long, or holding a NUL byte."""
    if not isinstance(path, str):
        raise ToolError(f"The path must be a string, got {type(path).__name__}.")
    if len(path) > MAX_PATH_CHARS:
        raise ToolError(
            f"Refused a path of {len(path):,} characters ({path[:80]!r}…): paths are at "
            f"most {MAX_PATH_CHARS:,} characters."
        )
    if "\0" in path:
        raise ToolError(f"Refused {path!r}: the path contains a NUL byte.")


@dataclass(frozen=True)
class Sensitive:
    """A sensitive location a path lies in (or reaches), as a card or a refusal names it."""

    place: str
    """The location: ``~/.ssh``, ``/home/bob/.jupyter_agent/credentials.json``."""
    why: str
    """What it holds, in a few words."""


class WorkspaceAccess:
    """Resolves the paths tools are given and refuses the ones they must not touch."""

    def __init__(
        self,
        root: Path | str,
        *,
        deny_globs: Iterable[str] = DEFAULT_DENY_GLOBS,
        sensitive: Iterable[str] = DEFAULT_SENSITIVE,
    ) -> None:
        self.given_root = Path(os.path.abspath(os.fspath(root)))
        self.root = Path(os.path.realpath(self.given_root))
        self.deny_globs: tuple[str, ...] = tuple(deny_globs)
        """Gitignore-style patterns for files that are refused (a pattern without a slash
        matches a name at any depth; a folder that matches refuses all it holds)."""
        self.sensitive: tuple[str, ...] = tuple(sensitive)
        self._sensitive = _expand_sensitive(self.sensitive)
        # The sensitive places a walk of the root can meet (usually none).
        self._sensitive_below = [
            (shown, [p for p in places if _inside(p, self.root)])
            for shown, places in self._sensitive
            if any(_inside(p, self.root) for p in places)
        ]
        # Homes that are the user's: their own, and any that holds the workspace (the user
        # chose to work there); another home's dot-files are sensitive.
        self.own_homes = _own_homes(self.root, self.given_root)
        self.missing_note = ""
        """Said after "x does not exist" when the workspace is not where the user's files
        are (a remote kernel's folder: not the Jupyter server's)."""

    def __repr__(self) -> str:
        return f"WorkspaceAccess({str(self.root)!r})"

    @functools.cached_property
    def gate(self) -> Root:
        """The workspace in the path gate, pinned from its first use on: the file tools
        open, list and write through it (see :mod:`jupyter_agent.workspace.paths`)."""
        return Root(self.root)

    def open_file(self, real: Path | str) -> BinaryIO:
        """The regular file ``real`` (resolved by :meth:`resolve`), open for reading through
        the gate: a FIFO, a device or a link swapped in since the check is refused."""
        return os.fdopen(self.gate.open_file(real), "rb")

    # --- resolving ---------------------------------------------------------------

    def resolve(
        self,
        path: str,
        *,
        must_exist: bool = False,
        for_write: bool = False,
        follow_symlinks: bool = True,
    ) -> Path:
        """The canonical absolute path for ``path``, or :class:`ToolError` saying why not.

        ``path`` is relative to the workspace root, or absolute inside it. With
        ``follow_symlinks=False`` a final symbolic link is itself the result (for
        operations on the link: deleting it, describing it); its folder is still
        canonicalised and checked.
        """
        _check_given(path)
        expanded = os.path.expanduser(path) if path.startswith("~") else path
        expanded = expanded or "."
        joined = os.path.join(self.root, expanded)  # an absolute `expanded` wins
        lexical = Path(os.path.normpath(joined))
        try:
            if follow_symlinks:
                real = Path(os.path.realpath(joined))
            else:
                folder = Path(os.path.realpath(lexical.parent))
                real = folder / lexical.name if lexical.name else folder
        except OSError:  # a link removed while it was being followed
            raise ToolError(f"Refused {path!r}: it changed while it was being checked.") from None
        for candidate in (lexical, real):
            found = self.sensitive_location(candidate)
            if found is not None:
                raise ToolError(
                    f"Refused {path!r}: {found.place} is a sensitive location ({found.why}) "
                    "that the agent may never touch."
                )
        if not _inside(real, self.root):
            raise ToolError(self._outside_message(path, expanded, lexical, real))
        self._check_allowed(path, [lexical, real], for_write=for_write)
        if must_exist and not os.path.lexists(real):
            raise ToolError(self.missing_message(path, real))
        return real

    def _outside_message(self, path: str, expanded: str, lexical: Path, real: Path) -> str:
        """Why ``path``, which resolved to ``real`` outside the workspace, is refused."""
        if os.path.isabs(expanded):
            if not (_inside(lexical, self.root) or _inside(lexical, self.given_root)):
                return (
                    f"Refused {path!r}: it is outside the workspace ({self.root}); "
                    "use a path inside it, preferably relative to it."
                )
        elif os.path.normpath(expanded).split(os.sep)[0] == os.pardir:
            return f"Refused {path!r}: '..' leads outside the workspace ({self.root})."
        return f"Refused {path!r}: a symbolic link leads outside the workspace (to {real})."

    def _check_allowed(self, path: str, places: list[Path], *, for_write: bool) -> None:
        """Raise :class:`ToolError` when a deny pattern matches any of ``places`` (the path
        as written and as resolved), or, for a write, when one lies in a protected folder."""
        rel_parts = [_rel_parts(place, self.root) for place in places]
        for parts in rel_parts:
            reason = None if parts is None else self.deny_reason(parts, is_dir=None)
            if reason is not None:
                raise ToolError(f"Refused {path!r}: {reason}.")
        if not for_write:
            return
        for parts in rel_parts:
            for part in parts or ():
                if part in PROTECTED_DIRS:
                    raise ToolError(
                        f"Refused {path!r}: the agent may not write inside {part}/, "
                        f"{PROTECTED_DIRS[part]}."
                    )

    def relative(self, path: Path | str) -> str:
        """``path`` relative to the workspace root, with forward slashes (``.`` for the root)."""
        p = Path(os.path.abspath(os.fspath(path)))
        for base in (self.root, self.given_root):
            if _inside(p, base):
                rel = p.relative_to(base).as_posix()
                return rel or "."
        return str(p)

    # --- checks used by the tools that walk folders ----------------------------------

    def deny_reason(self, parts: Iterable[str] | str, *, is_dir: bool | None = None) -> str | None:
        """Why the path (parts relative to the root) matches a deny glob, or ``None``."""
        if isinstance(parts, str):
            parts = [p for p in parts.replace(os.sep, "/").split("/") if p and p != "."]
        parts = list(parts)
        for pattern in self.deny_globs:
            if glob_matches(pattern, parts, is_dir):
                why = _DENY_REASONS.get(pattern)
                if why is not None and pattern in DEFAULT_DENY_GLOBS:
                    return f"{why} (a default rule; change WorkspaceAccess.deny_globs to allow)"
                return f"it matches the deny rule {pattern!r} (WorkspaceAccess.deny_globs)"
        return None

    def read_refusal(self, path: Path | str) -> str | None:
        """Why reading ``path`` (absolute, or relative to the root) would leak a secret: a
        sensitive place or a deny glob. ``None`` otherwise, even outside the workspace:
        commands may read there."""
        joined = os.path.join(self.root, os.fspath(path))
        for candidate in (Path(os.path.normpath(joined)), Path(os.path.realpath(joined))):
            place = self._sensitive_place(candidate)
            if place is not None and place not in ("/etc", "/sys"):  # readable system files
                return f"{place} is a sensitive location (credentials or process data)."
            found = self.personal(candidate)
            if found is not None:
                return f"{found.place} is a sensitive location ({found.why})."
            parts = _rel_parts(candidate, self.root)
            if parts is not None:
                reason = self.deny_reason(parts)
                if reason is not None:
                    return f"{reason}."
        return None

    def allows(self, path: Path) -> bool:
        """Whether a path met while walking a folder may be read (no error, just yes/no)."""
        real = Path(os.path.realpath(path)) if os.path.islink(path) else Path(path)
        if not _inside(real, self.root):
            return False
        for _shown, places in self._sensitive_below:
            if any(_inside(real, p) or _inside(path, p) for p in places):
                return False
        if self.personal(path) is not None or self.personal(real) is not None:
            return False
        for p in (Path(path), real):
            parts = _rel_parts(p, self.root)
            if parts is not None and self.deny_reason(parts) is not None:
                return False
        return True

    def missing_message(self, given: str, real: Path) -> str:
        """'x does not exist', with close matches from the nearest folder that exists."""
        missing = real
        while not os.path.isdir(missing.parent) and _inside(missing.parent, self.root):
            missing = missing.parent
        folder = missing.parent
        if missing != real:
            text = f"{given!r} does not exist: there is no folder {self.relative(missing)!r}."
        else:
            text = f"{given!r} does not exist."
        if self.missing_note:
            text += f" {self.missing_note}"
        try:
            names = [
                n
                for n in os.listdir(folder)
                if self.deny_reason([*(_rel_parts(folder, self.root) or []), n]) is None
            ]
        except OSError:
            names = []
        close = difflib.get_close_matches(missing.name, names, n=5, cutoff=0.6)
        if not close:
            lowered = {n.lower(): n for n in names}
            close = [lowered[n] for n in difflib.get_close_matches(missing.name.lower(), lowered)]
        if close:
            shown = ", ".join(self.relative(folder / n) for n in close)
            text += f" Close matches: {shown}."
        else:
            text += " Use list_directory to see what is there."
        return text

    def sensitive_location(self, path: Path | str, *, system: bool = True) -> Sensitive | None:
        """The sensitive location the absolute ``path`` lies in, as written (no link is
        followed: callers check the resolved path too), or ``None``. ``system=False`` leaves
        out the system folders (``/etc``, ``/proc``, ``/sys``) that commands read as a
        matter of course."""
        place = self._sensitive_place(path)
        if place is not None and (system or place not in SYSTEM_PLACES):
            return Sensitive(place, "credentials or system files")
        return self.personal(path)

    def personal(self, path: Path | str) -> Sensitive | None:
        """The sensitive location of a person that the absolute ``path`` lies in: an agent
        credentials file anywhere, or another user's dot-files (:func:`personal_place`)."""
        return personal_place(path, self.own_homes)

    def _sensitive_place(self, path: Path | str) -> str | None:
        text = clean_path(os.fspath(path)).casefold()  # a case-blind file system (macOS)
        for shown, places in self._sensitive:
            if any(_inside(text, os.fspath(place).casefold()) for place in places):
                return shown
        return None


def secret_place(path: str | Path) -> str | None:
    """Why reading ``path``, anywhere on the machine, could leak a secret (a sensitive place
    of :data:`DEFAULT_SENSITIVE`, or a name :data:`DEFAULT_DENY_GLOBS` refuses), or None.
    For readers that are given paths from elsewhere (a function's source file)."""
    for candidate in (os.path.abspath(path), os.path.realpath(path)):
        for shown, places in _default_sensitive():
            if any(_inside(candidate, place) for place in places):
                return f"{shown} is a sensitive location"
        found = personal_place(candidate, _own_homes())
        if found is not None:
            return f"{found.place} is a sensitive location ({found.why})"
        name = os.path.basename(candidate)
        for pattern in DEFAULT_DENY_GLOBS:
            if glob_matches(pattern, [name]):
                return _DENY_REASONS.get(pattern, f"it matches {pattern}")
    return None


@functools.cache
def _default_sensitive() -> list[tuple[str, list[Path]]]:
    return _expand_sensitive(DEFAULT_SENSITIVE)


# --- the sensitive places of people -------------------------------------------------------

_PROC_ROOT = re.compile(r"/proc/[^/]+/root(?=/|\Z)")


def clean_path(path: str) -> str:
    """An absolute path as the kernel walks it, lexically: ``.``, ``..`` and repeated
    slashes gone (``//home`` is ``/home``), a ``/proc/<pid>/root`` prefix (a process's
    view of ``/``) taken away."""
    text = os.path.normpath(path)
    if text.startswith("//"):
        text = "/" + text.lstrip("/")
    while (found := _PROC_ROOT.match(text)) is not None:
        text = "/" + text[found.end() :].lstrip("/")
    return text


def personal_place(path: Path | str, own: frozenset[str]) -> Sensitive | None:
    """The sensitive location of a person that ``path`` (absolute) lies in, or ``None``:

    - an agent credentials file (``…/.jupyter_agent/credentials.json``), in any folder;
    - a dot-file or dot-folder (``.ssh``, ``.bash_history``, ``.config``…) of a home that is
      not among ``own`` (case-folded): under :data:`HOME_PARENTS`, ``/root``, or the home of
      an account with a user id of 1000 or more.

    Only text is compared (case-blind, for macOS): nothing is read from the disk but the
    account database, once."""
    text = clean_path(os.fspath(path))
    folded = text.casefold()
    parts = folded.split("/")
    credentials = tuple(p.casefold() for p in AGENT_CREDENTIALS)
    for i in range(1, len(parts) - 1):
        if (parts[i], parts[i + 1]) == credentials:
            shown = "/".join(text.split("/")[: i + 2])
            return Sensitive(shown, "an agent credentials file: it holds someone's API keys")
    home = other_home(text, own)
    if home is None or len(text) <= len(home) + 1:
        return None
    first = text[len(home) + 1 :].split("/", 1)[0]
    if not first.startswith("."):
        return None
    return Sensitive(f"{home}/{first}", OTHER_HOME)


def other_home(path: str, own: frozenset[str]) -> str | None:
    """The home folder of another user that ``path`` (absolute, cleaned) is or lies in, or
    ``None`` (see :func:`personal_place`)."""
    folded = path.casefold()
    found: str | None = None
    for parent in HOME_PARENTS:
        prefix = parent.rstrip("/").casefold() + "/"
        if folded.startswith(prefix):
            name = path[len(prefix) :].split("/", 1)[0]
            if name and not name.startswith("."):
                found = path[: len(prefix) + len(name)]
                break
    if found is None and (folded == "/root" or folded.startswith("/root/")):
        found = path[:5]
    if found is None:
        accounts = _account_homes()
        probe = folded
        while probe not in ("", "/"):
            if probe in accounts:
                found = path[: len(probe)]
                break
            probe = probe.rsplit("/", 1)[0]
    if found is None or found.casefold() in own:
        return None
    return found


@functools.cache
def _account_homes() -> frozenset[str]:
    """The homes (case-folded) of the accounts with a user id of 1000 or more that the
    account database lists, read once and bounded (system accounts' "homes" such as
    ``/bin`` or ``/var/lib/x`` are not people's)."""
    try:
        import pwd

        entries = list(itertools.islice(pwd.getpwall(), MAX_ACCOUNTS))
    except (ImportError, OSError):
        return frozenset()
    homes = {
        os.path.normpath(e.pw_dir).casefold()
        for e in entries
        if 1000 <= e.pw_uid < 65534 and os.path.isabs(e.pw_dir or "")
    }
    return frozenset(h for h in homes if h != "/" and h != "/nonexistent")


def _own_homes(*workspace: Path) -> frozenset[str]:
    """The user's own homes, case-folded (their ``$HOME``, their account's home, where links
    lead from them), and any home that holds one of the ``workspace`` folders."""
    own: set[str] = set()
    for home in _real_homes():
        own.update(clean_path(h).casefold() for h in (home, os.path.realpath(home)))
    for folder in workspace:
        text = clean_path(os.fspath(folder))
        probe = text
        while probe not in ("", "/"):
            holding = other_home(probe, frozenset(own))
            if holding is not None:
                own.add(holding.casefold())
            probe = probe.rsplit("/", 1)[0]
    return frozenset(own)


def other_homes(own: frozenset[str], limit: int = 1000) -> list[str]:
    """Other users' homes this process may enter (a shared Unix account), at most ``limit``
    of them: the folders of :data:`HOME_PARENTS`, ``/root`` and the account database's."""
    found: list[str] = []
    candidates: list[str] = ["/root"]
    for parent in HOME_PARENTS:
        try:
            with os.scandir(parent) as entries:
                candidates.extend(
                    e.path for e in itertools.islice(entries, limit) if not e.name.startswith(".")
                )
        except OSError:
            continue
    candidates.extend(sorted(_account_homes()))
    for home in dict.fromkeys(candidates):
        if len(found) >= limit:
            break
        if home.casefold() in own or not os.path.isdir(home):
            continue
        if os.access(home, os.R_OK | os.X_OK):
            found.append(home)
    return found


# --- helpers -------------------------------------------------------------------------


def _inside(path: Path | str, folder: Path | str) -> bool:
    p, f = os.fspath(path), os.fspath(folder)
    return p == f or p.startswith(f if f.endswith(os.sep) else f + os.sep)


def _rel_parts(path: Path, root: Path) -> list[str] | None:
    if not _inside(path, root):
        return None
    return list(path.relative_to(root).parts)


def _real_homes() -> list[str]:
    homes = [os.path.expanduser("~")]
    try:
        import pwd

        homes.append(pwd.getpwuid(os.getuid()).pw_dir)
    except (ImportError, KeyError, OSError):
        pass
    return list(dict.fromkeys(h for h in homes if h and h != "~"))


def _expand_sensitive(entries: Iterable[str]) -> list[tuple[str, list[Path]]]:
    homes = _real_homes()
    out: list[tuple[str, list[Path]]] = []
    for entry in entries:
        if entry == "~" or entry.startswith("~/"):
            raw = [os.path.join(h, entry[2:]) for h in homes]
        else:
            raw = [os.path.expanduser(entry)]
        places: list[Path] = []
        for r in raw:
            for p in (os.path.abspath(r), os.path.realpath(r)):
                if Path(p) not in places:
                    places.append(Path(p))
        out.append((entry, places))
    return out


Sandbox = WorkspaceAccess
"""The name :class:`WorkspaceAccess` had before the OS sandbox came (kept for old code)."""
