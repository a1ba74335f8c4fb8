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

Each rule knows where it comes from (:class:`RuleOrigin`), which decides two things:

- **Whose words explain it.** A decision's reason (an approval card's, a refusal the model
  reads) is the rule's ``description`` only for rules made in code and the user's own
  (marked as the user's); a rule from a folder's settings is explained in our words, from
  its matcher, with where it comes from.
- **How far it reaches.** A folder's rule before the user trusts the folder
  (``narrows_only``) can make a decision stricter, never wider: it is weighed against the
  decision the other rules make, and only a stricter one wins (an ask of the folder's never
  turns a deny of the user's into a question).

Patterns (``regex`` and ``path`` matchers, ``mcp`` name patterns) are matched under the
time bound of :mod:`jupyter_agent.workspace.patterns`: one :meth:`Rules.decide` spends at most
:data:`~jupyter_agent.workspace.patterns.DECISION_LIMIT` matching, however many rules it weighs
(so it may run on the event loop), and a match that runs out of time counts as a match for
a deny or ask rule and as none for an allow rule.
"""

from __future__ import annotations

import posixpath
import shlex
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, TypeAdapter

from .._wording import name, visible
from ..approvals import RememberOption
from ..commands.analysis import NO_FILE_EFFECTS, analyze, touches_no_files
from ..permissions import Allow, Ask, Decision, Deny, Permission, ToolCall
from ..workspace.paths import Root, read_regular
from ..workspace.patterns import MATCH_LIMIT, Budget
from .rule_matchers import (
    COMMAND_TOOLS,
    Category,
    CommandPrefix,
    Custom,
    Everything,
    Matcher,
    McpServer,
    NoPermission,
    PathGlob,
    Regex,
    RequiresPermission,
    ToolName,
    known_argv,
    named_argv,
)

__all__ = [
    "RULES_LIMIT",
    "Category",
    "CommandPrefix",
    "Custom",
    "DecisionName",
    "Everything",
    "Matcher",
    "McpServer",
    "NoPermission",
    "PathGlob",
    "Regex",
    "RequiresPermission",
    "Rule",
    "RuleOrigin",
    "Rules",
    "Scope",
    "ToolName",
    "command_parts",
]

Scope = Literal["global", "role", "session", "user"]
DecisionName = Literal["allow", "deny", "ask"]

_SCOPE_RANK = {"user": 0, "session": 1, "role": 2, "global": 3}
_DECISION_RANK = {"deny": 0, "ask": 1, "allow": 2}
RULES_LIMIT = 16 << 20
"""Bytes of a rules file read at most."""


@dataclass(frozen=True)
class RuleOrigin:
    """Where a rule comes from: whose words may explain it, and how far it reaches."""

    who: Literal["code", "user", "folder", "file"] = "code"
    """``code``: built in, or made in Python by the program; ``user``: the user's own
    settings file; ``folder``: the workspace's settings file; ``file``: another settings
    file a program named."""
    path: str = ""
    """The settings file it was read from."""
    narrows_only: bool = False
    """A folder's rule the user has not trusted yet: it makes decisions stricter, never wider."""

    def where(self) -> str:
        """Where the rule comes from, in a few words of ours."""
        place = {
            "code": "a rule of this program",
            "user": "your rule",
            "folder": "a rule in this folder's settings",
            "file": "a rule in a settings file",
        }[self.who]
        return f"{place}, {name(self.path)}" if self.path else place


class Rule(BaseModel):
    model_config = ConfigDict(extra="forbid")

    matcher: Matcher
    decision: DecisionName
    scope: Scope = "global"
    target: str | None = None
    """The role name (role scope) or session id (session scope) the rule is for."""
    priority: int = 0
    description: str = ""
    """Shown as the reason of a decision for rules made in code and the user's own; a
    folder's rule is explained in our words (see :meth:`explain`)."""
    id: str = Field(default_factory=lambda: uuid.uuid4().hex[:8])
    _origin: RuleOrigin = PrivateAttr(default_factory=RuleOrigin)

    @property
    def origin(self) -> RuleOrigin:
        return self._origin

    def with_origin(self, origin: RuleOrigin) -> Rule:
        """This rule, as coming from ``origin``."""
        copy = self.model_copy()
        copy._origin = origin
        return copy

    def in_scope(self, call: ToolCall) -> bool:
        """Whether the rule is about the call's role and session (before its matcher)."""
        if self.scope == "role" and self.target not in (None, call.role):
            return False
        return not (self.scope == "session" and self.target not in (None, call.session_id))

    def applies_to(self, call: ToolCall, budget: Budget | None = None) -> bool:
        """Whether the rule decides about ``call``; a pattern that ran out of time counts
        as matching for a deny or ask rule, as not matching for an allow rule."""
        if not self.in_scope(call):
            return False
        found = self.matcher.matches(call, budget)
        return found if found is not None else self.decision != "allow"

    def explain(self) -> str:
        """The reason a decision of this rule gives (an approval card's, a refusal's).
        Text the rule's file wrote about itself is used only for rules made in code and
        the user's own (marked as the user's): a folder's rule is said in our words."""
        ours = f"{self.decision} {self.matcher.describe()}"
        origin = self._origin
        if origin.who == "code":
            return self.description or ours
        said = visible(self.description) if origin.who == "user" and self.description else ours
        return f"{said} ({origin.where()})"

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
        """The rule that decides about ``call``, if any."""
        found = self._deciding(call, Budget())
        return found[0] if found else None

    def _deciding(self, call: ToolCall, budget: Budget) -> tuple[Rule, bool] | None:
        """The deciding rule, and whether it matched only because a pattern ran out of
        time. A rule that only narrows decides only where it is stricter than the rest."""
        decided = self._first(call, budget, narrows_only=False)
        narrower = self._first(call, budget, narrows_only=True)
        if narrower is None:
            return decided
        now = _DECISION_RANK[decided[0].decision if decided else "ask"]
        rank = _DECISION_RANK[narrower[0].decision]
        return narrower if rank < now or (decided is None and rank <= now) else decided

    def _first(
        self, call: ToolCall, budget: Budget, *, narrows_only: bool
    ) -> tuple[Rule, bool] | None:
        candidates = (r for r in self.rules if r.origin.narrows_only == narrows_only)
        for rule in sorted(candidates, key=lambda r: r.sort_key):
            if not rule.in_scope(call):
                continue
            found = rule.matcher.matches(call, budget)
            if found is None and rule.decision != "allow":
                return rule, True  # fail closed: a deny or ask rule counts as matching
            if found:
                return rule, False
        return None

    def decide(self, call: ToolCall) -> Decision:
        """Allow, deny or ask for ``call``. The patterns of every rule weighed share one
        :class:`~jupyter_agent.workspace.patterns.Budget`: one decision spends at most
        :data:`~jupyter_agent.workspace.patterns.DECISION_LIMIT` matching, whatever the number of
        rules, so it may run on the event loop."""
        budget = Budget()
        parts = command_parts(call)
        if parts is None:
            return self._decide_one(call, budget)
        problems = analyze(str(call.input.get("command", ""))).problems
        whole = self._deciding(call, budget)
        if whole is not None and whole[0].decision == "deny":
            return _decision(whole)  # a deny rule about the whole line holds
        decisions = [self._decide_one(part, budget) for part in parts]
        # Say which part (the card shows the whole line), unless every part asks for the
        # same reason: the card then says it once (a deny's reason, which the model reads,
        # always names its part).
        alike = (
            all(isinstance(d, Ask) for d in decisions) and len({d.reason for d in decisions}) == 1
        )
        if len(parts) > 1 and not alike:
            decisions = [
                d if isinstance(d, Allow) else type(d)(f"`{_clip(p.summary)}`: {d.reason}")
                for p, d in zip(parts, decisions, strict=True)
            ]
        decisions.extend(Ask(p) for p in problems)
        if not decisions:
            return self._decide_one(call, budget)
        return _combine(decisions)

    def _decide_one(self, call: ToolCall, budget: Budget) -> Decision:
        return _decision(self._deciding(call, budget))

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
        if call.name in COMMAND_TOOLS and isinstance(call.input.get("command"), str):
            line = analyze(str(call.input["command"]))
            default: list[Matcher] = []
            exact: list[Matcher] = []
            for invocation in line.invocations:
                if invocation.effect.problem:
                    continue
                argv = known_argv(invocation)
                words = (
                    CommandPrefix(prefix=shlex.join(named_argv(argv)), exact=True)
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
            choices.append(("tool", f"{call.name} this session", matchers))
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
        (workspace access keeps them inside the workspace); deletes, shell commands, running
        code in the kernel and the tools of MCP servers ask (those the user granted as
        read-only in the server's settings are reading tools, and run). Waiting for or
        interrupting a cell the agent ran runs no code, and is allowed."""
        P = Permission
        return cls(
            [
                Rule.allow(
                    NoPermission(),
                    id="default-no-permission",
                    description="tools that need no permission are allowed",
                ),
                Rule.allow(
                    Category(category="read"), id="default-read", description="reading is allowed"
                ),
                Rule.allow(
                    RequiresPermission(permission=P.READ_NOTEBOOK),
                    id="default-read-notebook",
                    priority=-1,
                    description="reading the notebook is allowed",
                ),
                Rule.allow(
                    RequiresPermission(permission=P.INSPECT_KERNEL),
                    id="default-inspect-kernel",
                    priority=-1,
                    description="inspecting variables is allowed",
                ),
                Rule.allow(
                    RequiresPermission(permission=P.EDIT_NOTEBOOK),
                    id="default-edit-notebook",
                    priority=-2,
                    description="notebook edits are allowed (they can be undone)",
                ),
                Rule.allow(
                    RequiresPermission(permission=P.WRITE_FILES),
                    id="default-write-files",
                    priority=-2,
                    description="file writes inside the workspace are allowed",
                ),
                Rule.ask(
                    RequiresPermission(permission=P.DELETE_FILES),
                    id="default-delete-files",
                    priority=10,
                    description="deleting files needs your approval",
                ),
                Rule.ask(
                    RequiresPermission(permission=P.EXECUTE_COMMANDS),
                    id="default-commands",
                    priority=10,
                    description="shell commands need your approval",
                ),
                Rule.ask(
                    RequiresPermission(permission=P.EXECUTE_CODE),
                    id="default-run-code",
                    priority=10,
                    description="running code in the kernel needs your approval",
                ),
                # Only the roles that may run code have them (they need execute_code), but
                # they run none: each acts on a cell the agent itself ran, which the user
                # approved (waiting is reading; interrupting is a Stop for one cell).
                Rule.allow(
                    ToolName(name="wait_for_cell"),
                    id="default-wait-for-cell",
                    priority=11,
                    description="waiting for a cell the agent ran runs no code",
                ),
                Rule.allow(
                    ToolName(name="interrupt_cell"),
                    id="default-interrupt-cell",
                    priority=11,
                    description="interrupting a cell the agent ran runs no code",
                ),
                Rule.ask(
                    RequiresPermission(permission=P.USE_MCP),
                    id="default-mcp-tools",
                    priority=10,
                    description="tools of MCP servers need your approval",
                ),
            ]
        )


_DECISIONS: dict[DecisionName, Callable[[str], Decision]] = {
    "allow": Allow,
    "deny": Deny,
    "ask": Ask,
}


def _decision(found: tuple[Rule, bool] | None) -> Decision:
    """The decision of the deciding rule (and, when its pattern ran out of time, why it
    counts as matching); ask when no rule decides."""
    if found is None:
        return Ask("no rule covers this call")
    rule, unsure = found
    reason = rule.explain()
    if unsure:
        reason += (
            f" (its pattern took longer than {MATCH_LIMIT * 1000:.0f} ms to match this call, "
            "so it counts as matching)"
        )
    return _DECISIONS[rule.decision](reason)


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
    if call.name not in COMMAND_TOOLS or not isinstance(command, str):
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
    """A scope of "Always allow" in a few words, as its menu lists it ("this exact
    command"): the button itself says only "Always allow"."""
    if all(isinstance(m, CommandPrefix) and m.exact for m in matchers) and programs == 1:
        return "this exact command"
    parts = []
    for m in matchers:
        if isinstance(m, CommandPrefix) and m.read_only:
            if touches_no_files(tuple(shlex.split(m.prefix))):
                parts.append(f"`{m.prefix} …` ({NO_FILE_EFFECTS})")
            else:
                parts.append(f"`{m.prefix} …` when it only reads")
        elif isinstance(m, CommandPrefix):
            parts.append(f"exactly `{_clip(m.prefix, 40)}`")
    return ", ".join(parts)


def _clip(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
