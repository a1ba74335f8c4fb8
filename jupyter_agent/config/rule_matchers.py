"""What a permission rule matches: tools, categories, permissions, commands, paths, patterns.

Each matcher is a tagged pydantic model (``kind``), so rule files load and save as JSON;
:data:`Matcher` is their union. Invariant: :meth:`matches` never raises for a call a tool
could receive, and a pattern that cannot be matched within its time budget answers
``None`` (the rule, not the matcher, decides what that means: see
:meth:`~jupyter_agent.config.rules.Rule.applies_to`).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, field_validator

from .._wording import code, name
from ..commands.analysis import (
    NO_FILE_EFFECTS,
    Invocation,
    Word,
    analyze,
    harmless_variable,
    program_name,
    touches_no_files,
)
from ..permissions import ToolCall
from ..workspace.globs import compile_glob, glob_test
from ..workspace.patterns import Budget, compile_name, compile_regex

COMMAND_TOOLS = frozenset({"execute_command"})
"""The tools whose ``command`` input is a shell command line."""


class _Matcher(BaseModel):
    model_config = ConfigDict(extra="forbid")

    def matches(self, call: ToolCall, budget: Budget | None = None) -> bool | None:
        """Whether the call matches; ``None`` when a pattern could not be matched within
        ``budget`` (the rule decides what that means)."""
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError


class ToolName(_Matcher):
    kind: Literal["tool"] = "tool"
    name: str

    def matches(self, call: ToolCall, budget: Budget | None = None) -> bool | None:
        return call.name == self.name

    def describe(self) -> str:
        return f"tool {name(self.name)}"


class Category(_Matcher):
    kind: Literal["category"] = "category"
    category: str

    def matches(self, call: ToolCall, budget: Budget | None = None) -> bool | None:
        return call.category == self.category

    def describe(self) -> str:
        return f"{name(self.category)} tools"


class RequiresPermission(_Matcher):
    """Tools that need this permission (e.g. every tool that needs ``delete_files``)."""

    kind: Literal["permission"] = "permission"
    permission: str

    def matches(self, call: ToolCall, budget: Budget | None = None) -> bool | None:
        return self.permission in call.permissions

    def describe(self) -> str:
        return f"tools needing {name(self.permission)}"


class NoPermission(_Matcher):
    """Tools that declare no permission at all (pure functions, control tools)."""

    kind: Literal["no_permission"] = "no_permission"

    def matches(self, call: ToolCall, budget: Budget | None = None) -> bool | None:
        return not call.permissions

    def describe(self) -> str:
        return "tools that need no permission"


class CommandPrefix(_Matcher):
    """A shell command whose program runs with these first words (whole words only).

    Wrappers do not count (``timeout 60 pytest`` starts with ``pytest``), and a rule
    never covers a redirection or a variable set for the program (``PATH=. ls``): those
    are judged on their own. ``exact`` and ``read_only`` make it narrower still, as
    "Always allow" remembers commands.
    """

    kind: Literal["command"] = "command"
    prefix: str
    exact: bool = False
    """Only these words, all of them, known before running (``rm a.tmp``, nothing more)."""
    read_only: bool = False
    """Only uses of this program (and subcommand) that read: ``git log`` covers ``git log
    -3`` but not ``git log --output=x``."""

    def matches(self, call: ToolCall, budget: Budget | None = None) -> bool | None:
        command = call.input.get("command")
        if call.name not in COMMAND_TOOLS or not isinstance(command, str):
            return False
        line = analyze(command)
        if len(line.invocations) != 1 or line.redirects or line.problems:
            return False
        return self.covers(line.invocations[0])

    def covers(self, invocation: Invocation) -> bool:
        want = tuple(_words(self.prefix))
        if not want or any(not harmless_variable(a.name) for a in invocation.assignments):
            return False
        if self.read_only:
            return invocation.kind == "reads" and invocation.effect.key == want
        argv = known_argv(invocation)
        if self.exact:
            return argv is not None and named_argv(argv) == named_argv(want)
        head = invocation.words[: len(want)]
        if len(head) < len(want) or not all(w.static for w in head):
            return False
        return named_argv(tuple(w.value or "" for w in head)) == named_argv(want)

    def describe(self) -> str:
        if self.exact:
            return f"exactly {code(self.prefix)}"
        if self.read_only:
            if touches_no_files(tuple(_words(self.prefix))):
                return f"{code(self.prefix)} ({NO_FILE_EFFECTS})"
            return f"{code(self.prefix)} when it only reads"
        return f"commands starting with {code(self.prefix)}"


def known_argv(invocation: Invocation) -> tuple[str, ...] | None:
    """The program's words when all are known before running: not when a wrapper adds
    arguments it reads at run time (``xargs rm`` is not exactly ``rm``)."""
    return None if "xargs" in invocation.wrappers else invocation.argv


def named_argv(argv: tuple[str, ...]) -> tuple[str, ...]:
    """argv with its program as a name (``/usr/bin/git`` is ``git``)."""
    name = program_name(Word(argv[0], argv[0])) if argv else None
    return ((name or argv[0]), *argv[1:]) if argv else argv


class PathGlob(_Matcher):
    """Calls touching a path matching a gitignore-style pattern (relative to the workspace)."""

    kind: Literal["path"] = "path"
    pattern: str

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, pattern: str) -> str:
        compile_glob(pattern)
        return pattern

    def matches(self, call: ToolCall, budget: Budget | None = None) -> bool | None:
        budget = budget or Budget()
        found: bool | None = False
        for path in call.paths:
            hit = glob_test(self.pattern, list(PurePosixPath(path).parts), budget=budget)
            if hit:
                return True
            if hit is None:
                found = None
        return found

    def describe(self) -> str:
        return f"paths matching {code(self.pattern)}"


class Regex(_Matcher):
    """A regular expression searched in one argument, or in ``name + arguments as JSON``."""

    kind: Literal["regex"] = "regex"
    pattern: str
    field: str | None = None

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, pattern: str) -> str:
        compile_regex(pattern)
        return pattern

    def matches(self, call: ToolCall, budget: Budget | None = None) -> bool | None:
        if self.field is not None:
            if self.field not in call.input:
                return False
            subject = str(call.input[self.field])
        else:
            subject = f"{call.name} {json.dumps(call.input, sort_keys=True, default=str)}"
        return (budget or Budget()).search(compile_regex(self.pattern), subject)

    def describe(self) -> str:
        where = f" in the argument {name(self.field)}" if self.field is not None else ""
        return f"calls matching the regular expression {code(self.pattern)}{where}"


class McpServer(_Matcher):
    """Tools of MCP servers, by server and tool name as the server gives them (shell-style
    patterns: ``{kind = "mcp", server = "github", tool = "search_*"}``)."""

    kind: Literal["mcp"] = "mcp"
    server: str = "*"
    tool: str = "*"

    @field_validator("server", "tool")
    @classmethod
    def _compiles(cls, pattern: str) -> str:
        compile_name(pattern)
        return pattern

    def matches(self, call: ToolCall, budget: Budget | None = None) -> bool | None:
        if call.server is None or call.server_tool is None:
            return False
        budget = budget or Budget()
        server = budget.match(compile_name(self.server), call.server)
        if server is False:
            return False
        tool = budget.match(compile_name(self.tool), call.server_tool)
        if tool is False:
            return False
        return None if None in (server, tool) else True

    def describe(self) -> str:
        servers = "every MCP server" if self.server == "*" else f"MCP server {name(self.server)}"
        return f"tools of {servers}" if self.tool == "*" else f"{servers}: tool {name(self.tool)}"


class Everything(_Matcher):
    kind: Literal["all"] = "all"

    def matches(self, call: ToolCall, budget: Budget | None = None) -> bool | None:
        return True

    def describe(self) -> str:
        return "every call"


class Custom(_Matcher):
    """A Python predicate over the call (kept in memory; not saved to JSON)."""

    kind: Literal["custom"] = "custom"
    name: str = "custom"
    fn: Callable[[ToolCall], bool] = Field(exclude=True)

    def matches(self, call: ToolCall, budget: Budget | None = None) -> bool | None:
        return bool(self.fn(call))

    def describe(self) -> str:
        return self.name


Matcher = Annotated[
    ToolName
    | Category
    | RequiresPermission
    | NoPermission
    | CommandPrefix
    | PathGlob
    | Regex
    | McpServer
    | Everything
    | Custom,
    Discriminator("kind"),
]


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:  # unbalanced quotes: fall back to whitespace
        return command.split()
