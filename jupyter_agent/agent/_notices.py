"""What the user hears once, as the next run starts: settings ignored or waiting for trust,
a model that moved, a conversation kept in memory only, commands without an OS sandbox.

Invariant: a notice waits at most once (the same one is not queued twice), is said once,
and is said with every secret in it named, not shown (a trust prompt quotes a settings
file, which may hold a key).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..events import PanelAction
from ._applied_settings import Notice


class Notices:
    """The notices waiting for the next run."""

    def __init__(self, waiting: Iterable[Notice] = ()) -> None:
        self._waiting: list[Notice] = []
        for message, action in waiting:
            self.add(message, action)
        self.sandbox_noted = False
        """Whether the user was told commands run without an OS sandbox (said once)."""

    def add(self, message: str, action: PanelAction | None = None) -> None:
        """Say ``message`` (with the panel ``action`` that answers it) at the next start."""
        if (message, action) not in self._waiting:
            self._waiting.append((message, action))

    def withdraw(self, action: PanelAction) -> None:
        """Drop the notices answered by ``action`` (done already)."""
        self._waiting = [n for n in self._waiting if n[1] != action]

    def take(self, redact: Callable[[str], str]) -> list[Notice]:
        """The waiting notices, secrets hidden by ``redact``; none waits afterwards."""
        taken, self._waiting = self._waiting, []
        return [(redact(message), action) for message, action in taken]
