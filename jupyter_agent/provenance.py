"""Which files changed during an agent's session, so running their code asks again.

"Always allow" on ``python3 analysis.py`` was given for the code as it was then. If the
agent rewrites ``analysis.py`` (file writes do not ask) and runs it again, the rule would
cover code nobody has seen. So before a command runs workspace code — a script, a
Makefile, a test suite, a notebook, or a module such code imports — the shell tool asks
again when that code was written by the agent, or changed since the agent started, and
the user has not approved running it since.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from pathlib import Path

from .sandbox import SKIP_DIRS

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


class WrittenFiles:
    """Files an agent wrote, what the user has since approved running, and when the agent
    started (kept in memory, one per agent)."""

    def __init__(self, since: float | None = None) -> None:
        self.since = time.time() if since is None else since
        self._written: set[str] = set()
        self._seen: dict[str, float] = {}
        """Path → its modification time when the user approved running it."""

    def add(self, path: Path | str) -> None:
        real = os.path.realpath(path)
        self._written.add(real)
        self._seen.pop(real, None)

    def acknowledge(self, paths: Iterable[str]) -> None:
        """The user approved running these as they are now: no longer "changed"."""
        for path in paths:
            real = os.path.realpath(path)
            self._seen[real] = _mtime(real)

    def changed(self, path: Path | str) -> bool:
        """Whether ``path`` was written by the agent or modified since it started, and
        not approved to run since."""
        real = os.path.realpath(path)
        stamp = _mtime(real)
        if real in self._seen:
            return stamp > self._seen[real]
        return real in self._written or stamp >= self.since

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


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0
