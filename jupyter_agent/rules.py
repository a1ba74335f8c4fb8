"""Permission rules: which permitted calls run at once, which are refused, which ask.

A :class:`Rule` has a scope, a priority, a matcher and a decision. :class:`Rules`
evaluates them in a fixed order — scope first (user > session > role > global),
then higher priority, then at equal priority deny before ask before allow — and the
first rule that matches decides. No match means ask.

Shell commands are judged part by part: ``a && b`` runs only if both ``a`` and ``b``
would, so an allowed prefix cannot smuggle in another command after ``;``, ``|``,
``&&``, ``||``, a newline, ``$(…)`` or backticks. Prefixes match whole words:
``git status`` does not match ``git statusx``.
"""

from __future__ import annotations

import json
import re
import shlex
import uuid
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, TypeAdapter

from .permissions import Allow, Ask, Decision, Deny, Permission, ToolCall
from .sandbox import atomic_write_text, glob_matches

Scope = Literal["global", "role", "session", "user"]
DecisionName = Literal["allow", "deny", "ask"]

_SCOPE_RANK = {"user": 0, "session": 1, "role": 2, "global": 3}
_DECISION_RANK = {"deny": 0, "ask": 1, "allow": 2}
_COMMAND_TOOLS = frozenset({"execute_command"})


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
    """A shell command starting with these words (whole words only)."""

    kind: Literal["command"] = "command"
    prefix: str

    def matches(self, call: ToolCall) -> bool:
        command = call.input.get("command")
        if call.name not in _COMMAND_TOOLS or not isinstance(command, str):
            return False
        want = _words(self.prefix)
        have = _words(command)
        return bool(want) and have[: len(want)] == want

    def describe(self) -> str:
        return f"commands starting with `{self.prefix}`"


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
    def allow(cls, matcher: _Matcher | str, **kw: Any) -> Rule:
        return cls(matcher=_as_matcher(matcher), decision="allow", **kw)

    @classmethod
    def deny(cls, matcher: _Matcher | str, **kw: Any) -> Rule:
        return cls(matcher=_as_matcher(matcher), decision="deny", **kw)

    @classmethod
    def ask(cls, matcher: _Matcher | str, **kw: Any) -> Rule:
        return cls(matcher=_as_matcher(matcher), decision="ask", **kw)


def _as_matcher(matcher: _Matcher | str) -> Matcher:
    return ToolName(name=matcher) if isinstance(matcher, str) else matcher  # type: ignore[return-value]


_RULES: TypeAdapter[list[Rule]] = TypeAdapter(list[Rule])


# --- evaluation -------------------------------------------------------------------


class Rules:
    """An ordered rule set: the default :class:`~jupyter_agent.permissions.PermissionPolicy`."""

    def __init__(self, rules: Iterable[Rule] = ()) -> None:
        self.rules: list[Rule] = list(rules)

    def __iter__(self):  # type: ignore[no-untyped-def]
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
        if len(parts) > 1:
            return _combine([self.decide(part) for part in parts])
        rule = self.first_match(call)
        if rule is None:
            return Ask("no rule covers this call")
        reason = rule.explain()
        return {"allow": Allow, "deny": Deny, "ask": Ask}[rule.decision](reason)

    def remember(self, call: ToolCall) -> str | None:
        """After "Always allow": a narrow session rule allowing calls like this one."""
        added = []
        for part in command_parts(call) if call.name in _COMMAND_TOOLS else [call]:
            if part.name in _COMMAND_TOOLS:
                prefix = remembered_prefix(str(part.input.get("command", "")))
                matcher: _Matcher = CommandPrefix(prefix=prefix)
            else:
                matcher = ToolName(name=part.name)
            rule = Rule.allow(matcher, scope="session", target=call.session_id or None)
            if not any(r.matcher == rule.matcher and r.scope == "session" for r in self.rules):
                self.rules.append(rule)
                added.append(rule.explain())
        return "; ".join(added) if added else None

    # --- files ---------------------------------------------------------------------

    def to_json(self) -> str:
        saved = [r for r in self.rules if not isinstance(r.matcher, Custom)]
        return _RULES.dump_json(saved, indent=1).decode()

    @classmethod
    def from_json(cls, text: str | bytes) -> Rules:
        return cls(_RULES.validate_json(text))

    def save(self, path: str | Path) -> None:
        atomic_write_text(Path(path), self.to_json())

    @classmethod
    def load(cls, path: str | Path) -> Rules:
        return cls.from_json(Path(path).read_bytes())

    @classmethod
    def defaults(cls) -> Rules:
        """Reading allowed; notebook edits allowed (they are undoable); file writes allowed
        (the sandbox keeps them inside the workspace); deletes, shell commands and running
        code in the kernel ask."""
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
            ]
        )


def _combine(decisions: Sequence[Decision]) -> Decision:
    for kind in (Deny, Ask):
        found = [d for d in decisions if isinstance(d, kind)]
        if found:
            return kind("; ".join(dict.fromkeys(d.reason for d in found)))
    return Allow("every part of the command is allowed")


# --- shell commands ----------------------------------------------------------------

_SEPARATORS = re.compile(r"\|\||&&|[;|&\n]")


def split_command(command: str) -> list[str]:
    """The simple commands inside a shell line: split on ; && || | & newlines, and
    including what runs inside $(…) and backticks."""
    parts: list[str] = []
    outer = command
    for inner in re.findall(r"\$\(([^()]*)\)|`([^`]*)`", command):
        sub = inner[0] or inner[1]
        parts.extend(split_command(sub))
    outer = re.sub(r"\$\([^()]*\)|`[^`]*`", " SUBST ", outer)
    parts.extend(p.strip() for p in _split_outside_quotes(outer))
    return [p for p in parts if p]


def _split_outside_quotes(command: str) -> list[str]:
    pieces: list[str] = []
    current: list[str] = []
    quote: str | None = None
    i = 0
    while i < len(command):
        ch = command[i]
        if quote:
            current.append(ch)
            if ch == quote:
                quote = None
            elif ch == "\\" and quote == '"' and i + 1 < len(command):
                current.append(command[i + 1])
                i += 1
        elif ch in "'\"":
            quote = ch
            current.append(ch)
        elif ch == "\\" and i + 1 < len(command):
            current.append(command[i : i + 2])
            i += 1
        else:
            m = _SEPARATORS.match(command, i)
            if m:
                pieces.append("".join(current))
                current = []
                i = m.end()
                continue
            current.append(ch)
        i += 1
    pieces.append("".join(current))
    return pieces


def command_parts(call: ToolCall) -> list[ToolCall]:
    """One call per simple command of a shell call; other calls come back as they are."""
    command = call.input.get("command")
    if call.name not in _COMMAND_TOOLS or not isinstance(command, str):
        return [call]
    parts = split_command(command)
    if len(parts) <= 1:
        return [call]
    return [
        ToolCall(
            name=call.name,
            category=call.category,
            input={**call.input, "command": part},
            summary=part,
            role=call.role,
            session_id=call.session_id,
            permissions=call.permissions,
            paths=call.paths,
        )
        for part in parts
    ]


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:  # unbalanced quotes: fall back to whitespace
        return command.split()


# Commands whose first word alone would allow far too much: remember them whole.
_BROAD = frozenset(
    {
        "rm",
        "mv",
        "cp",
        "dd",
        "chmod",
        "chown",
        "sudo",
        "su",
        "curl",
        "wget",
        "kill",
        "pkill",
        "bash",
        "sh",
        "zsh",
        "eval",
        "exec",
        "xargs",
        "find",
        "ssh",
        "scp",
        "rsync",
        "truncate",
    }
)


def remembered_prefix(command: str) -> str:
    """The prefix words "Always allow" remembers: ``git commit -m x`` → ``git commit``."""
    words = _words(command)
    if not words:
        return command.strip()
    if words[0] in _BROAD:
        return shlex.join(words)
    prefix = [words[0]]
    if len(words) > 1 and re.fullmatch(r"[A-Za-z0-9][\w:.-]*", words[1]):
        prefix.append(words[1])
    return shlex.join(prefix)
