"""What the agent's comms (the notebook bridge's, the panel's) share with each other."""

from __future__ import annotations

from typing import Any


def answer_on_the_senders_subshell(comm: Any) -> None:
    """Read ``comm``'s messages on the subshell the frontend sent them on.

    ipykernel 7.4 re-routes a comm's incoming messages to the subshell the comm last sent
    from (so that a reply reaches the loop waiting for it): a comm the agent's thread
    sends on while a cell runs would have every message read by the busy main shell,
    the lab extension's subshell notwithstanding. The agent's comms wait on no shell's
    loop (their messages are handed to the agent's thread), so the sender's choice holds.
    """
    if hasattr(comm, "_reply_subshell_for"):
        comm._reply_subshell_for = lambda _data, subshell_id: subshell_id
