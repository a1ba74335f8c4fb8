"""Which files changed during an agent's session, so running their code asks again.

"Always allow" on ``python3 analysis.py`` was given for the code as it was then. If the
agent rewrites ``analysis.py`` (file writes do not ask) and runs it again, the rule would
cover code nobody has seen. So before a command runs workspace code — a script, a
Makefile, a test suite, a notebook, or a module such code imports — the shell tool asks
again when that code was written by the agent, or changed since the agent started, and
the user has not approved running it since.

Invariants kept here: an approval of such code remembers the *digest* of the content the
card was shown for (:func:`code_digest`: where the path led and the bytes there), so
"changed" means changed since the approved content, whatever the file's times say; and
while an approved command runs code the card bound, the agent's own writers (file and
notebook tools, a sibling subagent's included) refuse to change it
(:meth:`WrittenFiles.running`).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

from ..approvals import file_hash
from ..errors import ToolError
from .access import SKIP_DIRS
from .paths import NotRegularFile, Root
from .stamps import file_clock_ns, settled, stamped_since

WRITE_WAIT = 10.0
"""Seconds an approved command waits for the agent's writes under way to the files it runs."""
MAX_SCAN = 5_000
"""Files a test-suite check looks at before it gives up (and asks)."""

CODE_SUFFIXES = (
    ".py", ".pyx", ".sh", ".bash", ".zsh", ".js", ".mjs", ".cjs", ".ts", ".r", ".jl", ".pl",
    ".rb", ".lua", ".ipynb", ".mk",
)  # fmt: skip
CODE_NAMES = frozenset(
    {"Makefile", "makefile", "GNUmakefile", "package.json", "pyproject.toml", "setup.cfg",
     "tox.ini", "pytest.ini", "noxfile.py", "conftest.py"}
)  # fmt: skip
"""What a program may run or load besides the file it is given (imports, test set-up,
build files)."""


def is_code(path: str) -> bool:
    name = os.path.basename(path)
    return name in CODE_NAMES or name.lower().endswith(CODE_SUFFIXES)


def code_digest(path: Path | str) -> str:
    """The digest an approval binds of a file a command runs: the path it resolves to and
    the bytes there (:func:`~jupyter_agent.approvals.file_digest`), read in chunks. What is
    not a regular file (a FIFO, a device) is never read: its type is what is bound."""
    try:
        real = os.path.realpath(path)
    except OSError:  # a link on the way removed while it was followed: changing now
        changing = file_hash(os.path.abspath(path), "other")
        changing.update(b"changing while it was resolved")
        return str(changing.hexdigest())
    try:  # through the path gate: a regular file only, never blocking on a FIFO
        fd = Root(os.sep).open_file(real)
    except FileNotFoundError:
        return str(file_hash(real, "absent").hexdigest())
    except NotRegularFile as exc:
        other = file_hash(real, "other")
        other.update(f"not a regular file: {exc.what}".encode())
        return str(other.hexdigest())
    except OSError as exc:
        other = file_hash(real, "other")
        other.update(f"unreadable: {exc.errno}".encode())
        return str(other.hexdigest())
    hasher = file_hash(real)
    with os.fdopen(fd, "rb") as f:
        while chunk := f.read(1 << 20):
            hasher.update(chunk)
    return str(hasher.hexdigest())


class WrittenFiles:
    """Files an agent wrote, what the user has since approved running, when the agent
    started, and the code approved commands are running now (kept in memory, one per
    agent and its subagents)."""

    def __init__(self, since_ns: int | None = None) -> None:
        self.since_ns = file_clock_ns() if since_ns is None else since_ns
        """The earliest time stamp a file changed after the agent started can carry."""
        self._written: set[str] = set()
        self._seen: dict[str, str] = {}
        """Real path → the digest of the content the user approved running."""
        self._digests: dict[str, tuple[tuple[int, ...], str]] = {}
        """Real path → its digest when last computed, by its status then (so an unchanged
        file is not read again; the change time is in it, and no one can set it back),
        once no later write can carry the same status."""
        self._running: dict[str, list[str]] = {}
        """Real path → the approved commands running it now."""
        self._writing: dict[str, int] = {}
        """Real path → the agent's writes to it under way in a worker thread."""

    def add(self, path: Path | str) -> None:
        real = os.path.realpath(path)
        self._written.add(real)
        self._seen.pop(real, None)

    def acknowledge(self, approved: Mapping[str, str]) -> None:
        """The user approved running these files (path → :func:`code_digest` of the content
        the card was shown for): not "changed" while that content stays."""
        for path, approved_digest in approved.items():
            self._seen[os.path.realpath(path)] = approved_digest

    def changed(self, path: Path | str) -> bool:
        """Whether ``path`` was written by the agent or modified since it started, and
        its content is not the content the user last approved running."""
        real = os.path.realpath(path)
        if real in self._seen:
            return self.digest(real) != self._seen[real]
        return real in self._written or stamped_since(_changed_at(real), self.since_ns)

    def digest(self, path: Path | str) -> str:
        """:func:`code_digest` of ``path``, read again only when its status changed."""
        real = os.path.realpath(path)
        try:
            st = os.stat(real)
            status: tuple[int, ...] = (
                st.st_dev, st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns
            )  # fmt: skip
        except OSError:
            return code_digest(real)
        cached = self._digests.get(real)
        if cached is not None and cached[0] == status:
            return cached[1]
        found = code_digest(real)
        if settled(st):
            self._digests[real] = (status, found)
        return found

    # --- approved commands running code ---------------------------------------------------

    @asynccontextmanager
    async def running(self, paths: Iterable[str], command: str) -> AsyncIterator[None]:
        """While the approved ``command`` runs the code in ``paths``: the agent's writers
        refuse to change them. Entered once the agent's writes to them under way (in a
        worker thread) have ended, so what is checked next is what runs."""
        given = list(paths)
        reals = await asyncio.to_thread(lambda: list(dict.fromkeys(map(os.path.realpath, given))))
        for real in reals:
            self._running.setdefault(real, []).append(command)
        try:
            loop = asyncio.get_running_loop()
            deadline = loop.time() + WRITE_WAIT
            while any(self._writing.get(r) for r in reals):  # a write lasts milliseconds
                if loop.time() > deadline:
                    raise ToolError(
                        "Not run: a file it runs was still being written by another of the "
                        f"agent's tools after {WRITE_WAIT:g} s. Try again in a moment."
                    )
                await asyncio.sleep(0.005)
            yield
        finally:
            for real in reals:
                holders = self._running.get(real, [])
                if command in holders:
                    holders.remove(command)
                if not holders:
                    self._running.pop(real, None)

    @contextmanager
    def writing(self, path: Path | str, given: str) -> Iterator[None]:
        """Around one write of the agent's to ``path`` (``given``: as the call named it):
        refused while an approved command runs it."""
        real = os.path.realpath(path)
        holders = self._running.get(real)
        if holders:
            shown = " ".join(holders[0].split())
            shown = shown if len(shown) <= 80 else shown[:79] + "…"
            raise ToolError(
                f"{given!r} was not changed: it is the code of a command the user approved "
                f"that is running now (`{shown}`), and the command must run what the user "
                "approved. Wait for the command to end, then retry."
            )
        self._writing[real] = self._writing.get(real, 0) + 1
        try:
            yield
        finally:
            left = self._writing[real] - 1
            if left:
                self._writing[real] = left
            else:
                del self._writing[real]

    def unseen_code(self, folder: Path | str) -> list[str]:
        """Code files under ``folder`` the agent wrote and the user has not approved
        running since (the modules a script may import, a test suite's set-up)."""
        real = os.path.realpath(folder)
        return sorted(
            p
            for p in self._written
            if (p == real or p.startswith(real + os.sep))
            and is_code(p)
            and os.path.exists(p)
            and self.changed(p)
        )

    def changed_under(
        self, folder: Path | str, suffixes: tuple[str, ...] = (".py",)
    ) -> list[str] | None:
        """The changed files under ``folder`` with one of ``suffixes``; ``None`` when there
        are too many files to tell."""
        real = os.path.realpath(folder)
        if os.path.isfile(real):
            return [real] if self.changed(real) else []
        found: list[str] = []
        seen = 0
        for root, dirs, files in os.walk(real):
            dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith(".")]
            for name in files:
                if not name.endswith(suffixes):
                    continue
                seen += 1
                if seen > MAX_SCAN:
                    return None
                full = os.path.join(root, name)
                if self.changed(full):
                    found.append(full)
        return found


def _changed_at(path: str) -> int:
    """When the file last changed (ns): its status change time too, which no one can set
    back (a rewrite that puts its modification time back still counts)."""
    try:
        st = os.stat(path)
    except OSError:
        return 0
    return max(st.st_mtime_ns, st.st_ctime_ns)
