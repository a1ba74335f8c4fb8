"""The macOS sandbox: a ``sandbox-exec`` (Seatbelt) profile with the bubblewrap sandbox's
semantics for writes, protected and hidden paths, network and Unix sockets.

Invariant: Seatbelt applies the last rule that matches, so rules go from the widest to the
narrowest (see :func:`seatbelt_profile`); every path is listed as written and as resolved.
What Seatbelt cannot do (process-tree containment, a private /tmp, closing Mach services)
is said in :mod:`.os_sandbox`'s docstring.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path


def seatbelt_profile(
    *,
    writable: Sequence[Path],
    protected: Sequence[Path],
    hidden: Sequence[Path],
    network: bool,
    unix_sockets: bool,
) -> str:
    """A ``sandbox-exec`` profile with the semantics of the bubblewrap sandbox.

    Seatbelt applies the last rule that matches, so the order is: everything allowed; writes
    denied; writes re-allowed in the writable roots; protected paths, their folders and hidden
    paths denied again. Rules name paths, so a link itself is protected by its own name; both
    the written and the resolved spelling are listed.
    """

    def spellings(paths: Iterable[Path]) -> list[Path]:
        out: list[Path] = []
        for path in paths:
            for spelled in (Path(os.path.abspath(path)), Path(os.path.realpath(path))):
                if spelled not in out:
                    out.append(spelled)
        return out

    def quoted(path: Path) -> str:
        return '"' + str(path).replace("\\", "\\\\").replace('"', '\\"') + '"'

    def rule(verb: str, operations: str, filters: list[str]) -> list[str]:
        if not filters:
            return []
        return [f"({verb} {operations}", *(f"  {f}" for f in filters), ")"]

    devices = ["/dev/null", "/dev/zero", "/dev/tty", "/dev/dtracehelper"]
    lines = ["(version 1)", "(allow default)", "(deny file-write*)"]
    lines += rule(
        "allow",
        "file-write*",
        [f"(subpath {quoted(p)})" for p in spellings(writable)]
        + [f"(literal {quoted(Path(d))})" for d in devices]
        + ['(regex #"^/dev/ttys[0-9]+$")', '(regex #"^/dev/fd/")'],
    )
    guarded = spellings(protected)
    lines += rule("deny", "file-write*", [f"(subpath {quoted(p)})" for p in guarded])
    # rename(2) of a folder on the way would move a protected path out from under its rule.
    ancestors = sorted({a for p in guarded for a in p.parents if a != a.parent})
    lines += rule(
        "deny", "file-write-unlink file-write-create", [f"(literal {quoted(a)})" for a in ancestors]
    )
    secret = [f"(subpath {quoted(p)})" for p in spellings(hidden)]
    lines += rule("deny", "file-read* file-write*", secret)
    if not network:
        lines.append("(deny network*)")
    if not unix_sockets:
        lines.append("(deny system-socket (socket-domain AF_UNIX))")
    return "\n".join(lines) + "\n"
