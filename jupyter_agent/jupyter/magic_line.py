"""What a ``%agent`` line or ``%%agent`` cell asks for: its subcommand and options, read
into a :class:`Command` (:func:`parse`), and the input transformers that keep such a line
a call of the magic.

Invariant: the subcommands are a fixed set (:class:`Subcommand`), and every one of them has
its reader of the rest of the line here and its handler in ``magic.py``; both tables are
checked complete at import. Every error is a ``UsageError`` with one line saying what is
wrong.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from IPython.core.error import UsageError

from ..models import Model, ScriptedModel


class Subcommand(str, Enum):
    """What a ``%agent`` line asks for: the word after ``%agent``, or what stands for it."""

    plan = "plan"
    act = "act"
    remember = "remember"
    compact = "compact"
    stop = "stop"
    role = "role"
    model = "model"
    trust = "trust"
    login = "login"
    logout = "logout"
    mcp = "mcp"
    help = "help"
    show = ""
    """No subcommand: show the panel."""
    cell = "cell"
    """A ``%%agent`` cell: the cell is the task, for the agent's role or ``--role``."""


SUBCOMMANDS = tuple(s.value for s in Subcommand if s not in (Subcommand.show, Subcommand.cell))
"""The words a ``%agent`` line may start with."""
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
    "--notebook": True,
}


@dataclass
class Command:
    """What one ``%agent`` line (or ``%%agent`` cell) asks for."""

    name: Subcommand = Subcommand.show
    task: str = ""
    model: str | None = None
    max_steps: int | None = None
    loop: str | None = None
    resume: str | None = None
    """None: no --resume; "": the newest session; else a session id."""
    side: bool = False
    role: str | None = None
    notebook: str | None = None
    """A notebook file to work on (a kernel that does not know its own)."""


def parse(line: str, cell: str | None = None) -> Command:
    """Parse a magic line: options, then a subcommand, then options, then the task.

    Options are only read before the task, so a task may mention ``--force`` freely.
    Raises UsageError with one line saying what is wrong.
    """
    command = Command()
    rest = line[_read_head(command, line, cell) :].strip()
    if cell is not None:
        return _cell_command(command, cell)
    if command.role is not None:
        raise UsageError("--role is for %%agent; on a line use %agent plan, act or role NAME")
    _REST[command.name](command, rest)
    return command


def _read_head(command: Command, line: str, cell: str | None) -> int:
    """Read the options and the subcommand into ``command``; where the task begins."""
    pos = 0
    seen_name = False
    while (match := _TOKEN.match(line, pos)) is not None:
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
        command.name, seen_name, pos = Subcommand(token), True, match.end()
    return pos


def _cell_command(command: Command, cell: str) -> Command:
    roles = {"planner": Subcommand.plan, "actor": Subcommand.act}
    command.name = roles.get(command.role or "", Subcommand.cell)
    command.task = cell.strip()
    if not command.task:
        raise UsageError("the %%agent cell is empty: write the task below %%agent")
    return command


# --- what follows the subcommand on its line, by subcommand ----------------------------


def _task(asks: str) -> Callable[[Command, str], None]:
    """The rest of the line is the task; ``asks`` says what to write when there is none."""

    def read(command: Command, rest: str) -> None:
        if not rest:
            raise UsageError(asks.format(name=command.name.value))
        command.task = rest

    return read


def _role(command: Command, rest: str) -> None:
    words = rest.split()
    if len(words) != 1:
        raise UsageError("say which role: %agent role NAME (e.g. planner or actor)")
    command.role = words[0]


def _model(command: Command, rest: str) -> None:
    words = rest.split()
    if len(words) > 1:
        raise UsageError("say which model: %agent model MODEL (or %agent model to list them)")
    command.model = words[0] if words else None


def _no_key(command: Command, rest: str) -> None:
    if rest:  # never echoed: it may be a key someone typed into the cell
        raise UsageError(
            f"%agent {command.name.value} takes no text: it asks for the key where it is not "
            "shown or saved (never put a key in a cell)"
        )


def _no_text(command: Command, rest: str) -> None:
    if rest:
        raise UsageError(f"%agent {command.name.value} takes no text, got {rest!r}")


_REST: dict[Subcommand, Callable[[Command, str], None]] = {
    Subcommand.plan: _task("say what to do: %agent {name} TASK"),
    Subcommand.act: _task("say what to do: %agent {name} TASK"),
    Subcommand.remember: _task("say what to remember: %agent remember TEXT"),
    Subcommand.role: _role,
    Subcommand.model: _model,
    Subcommand.login: _no_key,
    Subcommand.logout: _no_key,
    Subcommand.compact: _no_text,
    Subcommand.stop: _no_text,
    Subcommand.trust: _no_text,
    Subcommand.mcp: _no_text,
    Subcommand.help: _no_text,
    Subcommand.show: _no_text,
    Subcommand.cell: _no_text,  # never on a line: a cell's command is made whole
}
"""How each subcommand reads the rest of its line (every subcommand: checked below)."""


def _option(command: Command, line: str, match: re.Match[str]) -> int:
    """Read the option ``match`` found (and its value) into ``command``; where it ends."""
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
        value, end = _following_value(name, takes, line, end)
    _SET_OPTION[name](command, value)
    return end


def _following_value(name: str, takes: bool | None, line: str, end: int) -> tuple[str, int]:
    """The value written after option ``name`` (ending at ``end``), and where it ends;
    ``takes`` None: optional (``--resume [ID]``, whose value is a session id)."""
    following = _TOKEN.match(line, end)
    candidate = following.group(1) if following else None
    if takes is None:
        if following is not None and candidate and _SESSION_ID.fullmatch(candidate):
            return candidate, following.end()
        return "", end
    if following is None or candidate is None or candidate.startswith("--"):
        raise UsageError(f"{name} needs a value")
    return candidate, following.end()


def _set_max_steps(command: Command, value: str) -> None:
    try:
        command.max_steps = int(value)
    except ValueError:
        raise UsageError(f"--max-steps needs a whole number, got {value!r}") from None
    if command.max_steps < 1:
        raise UsageError("--max-steps must be at least 1")


def _set_loop(command: Command, value: str) -> None:
    if value not in LOOPS:
        raise UsageError(f"--loop is one of {', '.join(LOOPS)}, got {value!r}")
    command.loop = value


def _set_model(command: Command, value: str) -> None:
    command.model = value


def _set_resume(command: Command, value: str) -> None:
    command.resume = value


def _set_role(command: Command, value: str) -> None:
    command.role = value


def _set_notebook(command: Command, value: str) -> None:
    command.notebook = value


_SET_OPTION: dict[str, Callable[[Command, str], None]] = {
    "--model": _set_model,
    "--max-steps": _set_max_steps,
    "--loop": _set_loop,
    "--resume": _set_resume,
    "--role": _set_role,
    "--notebook": _set_notebook,
}
"""Each option that takes a value, and how it is kept (``--side`` is a flag)."""

if set(_REST) != set(Subcommand) or set(_SET_OPTION) | {"--side"} != set(OPTIONS):
    raise ImportError("every subcommand and option of %agent needs its reader")  # pragma: no cover


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
