"""Permission rules: which permitted calls run at once, which are refused, which ask.

A :class:`Rule` has a scope, a priority, a matcher and a decision. :class:`Rules`
evaluates them in a fixed order — scope first (user > session > role > global),
then higher priority, then at equal priority deny before ask before allow — and the
first rule that matches decides. No match means ask.

Shell commands are parsed with tree-sitter-bash (:mod:`jupyter_agent.commands`) and
judged part by part: every program the line runs, at any depth (lists, pipelines,
subshells, ``$(…)``, functions, here-documents), and every redirection as a file write.
The line runs without asking only if every part would; a line the parser does not fully
understand always asks. Prefixes match whole words: ``git status`` does not match
``git statusx``.
"""

from __future__ import annotations

import fnmatch
import json
import posixpath
import re
import shlex
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, TypeAdapter

from .approvals import RememberOption
from .commands.analysis import Invocation, Word, analyze, harmless_variable, program_name
from .globs import glob_matches
from .paths import Root, read_regular
from .permissions import Allow, Ask, Decision, Deny, Permission, ToolCall

Scope = Literal["global", "role", "session", "user"]
DecisionName = Literal["allow", "deny", "ask"]

_SCOPE_RANK = {"user": 0, "session": 1, "role": 2, "global": 3}
_DECISION_RANK = {"deny": 0, "ask": 1, "allow": 2}
_COMMAND_TOOLS = frozenset({"execute_command"})
RULES_LIMIT = 16 << 20
"""Bytes of a rules file read at most."""


# --- matchers ---------------------------------------------------------------------


class _Matcher(BaseModel):
    model_config = ConfigDict(extra="forbid")

    def matches(self, call: ToolCall) -> bool:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError


class ToolName(_Matcher):
    kind: Literal["tool"] = "tool"
    name: str

    def matches(self, call: ToolCall) -> bool:
        return call.name == self.name

    def describe(self) -> str:
        return f"tool {self.name}"


class Category(_Matcher):
    kind: Literal["category"] = "category"
    category: str

    def matches(self, call: ToolCall) -> bool:
        return call.category == self.category

    def describe(self) -> str:
        return f"{self.category} tools"


class RequiresPermission(_Matcher):
    """Tools that need this permission (e.g. every tool that needs ``delete_files``)."""

    kind: Literal["permission"] = "permission"
    permission: str

    def matches(self, call: ToolCall) -> bool:
        return self.permission in call.permissions

    def describe(self) -> str:
        return f"tools needing {self.permission}"


class NoPermission(_Matcher):
    """Tools that declare no permission at all (pure functions, control tools)."""

    kind: Literal["no_permission"] = "no_permission"

    def matches(self, call: ToolCall) -> bool:
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

    def matches(self, call: ToolCall) -> bool:
        command = call.input.get("command")
        if call.name not in _COMMAND_TOOLS or not isinstance(command, str):
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
        argv = _known_argv(invocation)
        if self.exact:
            return argv is not None and _named(argv) == _named(want)
        head = invocation.words[: len(want)]
        if len(head) < len(want) or not all(w.static for w in head):
            return False
        return _named(tuple(w.value or "" for w in head)) == _named(want)

    def describe(self) -> str:
        if self.exact:
            return f"exactly `{self.prefix}`"
        if self.read_only:
            return f"`{self.prefix}` when it only reads"
        return f"commands starting with `{self.prefix}`"


def _known_argv(invocation: Invocation) -> tuple[str, ...] | None:
    """The program's words when all are known before running: not when a wrapper adds
    arguments it reads at run time (``xargs rm`` is not exactly ``rm``)."""
    return None if "xargs" in invocation.wrappers else invocation.argv


def _named(argv: tuple[str, ...]) -> tuple[str, ...]:
    """argv with its program as a name (``/usr/bin/git`` is ``git``)."""
    name = program_name(Word(argv[0], argv[0])) if argv else None
    return ((name or argv[0]), *argv[1:]) if argv else argv


class PathGlob(_Matcher):
    """Calls touching a path matching a gitignore-style pattern (relative to the workspace)."""

    kind: Literal["path"] = "path"
    pattern: str

    def matches(self, call: ToolCall) -> bool:
        return any(glob_matches(self.pattern, list(PurePosixPath(p).parts)) for p in call.paths)

    def describe(self) -> str:
        return f"paths matching {self.pattern}"


class Regex(_Matcher):
    """A regular expression searched in one argument, or in ``name + arguments as JSON``."""

    kind: Literal["regex"] = "regex"
    pattern: str
    field: str | None = None

    def matches(self, call: ToolCall) -> bool:
        if self.field is not None:
            if self.field not in call.input:
                return False
            subject = str(call.input[self.field])
        else:
            subject = f"{call.name} {json.dumps(call.input, sort_keys=True, default=str)}"
        return re.search(self.pattern, subject) is not None

    def describe(self) -> str:
        return f"/{self.pattern}/" + (f" in {self.field}" if self.field else "")


class McpServer(_Matcher):
    """Tools of MCP servers, by server and tool name as the server gives them (shell-style
    patterns: ``{kind = "mcp", server = "github", tool = "search_*"}``)."""

    kind: Literal["mcp"] = "mcp"
    server: str = "*"
    tool: str = "*"

    def matches(self, call: ToolCall) -> bool:
        if call.server is None or call.server_tool is None:
            return False
        return fnmatch.fnmatchcase(call.server, self.server) and fnmatch.fnmatchcase(
            call.server_tool, self.tool
        )

    def describe(self) -> str:
        servers = "every MCP server" if self.server == "*" else f"MCP server {self.server}"
        return f"tools of {servers}" if self.tool == "*" else f"{servers}: tool {self.tool}"


class Everything(_Matcher):
    kind: Literal["all"] = "all"

    def matches(self, call: ToolCall) -> bool:
        return True

    def describe(self) -> str:
        return "every call"


class Custom(_Matcher):
    """A Python predicate over the call (kept in memory; not saved to JSON)."""

    kind: Literal["custom"] = "custom"
    name: str = "custom"
    fn: Callable[[ToolCall], bool] = Field(exclude=True)

    def matches(self, call: ToolCall) -> bool:
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


class Rule(BaseModel):
    model_config = ConfigDict(extra="forbid")

    matcher: Matcher
    decision: DecisionName
    scope: Scope = "global"
    target: str | None = None
    """The role name (role scope) or session id (session scope) the rule is for."""
    priority: int = 0
    description: str = ""
    id: str = Field(default_factory=lambda: uuid.uuid4().hex[:8])

    def applies_to(self, call: ToolCall) -> bool:
        if self.scope == "role" and self.target not in (None, call.role):
            return False
        if self.scope == "session" and self.target not in (None, call.session_id):
            return False
        return self.matcher.matches(call)

    def explain(self) -> str:
        return self.description or f"{self.decision} {self.matcher.describe()}"

    @property
    def sort_key(self) -> tuple[int, int, int]:
        return (_SCOPE_RANK[self.scope], -self.priority, _DECISION_RANK[self.decision])

    # builders, for readable rule lists
    @classmethod
    def allow(cls, matcher: Matcher | str, **kw: Any) -> Rule:
        return cls(matcher=_as_matcher(matcher), decision="allow", **kw)

    @classmethod
    def deny(cls, matcher: Matcher | str, **kw: Any) -> Rule:
        return cls(matcher=_as_matcher(matcher), decision="deny", **kw)

    @classmethod
    def ask(cls, matcher: Matcher | str, **kw: Any) -> Rule:
        return cls(matcher=_as_matcher(matcher), decision="ask", **kw)


def _as_matcher(matcher: Matcher | str) -> Matcher:
    return ToolName(name=matcher) if isinstance(matcher, str) else matcher


_RULES: TypeAdapter[list[Rule]] = TypeAdapter(list[Rule])


# --- evaluation -------------------------------------------------------------------


class Rules:
    """An ordered rule set: the default :class:`~jupyter_agent.permissions.PermissionPolicy`."""

    def __init__(self, rules: Iterable[Rule] = ()) -> None:
        self.rules: list[Rule] = list(rules)

    def __iter__(self) -> Iterator[Rule]:
        return iter(self.rules)

    def __len__(self) -> int:
        return len(self.rules)

    def add(self, *rules: Rule) -> None:
        self.rules.extend(rules)

    def remove(self, rule_id: str) -> None:
        self.rules = [r for r in self.rules if r.id != rule_id]

    def first_match(self, call: ToolCall) -> Rule | None:
        for rule in sorted(self.rules, key=lambda r: r.sort_key):
            if rule.applies_to(call):
                return rule
        return None

    def decide(self, call: ToolCall) -> Decision:
        parts = command_parts(call)
        if parts is None:
            return self._decide_one(call)
        problems = analyze(str(call.input.get("command", ""))).problems
        whole = self.first_match(call)
        if whole is not None and whole.decision == "deny":
            return Deny(whole.explain())  # a deny rule about the whole line holds
        decisions = [self._decide_one(part) for part in parts]
        if len(parts) > 1:  # say which part: the card shows the whole line
            decisions = [
                d if isinstance(d, Allow) else type(d)(f"`{_clip(p.summary)}`: {d.reason}")
                for p, d in zip(parts, decisions, strict=True)
            ]
        decisions.extend(Ask(p) for p in problems)
        if not decisions:
            return self._decide_one(call)
        return _combine(decisions)

    def _decide_one(self, call: ToolCall) -> Decision:
        rule = self.first_match(call)
        if rule is None:
            return Ask("no rule covers this call")
        reason = rule.explain()
        return {"allow": Allow, "deny": Deny, "ask": Ask}[rule.decision](reason)

    def remember(self, call: ToolCall, scope: str | None = None) -> str | None:
        """After "Always allow": narrow session rules allowing calls like this one.

        ``scope`` is the id of one of :meth:`remember_options`; ``None`` takes the first
        (the default). A scope not offered for ``call`` remembers nothing.

        By default a command is remembered program by program: one that only reads by its
        program (and subcommand), as a read-only rule (``git log``); any other by its exact
        words (``rm a.tmp``); one whose words are only known at run time not at all. A
        redirection is never remembered. Other tools are remembered by name.
        """
        for option, added in self._options(call):
            if scope is None or option.id == scope:
                self.rules.extend(added)
                return "; ".join(option.rules)
        return None

    def preview_remember(self, call: ToolCall) -> str | None:
        """What :meth:`remember` would add for ``call``, before the user clicks."""
        options = self._options(call)
        return "; ".join(options[0][0].rules) if options else None

    def remember_options(self, call: ToolCall) -> list[RememberOption]:
        """The scopes "Always allow" may take for ``call``, the default first: for a
        command that reads, its programs' read-only uses (``git log …``), then the exact
        command; for any other command, the exact command; for other tools, the tool for
        this session. None is ever wider than what :meth:`remember` adds by default, and
        none covers a redirection or a word known only at run time."""
        return [option for option, _ in self._options(call)]

    def _options(self, call: ToolCall) -> list[tuple[RememberOption, list[Rule]]]:
        choices: list[tuple[str, str, list[Matcher]]] = []
        if call.name in _COMMAND_TOOLS and isinstance(call.input.get("command"), str):
            line = analyze(str(call.input["command"]))
            default: list[Matcher] = []
            exact: list[Matcher] = []
            for invocation in line.invocations:
                if invocation.effect.problem:
                    continue
                argv = _known_argv(invocation)
                words = (
                    CommandPrefix(prefix=shlex.join(_named(argv)), exact=True)
                    if argv is not None
                    else None
                )
                if words is not None:
                    exact.append(words)
                if invocation.kind == "reads" and invocation.effect.key:
                    default.append(
                        CommandPrefix(prefix=shlex.join(invocation.effect.key), read_only=True)
                    )
                elif words is not None:
                    default.append(words)
            if any(isinstance(m, CommandPrefix) and m.read_only for m in default):
                choices.append(("read_only", _label(default, len(line.invocations)), default))
            choices.append(("exact", _label(exact, len(line.invocations)), exact))
        else:
            matchers: list[Matcher] = [ToolName(name=call.name)]
            choices.append(("tool", f"Always allow {call.name} this session", matchers))
        options: list[tuple[RememberOption, list[Rule]]] = []
        for option_id, label, wanted in choices:
            added = self._session_rules(call, wanted)
            if not added and not options:
                return []  # the default is remembered already: nothing left to offer
            same = [[r.matcher for r in other] for _, other in options]
            if added and [r.matcher for r in added] not in same:
                rules = [r.explain() for r in added]
                options.append((RememberOption(id=option_id, label=label, rules=rules), added))
        return options

    def _session_rules(self, call: ToolCall, matchers: Sequence[Matcher]) -> list[Rule]:
        """Session rules for ``matchers``, without those the session already has."""
        target = call.session_id or None
        added: list[Rule] = []
        for matcher in matchers:
            rule = Rule.allow(matcher, scope="session", target=target)
            known = [*self.rules, *added]
            if not any(r.matcher == rule.matcher and r.scope == "session" for r in known):
                added.append(rule)
        return added

    # --- files ---------------------------------------------------------------------

    def to_json(self) -> str:
        saved = [r for r in self.rules if not isinstance(r.matcher, Custom)]
        return _RULES.dump_json(saved, indent=1).decode()

    @classmethod
    def from_json(cls, text: str | bytes) -> Rules:
        return cls(_RULES.validate_json(text))

    def save(self, path: str | Path) -> None:
        """Write the rules to ``path`` (a file the caller names), atomically."""
        path = Path(path)
        Root(path.parent).write(path.name, self.to_json().encode())

    @classmethod
    def load(cls, path: str | Path) -> Rules:
        """The rules in ``path`` (a regular file the caller names)."""
        data, cut = read_regular(path, RULES_LIMIT)
        if cut:
            raise ValueError(f"{path} is larger than {RULES_LIMIT:,} bytes: not a rules file")
        return cls.from_json(data)

    @classmethod
    def defaults(cls) -> Rules:
        """Reading allowed; notebook edits allowed (they are undoable); file writes allowed
        (the sandbox keeps them inside the workspace); deletes, shell commands, running
        code in the kernel and the tools of MCP servers ask (those the user granted as
        read-only in the server's settings are reading tools, and run)."""
        P = Permission
        return cls(
            [
                Rule.allow(NoPermission(), description="tools that need no permission are allowed"),
                Rule.allow(Category(category="read"), description="reading is allowed"),
                Rule.allow(
                    RequiresPermission(permission=P.READ_NOTEBOOK),
                    priority=-1,
                    description="reading the notebook is allowed",
                ),
                Rule.allow(
                    RequiresPermission(permission=P.INSPECT_KERNEL),
                    priority=-1,
                    description="inspecting variables is allowed",
                ),
                Rule.allow(
                    RequiresPermission(permission=P.EDIT_NOTEBOOK),
                    priority=-2,
                    description="notebook edits are allowed (they can be undone)",
                ),
                Rule.allow(
                    RequiresPermission(permission=P.WRITE_FILES),
                    priority=-2,
                    description="file writes inside the workspace are allowed",
                ),
                Rule.ask(
                    RequiresPermission(permission=P.DELETE_FILES),
                    priority=10,
                    description="deleting files needs your approval",
                ),
                Rule.ask(
                    RequiresPermission(permission=P.EXECUTE_COMMANDS),
                    priority=10,
                    description="shell commands need your approval",
                ),
                Rule.ask(
                    RequiresPermission(permission=P.EXECUTE_CODE),
                    priority=10,
                    description="running code in the kernel needs your approval",
                ),
                Rule.ask(
                    RequiresPermission(permission=P.USE_MCP),
                    priority=10,
                    description="tools of MCP servers need your approval",
                ),
            ]
        )


def _combine(decisions: Sequence[Decision]) -> Decision:
    for kind in (Deny, Ask):
        found = [d for d in decisions if isinstance(d, kind)]
        if found:
            return kind("; ".join(dict.fromkeys(d.reason for d in found)))
    return Allow("every part of the command is allowed")


# --- shell commands ----------------------------------------------------------------


def command_parts(call: ToolCall) -> list[ToolCall] | None:
    """The parts a shell call is judged by: one call per program it runs (wrappers
    removed), and one file write per redirection. ``None`` for any other call."""
    command = call.input.get("command")
    if call.name not in _COMMAND_TOOLS or not isinstance(command, str):
        return None
    line = analyze(command)
    folder = str(call.input.get("working_dir", ".") or ".")
    parts = [
        replace(call, input={"command": invocation.text}, summary=invocation.text)
        for invocation in line.invocations
    ]
    for redirect in line.redirects:
        if not redirect.writes:
            continue
        target = redirect.target.value if redirect.target.static else None
        paths = (
            tuple(_relative_path(folder, cwd, target) for cwd in redirect.cwds)
            if target is not None
            else ()
        )
        parts.append(
            replace(
                call,
                category="write",
                input={"redirect": redirect.text, "path": target},
                summary=redirect.text,
                permissions=call.permissions | {Permission.WRITE_FILES},
                paths=paths,
            )
        )
    return parts


def _relative_path(folder: str, cwd: str | None, target: str) -> str:
    """A redirection's target as path rules see it: relative to the workspace when the
    words say so (lexically), else as written."""
    if target.startswith(("/", "~")) or cwd is None or cwd.startswith(("/", "~")):
        return target
    joined = posixpath.normpath(posixpath.join(folder, cwd, target))
    return joined if not joined.startswith("..") else target


def _label(matchers: Sequence[Matcher], programs: int) -> str:
    """The "Always allow" button's label: the scope it remembers, in a few words."""
    if all(isinstance(m, CommandPrefix) and m.exact for m in matchers) and programs == 1:
        return "Always allow this exact command"
    parts = []
    for m in matchers:
        if isinstance(m, CommandPrefix) and m.read_only:
            parts.append(f"`{m.prefix} …` when it only reads")
        elif isinstance(m, CommandPrefix):
            parts.append(f"exactly `{_clip(m.prefix, 40)}`")
    return "Always allow " + ", ".join(parts)


def _clip(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:  # unbalanced quotes: fall back to whitespace
        return command.split()
