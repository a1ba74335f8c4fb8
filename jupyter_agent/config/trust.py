"""What a folder's settings may do before the user trusts the folder, and the trust prompt:
what trusting would enable, rendered by us from the settings' effect.

A folder's ``.jupyter_agent/settings.toml`` comes with the folder, and a cloned repository
may ship one. Until the user trusts the folder, :func:`untrusted_part` keeps what only
narrows (deny and ask rules, which never decide wider than the other rules would; new
roles with their prompts inside the folder; ``[secrets]``; ``[cells]`` waits and
timeouts; ``[context] auto``) and makes everything else a :class:`TrustEffect` of the
:class:`TrustPrompt`.

Invariants kept here:

- **Complete.** Every part of the settings left out is one effect of the prompt, shown
  whole: never "… and N more" (the panel scrolls).
- **In our words.** An effect says what the settings would do, built from their fields (a
  rule's decision, matcher and scope; a role's permissions and what they allow; an MCP
  server's command, arguments, address, headers, environment and the variables it reads).
  Text a file wrote about itself (a rule's or a role's ``description``) never appears.
  What the file gives is data: a :class:`TrustDetail`'s ``name`` and ``value`` are the
  file's text verbatim, and every view shows them as text (quoted, in :meth:`TrustPrompt.text`).
- **No shadowing before trust.** A role named like one of the user's or a built-in role,
  a rule with the id of one of the user's or a built-in rule, is refused and listed.

What a trusted folder may redefine: once the user trusts the folder after this prompt
named it, the folder's role of the same name replaces the user's (or the built-in one), its
rule of the same id replaces the user's (or the built-in one), and its MCP server of the same
name replaces the user's. The ``[sandbox]`` table is never read from a folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import unicodedata
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .._wording import code, name
from ..admin_policy import current_policy
from ..mcp.config import McpServerConfig
from ..permissions import BUILTIN_ROLES, PERMISSION_WORDS
from .rules import Rule, Rules
from .settings import ProviderTable, RoleSettings, Settings

EffectKind = Literal[
    "rule", "role", "mcp_server", "default_rules", "cells", "context", "models", "provider"
]


class TrustDetail(BaseModel):
    """One fact of an effect: our label, and the settings' own text as data."""

    model_config = ConfigDict(frozen=True)

    label: str
    """Ours: what this is ("argument", "header", "permission")."""
    name: str = ""
    """A name the file gives (a header's, a variable's, a permission's), verbatim."""
    value: str = ""
    """The file's text, verbatim (or, for a permission, what it allows in our words)."""

    def text(self) -> str:
        label = f"{self.label} {code(self.name)}" if self.name else self.label
        return f"{label}: {code(self.value)}" if self.value else label


class TrustEffect(BaseModel):
    """One thing trusting the folder would enable that is not enabled now."""

    model_config = ConfigDict(frozen=True)

    kind: EffectKind
    summary: str
    """What it would do, in our words (the file's text in it quoted as data)."""
    details: list[TrustDetail] = Field(default_factory=list)
    """Every field it comes from, the file's text verbatim."""

    def text(self) -> str:
        return "\n".join([f"- {self.summary}", *(f"    {d.text()}" for d in self.details)])


class TrustPrompt(BaseModel):
    """What trusting a folder's settings would enable, complete."""

    model_config = ConfigDict(frozen=True)

    folder: str
    source: str
    """The settings file."""
    effects: list[TrustEffect] = Field(default_factory=list)
    policy: list[str] = Field(default_factory=list)
    """What the administrator's policy fixes whatever these settings say (one line each;
    not part of what trusting grants, so not in the digest)."""
    policy_source: str = ""
    """The policy's files."""

    def _policy_text(self) -> str:
        if not self.policy:
            return ""
        return (
            f"\nWhatever these settings say, your administrator's policy ({self.policy_source}) "
            "fixes:\n" + "\n".join(f"- {line}" for line in self.policy)
        )

    def hiding(self, hide: Callable[[str], str]) -> TrustPrompt:
        """This prompt with ``hide`` (the agent's secret redaction) applied to every text it
        shows, as it goes to a view or a notice: a key written in the file is named as one,
        not shown (a ``${VARIABLE}`` it names stays as written)."""
        effects = [
            effect.model_copy(
                update={
                    "summary": hide(effect.summary),
                    "details": [
                        TrustDetail(label=d.label, name=hide(d.name), value=hide(d.value))
                        for d in effect.details
                    ],
                }
            )
            for effect in self.effects
        ]
        return self.model_copy(update={"effects": effects})

    def text(self) -> str:
        """The prompt in text, for a notice: every effect with every detail."""
        return (
            f"This folder's settings ({name(self.source)}) apply only in part: you have not "
            "trusted this folder, and a folder you cloned or downloaded may not widen what "
            "the agent can do. Trusting it would:\n"
            + "\n".join(e.text() for e in self.effects)
            + "\nTo apply them, trust the folder: the button here, `%agent trust`, or "
            "agent.trust_workspace()." + self._policy_text()
        )

    def digest(self) -> str:
        """What trusting this prompt grants, as a digest: remembered with the trust, so the
        folder's settings apply only while they grant exactly this (its effects, not where
        the file is)."""
        said = json.dumps([e.model_dump(mode="json") for e in self.effects], sort_keys=True)
        return hashlib.sha256(said.encode()).hexdigest()

    def applied_text(self) -> str:
        """What applies now that the folder is trusted, in text (``%agent trust``)."""
        if not self.effects:
            said = f"Trusted {self.folder}: its settings apply (nothing was held back)."
        else:
            said = f"Trusted {self.folder}: its settings ({name(self.source)}) apply. Now:\n" + (
                "\n".join(e.text() for e in self.effects)
            )
        return said + self._policy_text()


# --- what an untrusted folder keeps --------------------------------------------------------


def untrusted_part(
    found: Settings, user: Settings | None, workspace: Path
) -> tuple[Settings, TrustPrompt]:
    """What ``found`` (a folder's settings) may do before the user trusts ``workspace``,
    and the prompt listing everything else, beside the ``user``'s settings and the built-in
    roles and rules."""
    effects: list[TrustEffect] = []
    roles = _kept_roles(found, user, workspace, effects)
    rules = _kept_rules(found, user, effects)
    if not found.default_rules:
        effects.append(_default_rules())
    cells = found.cells
    if cells is not None and cells.on_stop == "leave_running":
        effects.append(
            TrustEffect(
                kind="cells",
                summary="Let Stop leave running the cells the agent started: Stop would stop "
                "only the agent",
                details=[TrustDetail(label="[cells] on_stop", value="leave_running")],
            )
        )
        cells = cells.model_copy(update={"on_stop": None})
    context = found.context
    if context is not None and context.window is not None:
        effects.append(
            TrustEffect(
                kind="context",
                summary=f"Plan for a context window of {context.window:,} tokens: a small "
                "window has the agent summarise the conversation often, on your bill",
                details=[TrustDetail(label="[context] window", value=str(context.window))],
            )
        )
        context = context.model_copy(update={"window": None})
    if found.models is not None:
        effects.append(_models(found))
    effects.extend(_provider(n, table) for n, table in found.providers.items())
    yours = user.mcp_servers if user else {}
    effects.extend(_server(n, s, n in yours) for n, s in found.mcp_servers.items())
    kept = found.model_copy(
        update={
            "roles": roles,
            "rules": rules,
            "default_rules": True,
            "cells": cells,
            "context": context,
            "models": None,
            "providers": {},
            "mcp_servers": {},
        }
    )
    kept.source = found.source
    policy = current_policy()
    prompt = TrustPrompt(
        folder=str(workspace),
        source=str(found.source),
        effects=effects,
        policy=policy.fixed(),
        policy_source=policy.where if policy.sources else "",
    )
    return kept, prompt


def _kept_roles(
    found: Settings, user: Settings | None, workspace: Path, effects: list[TrustEffect]
) -> dict[str, RoleSettings]:
    """New roles whose prompts lie inside the folder; every other role is an effect (one
    whose name looks like a named role's too, ``Planner`` or ``planner`` with a zero-width
    space: the role picker would show them alike)."""
    named = {n: ("the built-in role", r.permissions) for n, r in BUILTIN_ROLES.items()}
    named.update({n: ("your role", frozenset(r.permissions)) for n, r in _roles(user).items()})
    looks = {_look(n): f"{whose} {name(n)}" for n, (whose, _) in named.items()}
    kept: dict[str, RoleSettings] = {}
    for role, spec in found.roles.items():
        outside = _outside(found, spec, workspace)
        alike = None if role in named else looks.get(_look(role))
        if role in named or alike is not None or outside is not None:
            effects.append(_role(role, spec, named.get(role), outside, alike))
        else:
            kept[role] = spec
    return kept


def _look(role: str) -> str:
    """How a role's name looks: without case, spaces or invisible characters, and with
    look-alike letters folded (NFKC)."""
    folded = unicodedata.normalize("NFKC", role).casefold()
    return "".join(c for c in folded if not c.isspace() and unicodedata.category(c)[0] != "C")


def _roles(settings: Settings | None) -> dict[str, RoleSettings]:
    return settings.roles if settings is not None else {}


def _outside(found: Settings, spec: RoleSettings, workspace: Path) -> Path | None:
    """Where a role's prompt file really is, when that is outside the folder."""
    if not spec.prompt_file:
        return None
    # path gate: resolved without opening, only to say where it leads
    real = Path(os.path.realpath(found.prompt_path(spec.prompt_file)))
    root = Path(os.path.realpath(workspace))
    return None if real == root or root in real.parents else real


def _kept_rules(found: Settings, user: Settings | None, effects: list[TrustEffect]) -> list[Rule]:
    """Deny and ask rules of ids of their own, as rules that only narrow; every other rule
    is an effect."""
    named = {r.id: ("the built-in rule", r) for r in Rules.defaults()}
    named.update({r.id: ("your rule", r) for r in (user.rules if user else [])})
    kept = []
    for rule in found.rules:
        if rule.decision == "allow" or rule.id in named:
            effects.append(_rule(rule, named.get(rule.id)))
        else:
            kept.append(rule.with_origin(replace(rule.origin, narrows_only=True)))
    return kept


# --- effects, in our words ------------------------------------------------------------------

_VERB = {"allow": "Allow", "deny": "Refuse", "ask": "Ask before"}


def _rule(rule: Rule, replaces: tuple[str, Rule] | None) -> TrustEffect:
    summary = f"{_VERB[rule.decision]} {rule.matcher.describe()}, {_scope(rule)}"
    if rule.priority:
        summary += f", priority {rule.priority}"
    if replaces is not None:
        whose, theirs = replaces
        summary += f", in place of {whose} {name(rule.id)} ({theirs.explain()})"
    details = [
        TrustDetail(label="decision", value=rule.decision),
        TrustDetail(label="matcher", value=rule.matcher.kind),
        *(
            TrustDetail(label=f"matcher {field}", value=str(value))
            for field, value in rule.matcher.model_dump(exclude={"kind"}, exclude_none=True).items()
        ),
        TrustDetail(label="scope", value=rule.scope),
        *([TrustDetail(label="for", value=rule.target)] if rule.target is not None else []),
        TrustDetail(label="priority", value=str(rule.priority)),
        TrustDetail(label="id", value=rule.id),
    ]
    return TrustEffect(kind="rule", summary=summary, details=details)


def _scope(rule: Rule) -> str:
    target = rule.target
    if rule.scope == "user":
        return "for every role, ranked with your own rules above all others (user scope)"
    if rule.scope == "session":
        return "in every session" if target is None else f"in the session {name(target)}"
    if rule.scope == "role" and target is not None:
        return f"for the role {name(target)}"
    return "for every role"


def _role(
    role: str,
    spec: RoleSettings,
    replaces: tuple[str, frozenset[str]] | None,
    outside: Path | None,
    alike: str | None = None,
) -> TrustEffect:
    wanted = frozenset(spec.permissions)
    if replaces is None:
        summary = f"Add the role {name(role)}"
        if alike is not None:
            summary += f", whose name looks like {alike}"
        summary += f", which may {_allows(wanted)}"
    else:
        whose, had = replaces
        summary = f"Replace {whose} {name(role)}"
        gained, lost = _ordered(wanted - had), _ordered(had - wanted)
        changes = [
            *([f"it would also {_allows(gained)}"] if gained else []),
            *([f"it would no longer {_allows(lost)}"] if lost else []),
        ]
        summary += (": " + "; ".join(changes)) if changes else ", with the same permissions"
    if spec.prompt or spec.prompt_file:
        summary += "; with a prompt of the folder's"
    if outside is not None:
        summary += f", read from {code(str(outside))}, outside this folder"
    details = [
        TrustDetail(label="name", value=role),
        *(
            TrustDetail(label="permission", name=p, value=_words(p))
            for p in _ordered(spec.permissions)
        ),
        *([TrustDetail(label="prompt", value=spec.prompt)] if spec.prompt else []),
        *([TrustDetail(label="prompt_file", value=spec.prompt_file)] if spec.prompt_file else []),
        *([TrustDetail(label="prompt file, followed", value=str(outside))] if outside else []),
    ]
    return TrustEffect(kind="role", summary=summary, details=details)


def _allows(permissions: frozenset[str] | list[str]) -> str:
    return (
        ", ".join(_words(p) for p in _ordered(permissions)) or "do nothing that needs a permission"
    )


def _ordered(permissions: frozenset[str] | list[str]) -> list[str]:
    """The built-in permissions in their own order, then any others by name."""
    order = {p: i for i, p in enumerate(PERMISSION_WORDS)}
    return sorted(permissions, key=lambda p: (order.get(p, len(order)), p))


def _words(permission: str) -> str:
    return PERMISSION_WORDS.get(permission) or f"use tools needing {name(permission)}"


def _default_rules() -> TrustEffect:
    defaults = Rules.defaults()
    return TrustEffect(
        kind="default_rules",
        summary="Drop the built-in rules (default_rules = false): the ones that ask before "
        "deleting files, shell commands, running code and MCP tools would no longer stand "
        "above the folder's own",
        details=[
            TrustDetail(label="built-in rule", name=r.id, value=r.explain()) for r in defaults
        ],
    )


def _models(found: Settings) -> TrustEffect:
    models = found.models
    assert models is not None
    said = []
    if models.default:
        said.append(f"use the model {code(models.default)} for new agents")
    if models.choices:
        said.append("list " + ", ".join(code(c) for c in models.choices) + " in the model picker")
    said_all = "; ".join(said) or "set an empty [models] table"
    return TrustEffect(
        kind="models",
        summary=said_all[:1].upper()
        + said_all[1:]
        + ": a folder choosing the model chooses where your notebook and files are sent",
        details=[
            *(
                [TrustDetail(label="[models] default", value=models.default)]
                if models.default
                else []
            ),
            *(TrustDetail(label="[models] choice", value=c) for c in models.choices),
        ],
    )


def _provider(provider: str, table: ProviderTable) -> TrustEffect:
    where = code(table.base_url) if table.base_url else "the provider's own address"
    summary = f"Send the conversations of models named {code(provider + ':…')} to {where}"
    if table.api_key_env:
        summary += f", with the key in the variable {name(table.api_key_env)}"
    fields = table.model_dump(exclude_none=True)
    return TrustEffect(
        kind="provider",
        summary=summary,
        details=[
            TrustDetail(label="name", value=provider),
            *(TrustDetail(label=key, value=str(value)) for key, value in fields.items()),
        ],
    )


def _server(server: str, config: McpServerConfig, yours: bool) -> TrustEffect:
    if config.problem is not None:
        summary = (
            f"Configure the MCP server {name(server)}, whose entry cannot be read (it would "
            f"not start: {config.problem})"
        )
    elif config.command is not None:
        summary = f"Start the program {code(config.command)} as the MCP server {name(server)}"
        if config.args:
            summary += " with " + " ".join(code(a) for a in config.args)
    else:
        summary = f"Connect to {code(config.url or '')} as the MCP server {name(server)}"
        if config.headers:
            summary += ", sending the headers " + ", ".join(name(h) for h in config.headers)
    if config.env_file:
        summary += f", reading the file {code(config.env_file)} into its environment"
    variables = config.variables()
    if variables:
        summary += ", reading the variables " + ", ".join(variables) + " from your environment"
    if config.read_only:
        summary += "; every tool of it would run without asking, the Planner's too"
    elif config.read_only_tools:
        tools = ", ".join(name(t) for t in config.read_only_tools)
        summary += f"; its tools {tools} would run without asking, the Planner's too"
    if config.auto_approve and config.enabled:
        tools = ", ".join(name(t) for t in config.auto_approve)
        summary += f"; its tools {tools} would run without asking (autoApprove)"
    if yours:
        summary += ", in place of your server of that name"
    if not config.enabled and config.problem is None:
        summary += " (configured, not started: enabled = false)"
    details = [
        TrustDetail(label="name", value=server),
        TrustDetail(label="transport", value=config.transport),
        *([TrustDetail(label="command", value=config.command)] if config.command else []),
        *(TrustDetail(label="argument", value=a) for a in config.args),
        *([TrustDetail(label="cwd", value=config.cwd)] if config.cwd else []),
        *([TrustDetail(label="url", value=config.url)] if config.url else []),
        *(TrustDetail(label="header", name=k, value=v) for k, v in config.headers.items()),
        *(TrustDetail(label="environment", name=k, value=v) for k, v in config.env.items()),
        *([TrustDetail(label="envFile", value=config.env_file)] if config.env_file else []),
        *(TrustDetail(label="reads the variable", value=v) for v in variables),
        *([TrustDetail(label="read_only", value="true")] if config.read_only else []),
        *(TrustDetail(label="read-only tool", value=t) for t in config.read_only_tools),
        *(TrustDetail(label="autoApprove tool", value=t) for t in config.auto_approve),
        *(TrustDetail(label="offered tool", value=t) for t in config.tools or ()),
        *(TrustDetail(label="tool not offered", value=t) for t in config.disabled_tools),
        *([TrustDetail(label="enabled", value="false")] if not config.enabled else []),
    ]
    return TrustEffect(kind="mcp_server", summary=summary, details=details)
