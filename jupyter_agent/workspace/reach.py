"""Which sensitive locations a text that names paths can reach: a shell word, an MCP tool's
argument.

The file tools resolve one path each and :class:`~.access.WorkspaceAccess` refuses it; a
command or another program's tool is handed text, and what it reads is decided at run time.
:func:`reach_of` finds, in that text, every path it may name and what each may lead to:

- the text itself as a path (relative to each folder the command may run in), and every
  absolute or ``~`` path inside it (``--file=/home/bob/.x``, Python given with ``-c``);
- both as written (``..``, ``//`` and a ``/proc/<pid>/root`` prefix taken away) and as the
  kernel resolves it, links included (a workspace folder that is a link to another home);
- a glob (``/home/*/.jupyter_agent/*``) by what it could match, file names unseen, and by
  what it matches now, through at most :data:`GLOB_BUDGET` folder entries;
- a folder that holds another user's home (``grep -r`` and ``tar`` read it whole).

It reports a location, never a verdict: callers decide what it does (a command's card warns).
The work is bounded: at most :data:`MAX_CANDIDATES` paths per text and the glob budget.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable, Iterator

from . import access as _access
from .access import (
    MAX_PATH_CHARS,
    Sensitive,
    WorkspaceAccess,
    clean_path,
    other_home,
    other_homes,
)

GLOB_BUDGET = 5000
"""Folder entries a glob's expansion may look at before it is called too wide to check."""
MAX_CANDIDATES = 64
"""Paths checked in one text."""

_GLOB_CHARS = re.compile(r"[*?\[]")
_EMBEDDED = re.compile(r"(?:(?<=^)|(?<=[\s'\"=:,;(`<>|&]))(?:~[A-Za-z0-9._-]*)?/[^\s'\"`;|&<>()]*")
"""Absolute (or ``~``) paths inside a longer text, after a separator."""
_RUN_TIME_HINTS = re.compile(
    r"/root\b|~[a-z_]|\.jupyter_agent|\$\{?home\}?/\.\.|/proc/", re.IGNORECASE
)
"""What, in a text only known at run time (``$HOME/../bob``, ``~bob/.{ssh,aws}``), may
name another user's home or a credentials file (besides a folder of homes)."""

TOO_WIDE = Sensitive(
    "a glob too wide to check", "it may match another user's dot-files or a credentials file"
)
RUN_TIME = Sensitive(
    "a path only known at run time",
    "its text names a home folder or the agent's folder, which may hold someone's credentials",
)


def reach_of(
    text: str | None,
    *,
    raw: str,
    folders: Iterable[str],
    access: WorkspaceAccess,
    glob: bool = False,
) -> list[Sensitive]:
    """The sensitive locations ``text`` may reach, each once. ``text``: the value (``None``
    when only run time knows it; then ``raw``, as written, is looked at for hints);
    ``folders``: the absolute folders a relative path is taken from; ``glob``: the text is
    a pattern the shell expands."""
    if text is None:
        folded = raw.casefold()
        homes = any(p.casefold().rstrip("/") + "/" in folded for p in _access.HOME_PARENTS)
        return [RUN_TIME] if homes or _RUN_TIME_HINTS.search(raw) else []
    found: dict[Sensitive, None] = {}
    whole = [text] if len(text) <= MAX_PATH_CHARS else []
    candidates = [*whole, *(m.group() for m in _EMBEDDED.finditer(text) if m.group() != text)]
    for candidate in candidates[:MAX_CANDIDATES]:
        is_glob = bool(glob and _GLOB_CHARS.search(candidate))
        for path in _anchored(candidate, folders):
            for place in _glob_reach(path, access) if is_glob else _path_reach(path, access):
                found.setdefault(place)
    return list(found)


def _anchored(candidate: str, folders: Iterable[str]) -> list[str]:
    value = os.path.expanduser(candidate) if candidate.startswith("~") else candidate
    if os.path.isabs(value):
        return [value]
    return [os.path.join(folder, value) for folder in folders]


def _path_reach(path: str, access: WorkspaceAccess) -> list[Sensitive]:
    """Where ``path`` (absolute) leads, as written and resolved."""
    out: list[Sensitive] = []
    forms = [clean_path(path)]
    try:
        forms.append(clean_path(os.path.realpath(path)))
    except (OSError, ValueError):
        pass
    for form in dict.fromkeys(forms):
        place = access.sensitive_location(form, system=False)
        if place is None:
            place = _holds_other_home(form, access)
        if place is not None:
            out.append(place)
    return out


def _holds_other_home(path: str, access: WorkspaceAccess) -> Sensitive | None:
    """``path`` is another user's home, or a folder of homes holding one this process may
    enter: what reads a folder whole reads their dot-files."""
    own = access.own_homes
    home = other_home(path, own)
    if home is not None and home == path:
        return Sensitive(home, "another user's home folder, with their dot-files and credentials")
    folded = path.casefold().rstrip("/") or "/"
    for parent in _access.HOME_PARENTS:
        if parent.casefold() == folded:
            homes = other_homes(own, limit=1)
            if any(h.casefold().startswith(folded + "/") for h in homes):
                return Sensitive(path, f"it holds other users' home folders ({homes[0]}…)")
    return None


# --- globs -------------------------------------------------------------------------------


def _glob_reach(pattern: str, access: WorkspaceAccess) -> list[Sensitive]:
    """What a glob could match (by its text) and matches now (bounded)."""
    out: dict[Sensitive, None] = {}
    clean = clean_path(pattern)
    literal, _, rest = _split_literal(clean)
    forms = [clean]
    try:
        real = os.path.realpath(literal)
        forms.append(clean_path(os.path.join(real, rest)) if rest else clean_path(real))
    except (OSError, ValueError):
        pass
    for form in dict.fromkeys(forms):
        for place in _could_match(form, access):
            out.setdefault(place)
    matches, complete = _expand(clean, GLOB_BUDGET)
    for match in matches:
        for place in _path_reach(match, access):
            out.setdefault(place)
    if not complete:
        out.setdefault(TOO_WIDE)
    return list(out)


def _split_literal(pattern: str) -> tuple[str, str, str]:
    """(the folders before the first glob part, "/", the rest)."""
    parts = pattern.split("/")
    for i, part in enumerate(parts):
        if _GLOB_CHARS.search(part):
            return "/".join(parts[:i]) or "/", "/", "/".join(parts[i:])
    return pattern, "", ""


def _part_matches(glob_part: str, name: str) -> bool:
    """Whether one part of a glob could match ``name``: ``*`` stands for any name (dotglob
    lets it match a leading dot), ``DOT`` for any name starting with a dot, ``NAME`` for
    any other."""
    g = glob_part.casefold()
    if "**" in g:
        return True
    if name == "DOT":
        return g.startswith((".", "*", "?", "["))
    if name == "NAME":
        return not g.startswith(".")
    return fnmatch.fnmatchcase(name.casefold(), g)


def _could_match(pattern: str, access: WorkspaceAccess) -> list[Sensitive]:
    """The sensitive shapes a glob's text could match, files unseen: a credentials file
    anywhere, another home (a dot-entry in it, or the home itself), a folder of homes."""
    parts = pattern.split("/")[1:]
    out: list[Sensitive] = []
    deep = any("**" in p for p in parts)
    name, file = (p.casefold() for p in (".jupyter_agent", "credentials.json"))
    for i, part in enumerate(parts):
        # `*` alone does not stand for `.jupyter_agent` here (else every `ls *` would): a
        # planted one is found by the expansion below, which sees dot-names.
        explicit = "**" in part or part.startswith((".", "["))
        if (explicit and _part_matches(part, name)) and (
            i + 1 == len(parts) or _part_matches(parts[i + 1], file)
        ):
            out.append(Sensitive(pattern, "it may match an agent credentials file"))
            break
    shapes = [[*p.strip("/").split("/"), "NAME", "DOT"] for p in _access.HOME_PARENTS]
    shapes.append(["root", "DOT"])
    for shape in shapes:
        if not deep and len(parts) < len(shape) - 2:
            continue  # above the folder of homes: `/*` is not a home
        if all(_part_matches(g, s) for g, s in zip(parts, shape, strict=False)) and (
            _may_be_another_home(parts[: len(shape) - 1], shape, access)
        ):
            home = "/" + "/".join(shape[:-1]).replace("NAME", "*")
            out.append(Sensitive(pattern, f"it may match another user's dot-files, under {home}"))
            break
    return out


def _may_be_another_home(parts: list[str], shape: list[str], access: WorkspaceAccess) -> bool:
    """Whether the glob's parts that stand for a home (``home``, ``bob``) may name one that
    is not the user's: a literal home is looked up; a pattern, if its folder of homes
    exists."""
    literal = "/" + "/".join(parts)
    if len(parts) == len(shape) - 1 and not _GLOB_CHARS.search(literal):
        return other_home(literal, access.own_homes) is not None
    folder = "/" + "/".join(shape[:-2])
    return os.path.isdir(folder) if folder != "/" else True


def _expand(pattern: str, budget: int) -> tuple[list[str], bool]:
    """The paths ``pattern`` matches now, looking at no more than ``budget`` folder entries
    (dot-names included, as with ``dotglob``); and whether the look was complete."""
    parts = pattern.split("/")[1:]
    current = ["/"]
    seen = 0
    for i, part in enumerate(parts):
        last = i + 1 == len(parts)
        if not _GLOB_CHARS.search(part):
            current = [os.path.join(c, part) for c in current]
            continue
        nxt: list[str] = []
        for folder in current:
            for entry in _entries(folder):
                seen += 1
                if seen > budget:
                    return nxt, False
                if fnmatch.fnmatchcase(entry, part) and (
                    last or os.path.isdir(f"{folder}/{entry}")
                ):
                    nxt.append(os.path.join(folder, entry))
        current = nxt
        if not current:
            break
    return current, True


def _entries(folder: str) -> Iterator[str]:
    try:
        with os.scandir(folder) as entries:
            yield from (e.name for e in entries)
    except OSError:
        return
