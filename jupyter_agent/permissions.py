"""Permissions, roles, and the decision a policy makes about one tool call.

A tool declares the permissions it needs; a role grants a set of them. The
dispatcher refuses a call the role cannot make whatever the model asked, then asks
the run's :class:`PermissionPolicy` whether this particular call is allowed, denied
or needs the user's approval.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol


class Permission:
    """Names of the built-in permissions. Any other string is a custom permission."""

    READ_FILES = "read_files"
    WRITE_FILES = "write_files"
    CREATE_FILES = "create_files"
    DELETE_FILES = "delete_files"
    EXECUTE_COMMANDS = "execute_commands"
    READ_NOTEBOOK = "read_notebook"
    EDIT_NOTEBOOK = "edit_notebook"
    EXECUTE_CODE = "execute_code"
    INSPECT_KERNEL = "inspect_kernel"
    USE_MCP = "mcp_tools"
    """Call the tools of MCP servers (they ask by default: a server's tool can do anything)."""
    READ_MCP = "read_mcp_tools"
    """Call the MCP tools the user granted as read-only in their settings."""

    ALL = frozenset(
        {
            READ_FILES,
            WRITE_FILES,
            CREATE_FILES,
            DELETE_FILES,
            EXECUTE_COMMANDS,
            READ_NOTEBOOK,
            EDIT_NOTEBOOK,
            EXECUTE_CODE,
            INSPECT_KERNEL,
            USE_MCP,
            READ_MCP,
        }
    )
    READ_ONLY = frozenset({READ_FILES, READ_NOTEBOOK, INSPECT_KERNEL, READ_MCP})


PERMISSION_WORDS: Mapping[str, str] = {
    Permission.READ_FILES: "read files",
    Permission.WRITE_FILES: "change files",
    Permission.CREATE_FILES: "create files",
    Permission.DELETE_FILES: "delete files",
    Permission.EXECUTE_COMMANDS: "run shell commands",
    Permission.READ_NOTEBOOK: "read the notebook",
    Permission.EDIT_NOTEBOOK: "edit the notebook's cells",
    Permission.EXECUTE_CODE: "run code in this kernel (anything your kernel can do)",
    Permission.INSPECT_KERNEL: "look at the kernel's variables",
    Permission.USE_MCP: "call the tools of MCP servers",
    Permission.READ_MCP: "call the MCP tools you granted as read-only",
}
"""What each built-in permission allows, in words (a trust prompt lists a role's)."""


@dataclass(frozen=True)
class Role:
    """A named identity with the permissions it grants and a prompt addition."""

    name: str
    permissions: frozenset[str]
    prompt: str = ""
    """Role instructions appended to the system prompt (markdown)."""
    description: str = ""
    prompt_file: str | None = None
    """A file under prompts/ whose text is used when ``prompt`` is empty."""

    def missing(self, required: Iterable[str]) -> frozenset[str]:
        return frozenset(required) - self.permissions


PLANNER = Role(
    "planner",
    Permission.READ_ONLY,
    description="Studies the notebook, files and variables; proposes a plan; changes nothing.",
    prompt_file="planner.md",
)
ACTOR = Role(
    "actor",
    Permission.ALL,
    description="Carries out the plan: edits and runs cells and files under the rules.",
    prompt_file="actor.md",
)
BUILTIN_ROLES: Mapping[str, Role] = {PLANNER.name: PLANNER, ACTOR.name: ACTOR}


@dataclass(frozen=True)
class ToolCall:
    """What a policy sees of one call."""

    name: str
    category: str
    input: Mapping[str, Any]
    summary: str
    role: str
    session_id: str = ""
    permissions: frozenset[str] = field(default_factory=frozenset)
    paths: tuple[str, ...] = ()
    """Paths the call touches, relative to the workspace (for path rules)."""
    server: str | None = None
    """The MCP server whose tool this is (None: a tool of this process)."""
    server_tool: str | None = None
    """The tool's name on that server (before it became ``mcp__SERVER__TOOL``)."""


@dataclass(frozen=True)
class Hazard:
    """Something about one call that no rule may decide: it is refused, or the user is
    asked with ``reason`` as a warning, whatever the policy says (e.g. a write outside
    the workspace, a command that runs a script the agent just rewrote)."""

    action: Literal["refuse", "ask"]
    reason: str
    paths: tuple[str, ...] = ()
    """Files whose code the call would run: allowing it approves them as they are now."""
    rememberable: bool = True
    """False: "Always allow" is not offered for a call with this warning (it would not be
    kept: a write to a path that runs code later asks every time)."""


@dataclass(frozen=True)
class Allow:
    reason: str = ""
    decision: Literal["allow"] = "allow"


@dataclass(frozen=True)
class Deny:
    reason: str = ""
    decision: Literal["deny"] = "deny"


@dataclass(frozen=True)
class Ask:
    reason: str = ""
    decision: Literal["ask"] = "ask"


Decision = Allow | Deny | Ask


class PermissionPolicy(Protocol):
    """Decides about calls the role is allowed to make at all."""

    def decide(self, call: ToolCall) -> Decision: ...

    def remember(self, call: ToolCall) -> str | None:
        """Add a session rule allowing calls like ``call``; return its description."""
        ...

    def preview_remember(self, call: ToolCall) -> str | None:
        """What :meth:`remember` would add, said before the user clicks; ``None`` when it
        would add nothing (the approval card then offers no "Always allow")."""
        ...


class AllowAll:
    """A policy that allows every call the role permits."""

    def decide(self, call: ToolCall) -> Decision:
        return Allow("no rules configured")

    def remember(self, call: ToolCall) -> str | None:
        return None

    def preview_remember(self, call: ToolCall) -> str | None:
        return None
