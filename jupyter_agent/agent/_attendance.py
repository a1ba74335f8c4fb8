"""Whether anyone can answer a run's questions and approvals.

A run started where nobody watches (papermill, nbclient, a scheduled job) would otherwise
wait for ever at its first approval, and the stored notebook would not show why. The host
that knows (the kernel's agent: whether a panel view is there) gives the agent an
:class:`Attendance`; while a question or an approval waits, :mod:`._interaction` races the
user's answer against :meth:`Attendance.absent`, and then applies the agent's
:data:`Unattended` choice.
"""

from __future__ import annotations

from typing import Literal, Protocol

Unattended = Literal["fail", "deny"]
"""What a call that needs approval does when nobody can approve it: ``fail`` (the
default) ends the run with an error naming the call; ``deny`` denies the call and the run
goes on (the model is told, the transcript says so). A question nobody can answer always
ends the run: an answer is never made up for the user."""

UNATTENDED_CHOICES: tuple[Unattended, ...] = ("fail", "deny")


class Attendance(Protocol):
    async def absent(self) -> str:
        """Return once it is known that nobody can answer (with why, in a few words, e.g.
        "no panel is open: the notebook runs headless"); never return while someone can."""
        ...
