"""The ``%agent`` and ``%%agent`` magics."""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand

from .. import credentials
from ..agent import Agent, RunHandle
from ..errors import AgentError
from ..models import Model, ScriptedModel
from ..render import TextRenderer
from ..settings import SettingsError
from ._mcp_status import show_mcp
from ._setup import keyless, model_choices, model_setup, use_api_key
from .kernel_agent import KernelAgent, in_kernel, kernel_agent, running_cell_id

SUBCOMMANDS = (
    "plan",
    "act",
    "remember",
    "compact",
    "stop",
    "role",
    "model",
    "trust",
    "login",
    "logout",
    "mcp",
    "help",
)
LOOPS = ("tool_use", "roa")
_SESSION_ID = re.compile(r"[0-9a-f]{12}")
# A line magic whose text ends with "?" (an assignment before it allowed), e.g.
# `h = %agent plan Why is February low?`
_QUESTION_LINE = re.compile(r"^(?P<lead>\s*(?:[\w.]+\s*=\s*)?)%agent\b(?P<text>.*\?)\s*$")
_TOKEN = re.compile(r"\s*(\S+)")
# A bare ``%agent …`` line or ``%%agent`` cell, as IPython rewrote it (not assigned).
_BARE_CALL = re.compile(r"^get_ipython\(\)\.run_(?:line|cell)_magic\('agent', .*\)[ \t]*$")

# name → takes a value: True (required), False (a flag), None (optional: --resume [ID])
OPTIONS: dict[str, bool | None] = {
    "--model": True,
    "--max-steps": True,
    "--loop": True,
    "--resume": None,
    "--side": False,
    "--role": True,
}


@dataclass
class Command:
    """What one ``%agent`` line (or ``%%agent`` cell) asks for."""

    name: str = ""
    """plan, act, remember, compact, stop, role, trust, help, or "" (show the panel)."""
    task: str = ""
    model: str | None = None
    max_steps: int | None = None
    loop: str | None = None
    resume: str | None = None
    """None: no --resume; "": the newest session; else a session id."""
    side: bool = False
    role: str | None = None


def parse(line: str, cell: str | None = None) -> Command:
    """Parse a magic line: options, then a subcommand, then options, then the task.

    Options are only read before the task, so a task may mention ``--force`` freely.
    Raises UsageError with one line saying what is wrong.
    """
    command = Command()
    pos = 0
    seen_name = False
    while True:
        match = _TOKEN.match(line, pos)
        if match is None:
            break
        token = match.group(1)
        if token.startswith("--"):
            pos = _option(command, line, match)
            continue
        if cell is not None:
            raise UsageError(
                f"%%agent takes only options on its first line, not {token!r}: "
                "the cell below it is the task"
            )
        if seen_name:
            break
        if token not in SUBCOMMANDS:
            raise UsageError(
                f"unknown subcommand {token!r}: use %agent plan TASK, %agent act TASK, "
                "%agent stop, %agent role NAME (see %agent?)"
            )
        command.name, seen_name, pos = token, True, match.end()
    rest = line[pos:].strip()
    if cell is not None:
        command.name = {"planner": "plan", "actor": "act"}.get(command.role or "", "cell")
        command.task = cell.strip()
        if not command.task:
            raise UsageError("the %%agent cell is empty: write the task below %%agent")
        return command
    if command.role is not None:
        raise UsageError("--role is for %%agent; on a line use %agent plan, act or role NAME")
    if command.name in ("plan", "act"):
        if not rest:
            raise UsageError(f"say what to do: %agent {command.name} TASK")
        command.task = rest
    elif command.name == "remember":
        if not rest:
            raise UsageError("say what to remember: %agent remember TEXT")
        command.task = rest
    elif command.name == "role":
        words = rest.split()
        if len(words) != 1:
            raise UsageError("say which role: %agent role NAME (e.g. planner or actor)")
        command.role = words[0]
    elif command.name == "model":
        words = rest.split()
        if len(words) > 1:
            raise UsageError("say which model: %agent model MODEL (or %agent model to list them)")
        command.model = words[0] if words else None
    elif rest and command.name in ("login", "logout"):
        # Never echoed: it may be a key someone typed into the cell.
        raise UsageError(
            f"%agent {command.name} takes no text: it asks for the key where it is not "
            "shown or saved (never put a key in a cell)"
        )
    elif rest:
        raise UsageError(f"%agent {command.name} takes no text, got {rest!r}")
    return command


def _option(command: Command, line: str, match: re.Match[str]) -> int:
    token = match.group(1)
    name, eq, value = token.partition("=")
    if name not in OPTIONS:
        known = ", ".join(OPTIONS)
        raise UsageError(f"unknown option {name}; the options are {known} (see %agent?)")
    takes = OPTIONS[name]
    end = match.end()
    if takes is False:
        if eq:
            raise UsageError(f"{name} takes no value")
        command.side = True
        return end
    if not eq:
        following = _TOKEN.match(line, end)
        candidate = following.group(1) if following else None
        if takes is None:  # --resume [ID]
            if following is not None and candidate and _SESSION_ID.fullmatch(candidate):
                value, end = candidate, following.end()
        elif following is None or candidate is None or candidate.startswith("--"):
            raise UsageError(f"{name} needs a value")
        else:
            value, end = candidate, following.end()
    if name == "--model":
        command.model = value
    elif name == "--max-steps":
        try:
            command.max_steps = int(value)
        except ValueError:
            raise UsageError(f"--max-steps needs a whole number, got {value!r}") from None
        if command.max_steps < 1:
            raise UsageError("--max-steps must be at least 1")
    elif name == "--loop":
        if value not in LOOPS:
            raise UsageError(f"--loop is one of {', '.join(LOOPS)}, got {value!r}")
        command.loop = value
    elif name == "--resume":
        command.resume = value
    elif name == "--role":
        command.role = value
    return end


def model_from_spec(spec: str, namespace: dict[str, Any]) -> str | Model:
    """A --model value: ``$name`` (a Model in the namespace), ``scripted:PATH.json`` (a
    scripted replay from a file) or a Claude model id."""
    if spec.startswith("$"):
        name = spec[1:]
        if name not in namespace:
            raise UsageError(f"--model {spec}: there is no variable {name!r} in this kernel")
        value = namespace[name]
        if not isinstance(value, Model):
            kind = type(value).__name__
            raise UsageError(f"--model {spec}: {name} is a {kind}, not a model")
        return value
    if spec.startswith("scripted:"):
        path = Path(spec.removeprefix("scripted:")).expanduser()
        try:
            return ScriptedModel(path)
        except FileNotFoundError:
            raise UsageError(f"--model {spec}: no such file {str(path)!r}") from None
        except (OSError, ValueError) as exc:
            raise UsageError(f"--model {spec}: not a script of turns ({exc})") from None
    return spec


def keep_question_marks(lines: list[str]) -> list[str]:
    """An input transformer: ``%agent plan Why is February low?`` is a task, not a help
    request. IPython reads a line ending in ``?`` as "show help for the last word", so
    such a line is turned into the magic's call before IPython looks (``%agent?`` alone
    still shows the help)."""
    out = []
    for line in lines:
        match = _QUESTION_LINE.match(line)
        text = match.group("text").strip() if match else ""
        if match and text not in ("?", "??"):
            end = "\n" if line.endswith("\n") else ""
            line = f"{match.group('lead')}get_ipython().run_line_magic('agent', {text!r}){end}"
        out.append(line)
    return out


def quiet_bare_runs(lines: list[str]) -> list[str]:
    """An input transformer (after IPython's own): a bare ``%agent plan …`` (or
    ``%%agent`` cell) echoes nothing. The magic returns the run's handle so that
    ``h = %agent plan …`` keeps it, but echoed as a cell's result it would show the state
    the run had when it began (``idle``) forever after, under a panel showing the run.
    A trailing ``;`` is IPython's own way to keep a result quiet."""
    out = []
    for line in lines:
        body = line.rstrip("\n")
        if _BARE_CALL.match(body):
            line = body.rstrip() + ";" + line[len(body) :]
        out.append(line)
    return out


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
          --resume [SESSION_ID]    continue a saved session (the newest without an id);
                                   the panel's session picker does the same
          --side                   dock the panel in JupyterLab's right sidebar

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
        if command.name == "help":
            print(AgentMagics.agent.__doc__)
            return None
        kernel = kernel_agent(self.shell)
        agent = self._configure(kernel, command)
        anchor = running_cell_id(self.shell)
        if anchor is not None:
            agent.changes.anchor = anchor  # new cells go below this one
        name = command.name
        if name == "cell":
            name = "plan" if agent.role == "planner" else "act"
            role: str | None = agent.role
        else:
            role = {"plan": "planner", "act": "actor"}.get(name)
        if name == "stop":
            if not agent.running:
                print("The agent is not running.")
            agent.stop()
            return None
        if name == "login":
            _login(kernel, agent)
            return None
        if name == "logout":
            removed = credentials.remove_saved_key()
            print(
                f"Removed the saved key ({removed})."
                if removed
                else f"There is no saved key ({credentials.credentials_file()})."
            )
            if kernel.panel is not None:
                kernel.panel.refresh_model()
            return None
        if name == "mcp":
            show_mcp(agent, live=in_kernel(self.shell))
            return None
        if name == "trust":
            try:
                applied = agent.trust_workspace()
            except SettingsError as exc:
                raise UsageError(str(exc)) from None
            finally:
                if kernel.panel is not None:
                    kernel.panel.refresh()
            if kernel.panel is not None:
                kernel.panel.trusted(applied)
            print(applied.applied_text())
            return None
        if name == "role":
            assert command.role is not None
            try:
                agent.set_role(command.role)
            except ValueError as exc:
                raise UsageError(str(exc)) from None
            if kernel.panel is not None:
                kernel.panel.refresh()
            print(f"Role: {agent.role}")
            return None
        if name == "model":
            if command.model is None:
                _show_models(agent)
            else:
                problem = model_setup(agent.model)
                print(f"Model: {agent.model.name} ({agent.model.provider})")
                if problem:
                    print(problem)
            return None
        if name in ("remember", "compact"):
            start: Callable[[], RunHandle] = (
                (lambda: agent.remember(command.task)) if name == "remember" else agent.compact
            )
            if not in_kernel(self.shell):
                return _run_in_terminal(agent, start)
            panel = kernel.ensure_panel()
            try:
                handle = start()
            except (AgentError, ValueError, RuntimeError) as exc:
                raise UsageError(str(exc)) from None
            # A remember edit runs as the Actor; the panel shows the agent's own role once
            # it ends.
            handle.add_done_callback(lambda _: panel.refresh())
            self._show(kernel, command)
            self._keep_as_underscore(handle)
            return handle
        if name not in ("plan", "act"):
            if in_kernel(self.shell):
                self._show(kernel, command)
            else:
                print(f"{agent!r}")
            return None
        if not in_kernel(self.shell):
            return _run_in_terminal(agent, lambda: agent.start(command.task, role=role))
        kernel.ensure_panel()  # before the run starts, so it sees the run's first event
        try:
            handle = agent.start(command.task, role=role)
        except (AgentError, ValueError, RuntimeError) as exc:
            raise UsageError(str(exc)) from None
        self._show(kernel, command)
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
        else:
            try:
                agent = kernel.ensure(model)
            except (AgentError, ValueError) as exc:
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


def _show_models(agent: Agent) -> None:
    """``%agent model`` without a name: the model in use, and the others configured."""
    for choice in model_choices(agent):
        mark = "*" if choice["current"] else " "
        state = "ready" if choice["ready"] else choice["setup"]
        print(f"{mark} {choice['label']}  ({state})")
    print("Switch with %agent model MODEL (see %agent help for model strings).")


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
            "field, or set ANTHROPIC_API_KEY in the environment Jupyter starts in"
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
