"""The ``%agent`` and ``%%agent`` magics."""

from __future__ import annotations

import asyncio
import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand

from ..admin_policy import current_policy
from ..agent import Agent, RunHandle
from ..agent.render import TextRenderer
from ..config.settings import SettingsError
from ..errors import AgentError
from ..secrets import credentials
from ..secrets.environment import key_environment
from ._mcp_status import show_mcp
from .kernel.agent import KernelAgent, in_kernel, kernel_agent, running_cell_id
from .magic_line import (
    LOOPS,
    OPTIONS,
    SUBCOMMANDS,
    Command,
    Subcommand,
    keep_question_marks,
    model_from_spec,
    parse,
    quiet_bare_runs,
)
from .panel.setup import keyless, model_choices, model_setup, use_api_key
from .task_parameters import expand

__all__ = [
    "LOOPS",
    "OPTIONS",
    "SUBCOMMANDS",
    "AgentMagics",
    "Command",
    "Subcommand",
    "keep_question_marks",
    "model_from_spec",
    "parse",
    "quiet_bare_runs",
]


# The subcommands whose line is a task: its $name and {name} are expanded (task_parameters).
_TASKS = frozenset({Subcommand.plan, Subcommand.act, Subcommand.remember})


@magics_class
class AgentMagics(Magics):
    @line_cell_magic
    @no_var_expand
    def agent(self, line: str, cell: str | None = None) -> RunHandle | None:
        """The AI agent of this kernel: plans, then edits and runs cells and files.

        Usage::

          %agent                   show the agent's panel (the agent is made if needed)
          %agent plan TASK         the Planner studies the notebook, files and variables
                                   and proposes a plan; it changes nothing
          %agent act TASK          the Actor does the task: edits and runs cells and files
                                   under your permission rules, asking when unsure
          %agent remember TEXT     add TEXT as a line of this folder's AGENTS.md (the
                                   project instructions every later run reads): an edit
                                   like any other, under your permission rules, with its diff
          %agent compact           make the conversation smaller now (the panel's Compact
                                   now): old tool results are cleared and earlier turns
                                   summarised by the model, as when the context window
                                   fills up; the session's history on disk stays whole
          %agent stop              stop the running agent (the next message continues)
          %agent role NAME         switch role: planner, actor, or one from your settings
          %agent model [MODEL]     switch to MODEL for the next runs (the panel's model
                                   picker does the same); without MODEL, list the models
                                   configured and whether each is ready
          %agent trust             trust this folder's settings (.jupyter_agent/settings.toml):
                                   until then they may only narrow; the panel's trust
                                   prompt lists what trusting enables, and this prints
                                   what now applies
          %agent login             ask for the model's API key (Anthropic's or OpenAI's;
                                   hidden input, kept out of the notebook): for this
                                   session, or saved for your user in
                                   ~/.jupyter_agent/credentials.json (owner-only)
          %agent logout            remove the saved keys
          %agent mcp               the MCP servers of your settings (mcpServers), their
                                   state and tools; starts those not running
          %agent help              this text

          %%agent [--role planner|actor]
          TASK...                  the cell's body is the task (default: the current role)

        In a line's task, ``$name`` and ``{name}`` of a str, number or bool variable (a
        papermill parameter, say) are replaced by its value; ``$$``, ``{{`` and ``}}``
        are a literal ``$``, ``{`` and ``}``; other braces and dollars stay as written
        (expressions are not evaluated). A %%agent cell's body is taken as written.

        Options (before the task):

          --model MODEL            the model: claude-sonnet-4-6 (Anthropic), openai:gpt-5,
                                   ollama:qwen3 (served on this machine), bedrock:ID,
                                   vertex:ID, openai-compatible:NAME@URL (vLLM, LM Studio,
                                   LiteLLM, OpenRouter…), NAME:MODEL for a provider of your
                                   settings ([providers.NAME]), scripted:PATH.json for a
                                   scripted replay, $name for a Model in your namespace
                                   (default: $JUPYTER_AGENT_MODEL, else [models] default
                                   in your settings, else Claude, or OpenAI when only
                                   OPENAI_API_KEY is set)
          --max-steps N            model turns per run (the panel's max iterations)
          --loop tool_use|roa      the native tool-use loop (default) or
                                   reason → act → observe
          --resume [SESSION_ID]    continue a saved session (without an id, the newest:
                                   this notebook's when it has one); a session of
                                   another notebook goes on here without its cell
                                   references; the panel's session picker does the same
          --side                   dock the panel in JupyterLab's right sidebar
          --notebook PATH          work on this notebook file, for a kernel that does not
                                   know its own (papermill, nbclient, a remote kernel):
                                   without one, no notebook tools are offered

        The run goes on in the background: the cell ends at once and the kernel stays
        usable. ``h = %agent plan …`` keeps the run's handle: ``await h.wait()`` in a later
        cell, then ``h.plan``, ``h.summary``, ``h.history``; ``h.stop()``, ``h.answer(…)``,
        ``h.approve(…)`` steer it from code. A bare ``%agent plan …`` shows no result (the
        panel shows the run; an echo would show the state it began in forever); its
        handle is ``_`` in the next cell, as any result's would be.

        Each ``%agent`` cell shows the panel under it; the display shown before becomes a
        static record of the runs it showed (a notebook viewer shows it without a kernel),
        so only the newest display, and the sidebar, is live.

        The panel shows the transcript, the plan (Execute plan hands it to the Actor),
        questions and approvals as buttons, every tool call with its diff, usage and cost,
        how full the model's context window is (with Compact now), and a Stop button.
        Where widgets cannot show (nbconvert, nbclient, papermill) the panel's text is
        the transcript, refreshed at each plan, question and run end. In
        terminal IPython the run is printed as it goes and the magic waits for it (Ctrl-C
        stops it; questions are asked at the prompt).

        The agent works in the notebook's folder and on the notebook itself: live through
        JupyterLab with the jupyter_agent extension, or on the .ipynb file otherwise (the
        panel says which).
        """
        command = parse(line, cell)
        if cell is None and command.name in _TASKS:
            command.task = expand(command.task, self.shell.user_ns if self.shell else {})
        if command.name == Subcommand.help:  # without making the agent
            self._help(None)
            return None
        kernel = kernel_agent(self.shell)
        agent = self._configure(kernel, command)
        anchor = running_cell_id(self.shell)
        if anchor is not None:
            agent.changes.anchor = anchor  # new cells go below this one
        name = command.name
        if name == Subcommand.cell:
            name = Subcommand.plan if agent.role == "planner" else Subcommand.act
        return _HANDLERS[name](self, _Call(kernel, agent, command, name))

    # --- each subcommand, once the agent is configured ------------------------------------

    def _stop(self, call: _Call) -> None:
        if not call.agent.running:
            print("The agent is not running.")
        call.agent.stop()

    def _login(self, call: _Call) -> None:
        _login(call.kernel, call.agent)

    def _logout(self, call: _Call) -> None:
        removed = credentials.remove_saved_key()
        print(
            f"Removed the saved key ({removed})."
            if removed
            else f"There is no saved key ({credentials.credentials_file()})."
        )
        if call.kernel.panel is not None:
            call.kernel.panel.refresh_model()

    def _mcp(self, call: _Call) -> None:
        show_mcp(call.agent, live=in_kernel(self.shell))

    def _trust(self, call: _Call) -> None:
        panel = call.kernel.panel
        try:
            applied = call.agent.trust_workspace()
        except SettingsError as exc:
            raise UsageError(str(exc)) from None
        finally:
            if panel is not None:
                panel.refresh()
        if panel is not None:
            panel.trusted(applied)
        print(applied.applied_text())

    def _role(self, call: _Call) -> None:
        assert call.command.role is not None
        try:
            call.agent.set_role(call.command.role)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        if call.kernel.panel is not None:
            call.kernel.panel.refresh()
        print(f"Role: {call.agent.role}")

    def _model(self, call: _Call) -> None:
        agent = call.agent
        if call.command.model is None:
            _show_models(agent)
            return
        problem = model_setup(agent.model)
        print(f"Model: {agent.model.name} ({agent.model.provider})")
        if problem:
            print(problem)

    def _remember_or_compact(self, call: _Call) -> RunHandle:
        agent, kernel, command = call.agent, call.kernel, call.command
        start: Callable[[], RunHandle] = (
            (lambda: agent.remember(command.task))
            if call.name == Subcommand.remember
            else agent.compact
        )
        if not in_kernel(self.shell):
            return _run_in_terminal(agent, start)
        panel = kernel.ensure_panel()
        self._show(kernel, command)  # first: the run starts at once, on the agent's thread
        try:
            handle = start()
        except (AgentError, ValueError, RuntimeError) as exc:
            raise UsageError(str(exc)) from None
        # A remember edit runs as the Actor; the panel shows the agent's own role once
        # it ends.
        handle.add_done_callback(lambda _: panel.refresh())
        self._keep_as_underscore(handle)
        return handle

    def _show_panel(self, call: _Call) -> None:
        if in_kernel(self.shell):
            self._show(call.kernel, call.command)
        else:
            print(f"{call.agent!r}")

    def _help(self, call: _Call | None) -> None:
        print(inspect.cleandoc(AgentMagics.agent.__doc__ or ""))

    def _run(self, call: _Call) -> RunHandle | None:
        """``plan`` or ``act``, or a ``%%agent`` cell: start a run of the task (or, while
        the model cannot be called, keep it in the panel until it can)."""
        agent, kernel, command = call.agent, call.kernel, call.command
        if call.command.name == Subcommand.cell:
            role = agent.role  # a %%agent cell without --role: the agent's own role
        else:
            role = "planner" if call.name == Subcommand.plan else "actor"
        if not in_kernel(self.shell):
            return _run_in_terminal(agent, lambda: agent.start(command.task, role=role))
        # Shown before the run starts: it starts at once, on the agent's own thread, and
        # this display is the one that records it from its first event.
        self._show(kernel, command)
        if model_setup(agent.model) and not agent.running:
            # Day one: no key yet. The panel's set-up box takes one; the task waits there.
            kernel.ensure_panel().keep_task(command.task, role)
            print(
                "The model needs a key first: give one in the panel's set-up box (or "
                "%agent login). Your task waits there and starts once the model can be called."
            )
            return None
        try:
            handle = agent.start(command.task, role=role)
        except (AgentError, ValueError, RuntimeError) as exc:
            raise UsageError(str(exc)) from None
        self._keep_as_underscore(handle)
        return handle

    def _keep_as_underscore(self, handle: RunHandle) -> None:
        """A bare line shows no result (quiet_bare_runs), so IPython would not make the
        handle ``_``: do it here, as it would for any result."""
        update_unders = getattr(getattr(self.shell, "displayhook", None), "update_user_ns", None)
        if update_unders is not None:
            update_unders(handle)

    def _configure(self, kernel: KernelAgent, command: Command) -> Agent:
        assert self.shell is not None  # a magic runs in a shell
        model = model_from_spec(command.model, self.shell.user_ns) if command.model else None
        if command.resume is not None:
            try:
                agent = kernel.resume(command.resume or None, model=model)
            except (AgentError, ValueError) as exc:
                raise UsageError(str(exc)) from None
            if kernel.moved_from is not None:
                print(
                    f"Session {agent.session.id} worked on {kernel.moved_from}: it goes on in "
                    "this notebook, and its cell references (cells of that notebook) are dropped."
                )
        else:
            try:
                agent = kernel.ensure(model)
            except (AgentError, ValueError) as exc:
                raise UsageError(str(exc)) from None
        if command.notebook is not None:
            try:
                kernel.bind_notebook(command.notebook)
            except ValueError as exc:
                raise UsageError(str(exc)) from None
        if command.max_steps is not None:
            agent.limits.max_steps = command.max_steps
        if command.loop is not None:
            agent.loop = command.loop
        if kernel.panel is not None:
            kernel.panel.refresh()
        return agent

    def _show(self, kernel: KernelAgent, command: Command) -> None:
        panel = kernel.ensure_panel()
        if command.side:
            panel.dock = "side"
        panel.show()


@dataclass
class _Call:
    """One ``%agent`` call, its agent configured: what a subcommand's handler works with."""

    kernel: KernelAgent
    agent: Agent
    command: Command
    name: Subcommand
    """The subcommand, a ``%%agent`` cell's resolved to plan or act."""


_HANDLERS: dict[Subcommand, Callable[[AgentMagics, _Call], RunHandle | None]] = {
    Subcommand.plan: AgentMagics._run,
    Subcommand.act: AgentMagics._run,
    Subcommand.remember: AgentMagics._remember_or_compact,
    Subcommand.compact: AgentMagics._remember_or_compact,
    Subcommand.stop: AgentMagics._stop,
    Subcommand.role: AgentMagics._role,
    Subcommand.model: AgentMagics._model,
    Subcommand.trust: AgentMagics._trust,
    Subcommand.login: AgentMagics._login,
    Subcommand.logout: AgentMagics._logout,
    Subcommand.mcp: AgentMagics._mcp,
    Subcommand.help: AgentMagics._help,  # answered before the agent is made, as here
    Subcommand.show: AgentMagics._show_panel,
    Subcommand.cell: AgentMagics._run,  # resolved to plan or act by the agent's role first
}
"""What each subcommand does (every subcommand: checked below)."""

if set(_HANDLERS) != set(Subcommand):  # pragma: no cover - a developer's slip
    raise ImportError("every %agent subcommand needs its handler")


def _show_models(agent: Agent) -> None:
    """``%agent model`` without a name: the model in use, and the others configured."""
    for choice in model_choices(agent):
        mark = "*" if choice["current"] else " "
        state = "ready" if choice["ready"] else choice["setup"]
        print(f"{mark} {choice['label']}  ({state})")
    print("Switch with %agent model MODEL (see %agent help for model strings).")
    policy = current_policy()
    if policy.sources:
        print(f"Your administrator's policy ({policy.where}) fixes:")
        for line in policy.fixed():
            print(f"- {line}")


def _login(kernel: KernelAgent, agent: Agent) -> None:
    """Ask for the key with getpass (the kernel's stdin channel: not shown, not saved in
    the notebook), then whether to save it for the user."""
    import getpass

    provider = agent.model.provider
    if provider not in credentials.PROVIDERS:
        raise UsageError(f"{agent.model.name} ({provider}) takes no key: " + keyless(provider))
    vendor = {"anthropic": "Anthropic", "openai": "OpenAI"}[provider]
    try:
        key = getpass.getpass(f"{vendor} API key (hidden; Enter alone to cancel): ")
    except (EOFError, KeyboardInterrupt):
        key = ""
    except Exception:  # a frontend that cannot ask (nbconvert, papermill)
        raise UsageError(
            "%agent login needs a frontend that can ask for input: use the panel's key "
            f"field, or set ANTHROPIC_API_KEY in {key_environment()}"
        ) from None
    if not key.strip():
        print("No key entered; nothing changed.")
        return
    where = credentials.credentials_file()
    try:
        answer = input(f"Save it for your user in {where} (owner-only)? [y/N] ")
    except (EOFError, KeyboardInterrupt):
        answer = ""
    try:
        saved = use_api_key(agent, key, save=answer.strip().lower()[:1] == "y")
    except (ValueError, OSError) as exc:
        raise UsageError(str(exc)) from None
    finally:
        del key
    if kernel.panel is not None:
        kernel.panel.refresh_model()
    print(
        f"The key is in use and saved in {saved} (only you can read it)."
        if saved
        else "The key is in use for this session (kept in memory, not saved)."
    )


# --- terminal IPython: no frontend, so the magic waits and prints --------------------------


def _run_in_terminal(agent: Agent, start: Callable[[], RunHandle]) -> RunHandle:
    """Run (``start()``) to the end on IPython's event loop, printing as it goes; Ctrl-C
    stops."""
    from IPython.core.async_helpers import get_asyncio_loop

    loop: asyncio.AbstractEventLoop = get_asyncio_loop()
    unsubscribe = agent.subscribe(TextRenderer(sys.stdout))
    holder: list[RunHandle] = []

    async def drive() -> RunHandle:
        handle = start()
        holder.append(handle)
        async for event in handle.events():
            if event.kind == "question":
                await _ask(handle, event.question)
            elif event.kind == "permission_request":
                answer = await _prompt("allow? [y]es / [a]lways / [n]o: ")
                if answer is None:
                    handle.stop()
                    continue
                word = answer.strip().lower()[:1]
                handle.approve(word in ("y", "a"), remember=word == "a")
        return await handle.wait()

    try:
        try:
            return loop.run_until_complete(drive())
        except KeyboardInterrupt:
            if not holder:
                raise
            holder[0].stop()
            return loop.run_until_complete(holder[0].wait())
        except (AgentError, ValueError) as exc:
            raise UsageError(str(exc)) from None
    finally:
        unsubscribe()


async def _ask(handle: RunHandle, question: Any) -> None:
    while True:
        answer = await _prompt("your answer: ")
        if answer is None:  # no one can type (stdin closed): stop rather than guess
            handle.stop()
            return
        try:
            handle.answer(answer)
            return
        except ValueError as exc:
            print(f"  {exc}")


async def _prompt(text: str) -> str | None:
    loop = asyncio.get_running_loop()
    try:
        return await loop.run_in_executor(None, input, text)
    except EOFError:
        return None
