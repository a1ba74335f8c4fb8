"""A tool is a typed Python function; its schema comes from its signature.

The first parameter may be a :class:`ToolContext` (annotated as such); it carries the
hidden state of the call and never appears in the schema the model sees.

A tool that asks shows the call on an approval card through its ``preview=`` hook; what the
card showed and the call acts on (a cell's source, a file's bytes) is bound to the user's
Allow, and the tool checks it with :meth:`ToolContext.check_shown` at the moment it acts
(see :mod:`jupyter_agent.approvals`).
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, get_type_hints, overload

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from .._wording import visible
from ..approvals import ApprovalPreview, Grant, Shown
from ..errors import ToolError
from ..messages import ImageBlock
from ..permissions import Hazard
from ._run_control import RunControl

T = TypeVar("T")


class ResourceMap:
    """Runtime objects for tools, keyed by type (a notebook bridge, a kernel namespace…)."""

    def __init__(self) -> None:
        self._items: dict[type, Any] = {}

    def insert(self, value: Any, as_type: type | None = None) -> None:
        self._items[as_type or type(value)] = value

    def get(self, kind: type[T]) -> T | None:
        return self._items.get(kind)

    def __getitem__(self, kind: type[T]) -> T:
        try:
            value: T = self._items[kind]  # insert() keys each value by its type
        except KeyError:
            raise KeyError(f"no {kind.__name__} resource is available to this agent") from None
        return value

    def __contains__(self, kind: type) -> bool:
        return kind in self._items

    def remove(self, kind: type) -> None:
        self._items.pop(kind, None)


@dataclass
class ToolContext:
    """Hidden state of one tool call (never shown to the model)."""

    session_id: str = ""
    role: str = ""
    step: int = 0
    tool_use_id: str = ""
    workspace: Path = field(default_factory=Path.cwd)
    resources: ResourceMap = field(default_factory=ResourceMap)
    metadata: dict[str, Any] = field(default_factory=dict)
    run: RunControl | None = None
    """The run the call belongs to; control tools use it to ask, plan and finish."""
    approval: Grant | None = None
    """The user's Allow of this call, with the digests of what its card showed (None: no
    card was shown, a rule allowed the call)."""

    async def progress(self, output: str) -> None:
        """Stream partial output of a long call to the frontends."""
        if self.run is not None:
            self.run.tool_progress(self.tool_use_id, output)

    def check_shown(self, key: str, now: str) -> None:
        """Right before acting: raise :class:`~jupyter_agent.approvals.ChangedSinceShown`
        when the approval card showed ``key`` and ``now`` (the digest of what the call is
        about to act on, :func:`~jupyter_agent.approvals.digest`) is not what it showed."""
        if self.approval is not None:
            self.approval.check(key, now)

    def require_run(self) -> RunControl:
        if self.run is None:
            raise ToolError("this tool only works inside an agent run")
        return self.run


@dataclass
class ToolOutput:
    """What a tool returns when plain text is not enough."""

    text: str
    images: list[ImageBlock] = field(default_factory=list)
    diff: str | None = None
    """A unified diff of what the call changed, shown in the tool card."""
    data: dict[str, Any] | None = None
    """Structured payload for frontends (not sent to the model)."""
    is_error: bool = False
    error_line: str | None = None
    """One line saying what failed, for the tool row, when the call or what it ran failed
    (a cell that raised, a non-zero exit) even if the result is not an error to the model."""


Summary = str | Callable[[Mapping[str, Any]], str] | None
Assess = Callable[["ToolContext", Mapping[str, Any]], Sequence[Hazard]]
"""Checks of one call that no rule may override (see :class:`Hazard`)."""
Preview = Callable[["ToolContext", Mapping[str, Any]], Awaitable[ApprovalPreview | Shown | None]]
"""The call as an approval card shows it (the code, the command, the diff), computed
without running it; as a :class:`~jupyter_agent.approvals.Shown` when the card binds
content the tool checks before acting."""

# Arguments treated as paths (for path rules) when a tool does not say.
PATH_ARGUMENTS = ("path", "paths", "working_dir", "source", "destination")


class Tool:
    """A function the model can call, with its schema, category and permissions."""

    server: str | None = None
    """The MCP server the tool comes from (None: a tool of this process)."""
    server_tool: str | None = None
    """Its name on that server (rules match MCP tools by server and this name)."""

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        category: str = "general",
        permissions: frozenset[str] | set[str] | tuple[str, ...] = frozenset(),
        summary: Summary = None,
        paths: tuple[str, ...] | None = None,
        assess: Assess | None = None,
        preview: Preview | None = None,
        concurrent: bool = False,
    ) -> None:
        self.fn = fn
        self.concurrent = concurrent
        """Its calls of one turn may run at the same time (bounded), e.g. ``delegate``."""
        self._assess = assess
        self._preview = preview
        self.name = name or fn.__name__
        if not re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", self.name):
            raise ValueError(f"tool name {self.name!r} must match [a-zA-Z0-9_-]{{1,64}}")
        self.category = category
        self.permissions = frozenset(permissions)
        self._summary = summary
        doc, arg_docs = _parse_docstring(inspect.getdoc(fn) or "")
        self.description = description or doc or self.name
        self.takes_context, self.input_model = _input_model(fn, self.name, arg_docs)
        self.input_schema = _inline_refs(self.input_model.model_json_schema())
        self.is_async = inspect.iscoroutinefunction(fn)
        fields = self.input_model.model_fields
        self._field_names = tuple(fields)
        self.path_args = (
            paths if paths is not None else tuple(a for a in PATH_ARGUMENTS if a in fields)
        )
        """Arguments holding paths, so rules can match on them."""

    def __repr__(self) -> str:
        return f"Tool({self.name!r}, category={self.category!r})"

    def spec(self) -> dict[str, Any]:
        """The tool as the Messages API describes it."""
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
        }

    def paths(self, args: Mapping[str, Any]) -> tuple[str, ...]:
        """The paths a call with ``args`` touches, as the model wrote them."""
        found: list[str] = []
        for name in self.path_args:
            value = args.get(name)
            if isinstance(value, str):
                found.append(value)
            elif isinstance(value, list):
                found.extend(v for v in value if isinstance(v, str))
        return tuple(found)

    @property
    def assesses(self) -> bool:
        """Whether the tool checks its calls beyond the rules (see :meth:`assess`)."""
        return self._assess is not None

    def assess(self, ctx: ToolContext, kwargs: Mapping[str, Any]) -> list[Hazard]:
        """What about this call no rule may decide: refusals, and warnings that make it ask
        (checked arguments in; a check that fails says so as a warning)."""
        if self._assess is None:
            return []
        try:
            return list(self._assess(ctx, kwargs))
        except ToolError as exc:
            return [Hazard("refuse", str(exc))]

    @property
    def previews(self) -> bool:
        """Whether the tool can show a call on its approval card (see :meth:`preview`)."""
        return self._preview is not None

    async def preview(self, ctx: ToolContext, kwargs: Mapping[str, Any]) -> ApprovalPreview | None:
        """The call as its approval card shows it (checked arguments in), or ``None``.
        Runs nothing and writes nothing; it may raise (the caller shows no preview then)."""
        return (await self.show(ctx, kwargs)).card

    async def show(self, ctx: ToolContext, kwargs: Mapping[str, Any]) -> Shown:
        """The card of the call and the content it binds (see :meth:`preview`)."""
        if self._preview is None:
            return Shown()
        shown = await self._preview(ctx, kwargs)
        return shown if isinstance(shown, Shown) else Shown(card=shown)

    def summary(self, args: Mapping[str, Any]) -> str:
        """One line a human reads in a tool card or an approval prompt. What the model
        wrote in it cannot hide itself: control characters (``\r``, ``ESC[…``),
        bidirectional overrides and zero-width characters show escaped."""
        return visible(self._summary_text(args))

    def _summary_text(self, args: Mapping[str, Any]) -> str:
        try:
            if callable(self._summary):
                return self._summary(args)
            if isinstance(self._summary, str):
                return self._summary.format_map(_Defaulting(args))
        except Exception:
            pass
        shown = ", ".join(f"{k}={_short(v)}" for k, v in args.items())
        return f"{self.name}({shown})"

    def validate(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        """Check the model's arguments; raise :class:`ToolError` saying what is wrong."""
        if not isinstance(raw, Mapping):
            raise ToolError(
                f"{self.name} takes a JSON object of arguments, got {type(raw).__name__}"
            )
        try:
            parsed = self.input_model.model_validate(dict(raw))
        except ValidationError as exc:
            raise ToolError(f"Invalid arguments for {self.name}: {_explain(exc)}") from None
        return {name: getattr(parsed, name) for name in self._field_names}

    async def call(self, ctx: ToolContext, raw: Mapping[str, Any]) -> ToolOutput:
        """Validate the model's arguments and run the tool."""
        return await self.invoke(ctx, self.validate(raw))

    async def invoke(self, ctx: ToolContext, kwargs: Mapping[str, Any]) -> ToolOutput:
        """Run the tool with arguments already checked by :meth:`validate`."""
        args = (ctx,) if self.takes_context else ()
        result = self.fn(*args, **kwargs)
        if inspect.isawaitable(result):
            result = await result
        return _to_output(result)


def _to_output(result: Any) -> ToolOutput:
    if isinstance(result, ToolOutput):
        return result
    if result is None:
        return ToolOutput("Done.")
    if isinstance(result, str):
        return ToolOutput(result)
    if isinstance(result, BaseModel):
        return ToolOutput(result.model_dump_json(indent=1))
    try:
        return ToolOutput(json.dumps(result, indent=1, default=str))
    except (TypeError, ValueError):
        return ToolOutput(repr(result))


@overload
def tool(fn: Callable[..., Any], /) -> Tool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    category: str = "general",
    permissions: frozenset[str] | set[str] | tuple[str, ...] = frozenset(),
    summary: Summary = None,
    paths: tuple[str, ...] | None = None,
    assess: Assess | None = None,
    preview: Preview | None = None,
    concurrent: bool = False,
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    category: str = "general",
    permissions: frozenset[str] | set[str] | tuple[str, ...] = frozenset(),
    summary: Summary = None,
    paths: tuple[str, ...] | None = None,
    assess: Assess | None = None,
    preview: Preview | None = None,
    concurrent: bool = False,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Make a :class:`Tool` from a typed function (usable bare or with options).

    >>> @tool(category="read", permissions={"read_files"}, summary="Count lines of {path}")
    ... def count_lines(path: str) -> str:
    ...     '''Count the lines of a text file.
    ...
    ...     Args:
    ...         path: File to read, relative to the workspace.
    ...     '''
    ...     return str(len(open(path).readlines()))
    """

    def wrap(f: Callable[..., Any]) -> Tool:
        return Tool(
            f,
            name=name,
            description=description,
            category=category,
            permissions=permissions,
            summary=summary,
            paths=paths,
            assess=assess,
            preview=preview,
            concurrent=concurrent,
        )

    return wrap(fn) if fn is not None else wrap


ToolFunction = Callable[..., Awaitable[Any] | Any]


# --- schema from signature ---------------------------------------------------------


def _input_model(
    fn: Callable[..., Any], name: str, arg_docs: Mapping[str, str]
) -> tuple[bool, type[BaseModel]]:
    signature = inspect.signature(fn)
    try:
        hints = get_type_hints(fn)
    except Exception as exc:  # unresolvable forward refs are a programming error
        raise TypeError(f"cannot read the type hints of tool {name}: {exc}") from exc
    params = list(signature.parameters.values())
    takes_context = bool(params) and hints.get(params[0].name) is ToolContext
    if takes_context:
        params = params[1:]
    fields: dict[str, Any] = {}
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise TypeError(f"tool {name} cannot take *args or **kwargs")
        if p.name not in hints:
            raise TypeError(f"tool {name}: parameter {p.name!r} needs a type hint")
        default = ... if p.default is inspect.Parameter.empty else p.default
        fields[p.name] = (hints[p.name], Field(default, description=arg_docs.get(p.name)))
    model = create_model(f"{name}_input", __config__=ConfigDict(extra="forbid"), **fields)
    return takes_context, model


def _inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """Resolve ``$ref``s into their definitions and drop titles: a compact, flat schema."""
    defs = schema.pop("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                target = defs[node["$ref"].rsplit("/", 1)[-1]]
                extra = {k: v for k, v in node.items() if k != "$ref"}
                return walk({**target, **extra})
            return {k: walk(v) for k, v in node.items() if k != "title"}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    result: dict[str, Any] = walk(schema)  # a dict, walked into a dict
    result.setdefault("properties", {})
    result["type"] = "object"
    return result


_SECTION = re.compile(r"^(Args|Arguments|Parameters|Returns|Raises|Yields|Examples?):$")
_ARG = re.compile(r"^\*{0,2}(\w+)(?:\s*\([^)]*\))?:\s*(.*)$")


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into its description and per-argument text."""
    description: list[str] = []
    args: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    arg_indent: int | None = None
    for line in doc.splitlines():
        stripped = line.strip()
        header = _SECTION.match(stripped)
        if header and line == line.lstrip():
            section, current, arg_indent = header.group(1), None, None
            continue
        if section is None:
            description.append(line)
            continue
        if section not in ("Args", "Arguments", "Parameters") or not stripped:
            continue
        indent = len(line) - len(line.lstrip())
        m = _ARG.match(stripped)
        if m and (arg_indent is None or indent <= arg_indent):
            arg_indent, current = indent, m.group(1)
            args[current] = m.group(2)
        elif current is not None:
            args[current] += " " + stripped
    return "\n".join(description).strip(), args


def _explain(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err["loc"]) or "(arguments)"
        if err["type"] == "extra_forbidden":
            parts.append(f"{where}: unexpected argument")
        else:
            parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)


def _short(value: Any, limit: int = 40) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    text = text.replace("\n", "⏎")
    return repr(text[: limit - 1] + "…") if len(text) > limit else repr(text)


class _Defaulting(dict[str, Any]):
    def __missing__(self, key: str) -> str:
        return "?"
