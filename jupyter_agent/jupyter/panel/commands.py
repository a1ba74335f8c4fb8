"""The panel's commands, one typed handler each, found by the command's type.

A view's command (validated into one of the
:data:`~jupyter_agent.jupyter.panel.protocol.Command` types) is carried out by
:func:`carry_out` on the agent's event loop. Each handler takes the panel as
:class:`CommandTarget` (what a command may read and change) and the command of its own
type; :func:`handles` registers it, so mypy checks that a handler takes the type it is
registered for, and ``tests/jupyter/test_panel_commands.py`` that every command type has
one. A handler raises ``ValueError`` (or an :class:`~jupyter_agent.errors.AgentError`)
with a sentence for the user to refuse a command; the panel's reply carries it.

A command whose work must not hold the loop (a search) returns it as a coroutine: its
reply waits for it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, Protocol, TypeVar

from ...agent import Agent, RunHandle
from ...config.trust import TrustPrompt
from ...sessions.notebooks import ThisNotebook, Where, where
from .protocol import (
    AnswerCommand,
    ApproveCommand,
    Command,
    CompactCommand,
    ExecutePlanCommand,
    FoundSession,
    PauseCommand,
    ResumeCommand,
    RetryCommand,
    SearchSessionsCommand,
    SendCommand,
    SessionsCommand,
    SetKeyCommand,
    SetMaxStepsCommand,
    SetModelCommand,
    SetRoleCommand,
    StopCommand,
    TrustCommand,
    UnpauseCommand,
)
from .setup import model_setup, use_api_key
from .state import TraitChanges

Later = Coroutine[Any, Any, list[FoundSession]] | None
"""What a handler returns: the work its reply waits for, or ``None`` (answered at once)."""
SEARCH_LIMITS = range(1, 31)
"""How many sessions a search may return."""


class CommandTarget(Protocol):
    """What a command may read and change in the panel that received it."""

    @property
    def agent(self) -> Agent: ...

    @property
    def here(self) -> ThisNotebook | None:
        """The notebook this panel's agent works on (None: not known)."""
        ...

    def pending(self) -> tuple[str, str]:
        """The ids of the agent's own question and approval that wait (empty: none)."""
        ...

    def assign(self, traits: TraitChanges) -> None:
        """Set synced traits (what every view shows)."""
        ...

    def refresh(self) -> None:
        """Show the agent's settings again (role, model, limits, trust)."""
        ...

    def refresh_model(self) -> None: ...

    def refresh_sessions(self) -> None: ...

    def resume_session(self, session_id: str, here: bool = False) -> None:
        """Show and continue a saved session (one of another notebook only ``here``, the
        user's choice); ``ValueError`` when this panel cannot, or not now (the agent runs),
        or the choice was not made."""
        ...

    def model_string(self, choice: str) -> str:
        """The model string of a picker's choice (shown masked), or ``choice`` itself."""
        ...

    def trusted(self, applied: TrustPrompt) -> None: ...

    def keep_task(self, task: str, role: str) -> None:
        """Keep ``task`` (for ``role``) until the model can be called, then start it."""
        ...


C = TypeVar("C")
Handler = Callable[[CommandTarget, C], Later]
_HANDLERS: dict[type[Any], Handler[Any]] = {}


def handles(kind: type[C]) -> Callable[[Handler[C]], Handler[C]]:
    """Register the decorated function as the handler of commands of type ``kind``."""

    def register(handler: Handler[C]) -> Handler[C]:
        _HANDLERS[kind] = handler
        return handler

    return register


def handled() -> frozenset[type[Any]]:
    """The command types that have a handler."""
    return frozenset(_HANDLERS)


def carry_out(panel: CommandTarget, command: Command) -> Later:
    """Carry out a command from a view (on the loop's thread)."""
    return _HANDLERS[type(command)](panel, command)


@handles(SendCommand)
def _send(panel: CommandTarget, command: SendCommand) -> Later:
    text = command.text.strip()
    if not text:
        raise ValueError("Type a message first.")
    agent = panel.agent
    if model_setup(agent.model) and not agent.running:
        # No model to call yet: the task waits in the set-up box, which says why once,
        # rather than a run that fails saying it again (its error line, the status line).
        panel.keep_task(text, command.role or agent.role)
        return None
    agent.start(text, role=command.role or None)
    return None


@handles(StopCommand)
def _stop(panel: CommandTarget, command: StopCommand) -> Later:
    panel.agent.stop()
    return None


@handles(PauseCommand)
def _pause(panel: CommandTarget, command: PauseCommand) -> Later:
    handle = panel.agent.handle
    if handle is None or handle.done:
        raise ValueError("The agent is not running: there is nothing to pause.")
    handle.pause()
    panel.assign({"pausing": True})
    return None


@handles(UnpauseCommand)
def _unpause(panel: CommandTarget, command: UnpauseCommand) -> Later:
    handle = panel.agent.handle
    if handle is not None and not handle.done:
        handle.resume()
    panel.assign({"pausing": False})
    return None


@handles(AnswerCommand)
def _answer(panel: CommandTarget, command: AnswerCommand) -> Later:
    question, _ = panel.pending()
    waiting(panel.agent, command.question_id, question, "question").answer(command.value)
    return None


@handles(ApproveCommand)
def _approve(panel: CommandTarget, command: ApproveCommand) -> Later:
    _, approval = panel.pending()
    handle = waiting(panel.agent, command.request_id, approval, "approval")
    handle.approve(command.allow, remember=command.remember, scope=command.scope)
    return None


@handles(ExecutePlanCommand)
def _execute_plan(panel: CommandTarget, command: ExecutePlanCommand) -> Later:
    panel.agent.execute_plan()
    return None


@handles(SetRoleCommand)
def _set_role(panel: CommandTarget, command: SetRoleCommand) -> Later:
    panel.agent.set_role(command.role)
    panel.assign({"role": panel.agent.role})
    return None


@handles(SetModelCommand)
def _set_model(panel: CommandTarget, command: SetModelCommand) -> Later:
    if panel.agent.running:
        raise ValueError("The agent is working: wait for it, or Stop it, then switch.")
    panel.agent.set_model(panel.model_string(command.model))
    panel.refresh_model()
    return None


@handles(SetMaxStepsCommand)
def _set_max_steps(panel: CommandTarget, command: SetMaxStepsCommand) -> Later:
    if command.value < 1:
        raise ValueError("Max iterations must be at least 1.")
    panel.agent.limits.max_steps = command.value
    panel.assign({"max_steps": command.value})
    return None


@handles(ResumeCommand)
def _resume(panel: CommandTarget, command: ResumeCommand) -> Later:
    panel.resume_session(command.session_id, command.here)
    return None


@handles(SessionsCommand)
def _sessions(panel: CommandTarget, command: SessionsCommand) -> Later:
    panel.refresh_sessions()
    return None


@handles(SearchSessionsCommand)
def _search_sessions(panel: CommandTarget, command: SearchSessionsCommand) -> Later:
    if command.limit not in SEARCH_LIMITS:
        raise ValueError("A search returns 1 to 30 sessions.")
    return search_sessions(panel.agent, command.query, command.limit, panel.here)


@handles(SetKeyCommand)
def _set_key(panel: CommandTarget, command: SetKeyCommand) -> Later:
    use_api_key(panel.agent, command.key, save=command.save)
    panel.refresh_model()
    return None


@handles(RetryCommand)
def _retry(panel: CommandTarget, command: RetryCommand) -> Later:
    panel.agent.retry()
    return None


@handles(CompactCommand)
def _compact(panel: CommandTarget, command: CompactCommand) -> Later:
    if panel.agent.running:
        raise ValueError("The agent is working: wait for it, or Stop it, then compact.")
    panel.agent.compact()
    return None


@handles(TrustCommand)
def _trust(panel: CommandTarget, command: TrustCommand) -> Later:
    try:
        applied = panel.agent.trust_workspace()
    finally:
        panel.refresh()  # a prompt that changed shows again as it is now
    panel.trusted(applied)
    return None


async def search_sessions(
    agent: Agent, query: str, limit: int, here: ThisNotebook | None = None
) -> list[FoundSession]:
    """The search box: past sessions matching ``query``, searched in a worker thread; the
    sessions of the notebook ``here`` first, each group best first."""

    def search() -> list[FoundSession]:
        found = []
        for h in agent.search_sessions(query, limit=limit):
            notebook, place, open_path = notebook_of(here, h.notebook)
            found.append(
                FoundSession(
                    id=h.session_id,
                    title=h.title or "(untitled)",
                    updated=h.updated_at,
                    said=h.said_at,
                    role=h.role,
                    label=h.label,
                    parts=h.parts(),
                    matches=h.matches,
                    notebook=notebook,
                    where=place,
                    open_path=open_path,
                    outcome=h.outcome,
                    outcome_kind=h.outcome_kind,
                    stop_reason=h.stop_reason or "",
                )
            )
        return sorted(found, key=lambda f: f["where"] != "here")

    return await asyncio.to_thread(search)


def notebook_of(here: ThisNotebook | None, notebook: str | None) -> tuple[str, Where, str]:
    """A session's notebook as the picker and the search show it: its name (empty: not
    known), where it stands from ``here``, and its path on the server (empty: it cannot be
    opened from the panel)."""
    open_path = here.server_path(notebook) if here is not None else ""
    return notebook or "", where(here, notebook), open_path


def waiting(agent: Agent, given: str, current: str, what: str) -> RunHandle:
    """The run that waits on the question or approval ``given``: the agent's own
    (``current``, its pending id), or a subagent's (whose card shows in the parent's
    tool card)."""
    handle = agent.handle
    found = handle.waiting_on(given) if handle is not None and given else None
    if found is not None:
        return found
    if not current or (given and given != current):
        raise ValueError(f"That {what} is no longer pending.")
    assert handle is not None
    return handle
