"""One error family for the whole package.

Two kinds live here. *Tool signals* are raised by tools to report an outcome the
model should read (the dispatcher turns them into an ``is_error`` tool result and
the run goes on). *Run failures* end or refuse a run and reach the programmer.
"""

from __future__ import annotations

import asyncio


class AgentError(Exception):
    """Base of every error raised by jupyter_agent."""


# --- tool signals ----------------------------------------------------------------


class ToolError(AgentError):
    """A tool could not do what it was asked; the message is shown to the model.

    Write the message for the model: say what was wrong and what to do instead.
    """


class ToolDenied(ToolError):
    """The call was refused by a role permission, a rule or the user."""

    def __init__(
        self, message: str, *, missing: frozenset[str] = frozenset(), line: str | None = None
    ) -> None:
        super().__init__(message)
        self.missing = missing
        """Permissions the role lacks, when that is the reason."""
        self.line = line
        """What the call's row says, when the message is written for the model rather
        than the user (the user's own Deny: "You denied this call")."""


class ToolInterrupted(asyncio.CancelledError):
    """The run was stopped while this tool waited, and the tool says what that did (a
    cell interrupted, or left running); the note joins the "interrupted" result. It is
    a cancellation: re-raise it where the stop was caught."""

    def __init__(self, note: str) -> None:
        super().__init__(note)
        self.note = note


# --- run failures ----------------------------------------------------------------


class ModelError(AgentError):
    """The model provider failed in a way retries did not mend."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        error_type: str | None = None,
        retryable: bool = False,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.error_type = error_type
        self.retryable = retryable


class PromptTooLong(ModelError):
    """The API refused a request for not fitting the model's context window."""

    def __init__(self, message: str, *, tokens: int | None = None, limit: int | None = None):
        super().__init__(message, status=400, error_type="invalid_request_error")
        self.tokens = tokens
        """The request's size in tokens, when the API said it."""
        self.limit = limit
        """The window, when the API said it."""


class MissingAPIKey(ModelError):
    """No API key was found for a real model."""

    def __init__(self, message: str, *, headline: str | None = None) -> None:
        super().__init__(message)
        self.headline = headline or message
        """What is missing, in one sentence, for a view whose own controls show the ways to
        get going (the panel's set-up box); the message names them all."""


class IllegalTransition(AgentError):
    """The agent tried a state change its state machine forbids: a bug, never user error."""

    def __init__(self, current: str, target: str) -> None:
        super().__init__(f"illegal agent state transition {current} → {target}")
        self.current = current
        self.target = target


class AgentBusy(AgentError):
    """A run was started while another run of the same agent is still going."""


class SessionError(AgentError):
    """A session could not be found, read or written."""
