"""The panel's wire protocol: every message between the kernel and a panel view, typed.

Three channels join the kernel's :class:`~jupyter_agent.jupyter.panel.widget.AgentPanel` and a view
(``js/src/panel``):

- the widget's synced traits, :class:`PanelState`, written by the kernel only;
- custom messages from the kernel, :data:`KernelMessage`: command replies and the
  transcript (a snapshot, then batches of entries, or a piece of streamed text);
- custom messages from a view, :data:`ViewMessage`: ``hello`` when it renders, and commands.

A transcript entry (:data:`TranscriptEntry`) is a run's event as
:data:`~jupyter_agent.events.EventAdapter` dumps it, without ``session_id``, ``seq`` and
``time`` (:func:`to_entry`), or one of the panel's own entries (a user's message, a note, the
end of a streamed text block, a plan's execution cut short). Every entry may carry ``n``,
its place in the panel's log, so a view drops what it already has.

This module is the protocol's one definition. ``python -m jupyter_agent.jupyter.panel.protocol``
writes its JSON Schema, with the constants both sides share, to ``panel_protocol.json``;
``js/scripts/wire.js`` (``npm run build:wire``) turns that into ``js/src/panel/wire.ts``.
A test on each side fails when its generated file is stale, and both sides dispatch on
every kind exhaustively. What a view sends is validated here (:data:`ViewMessageAdapter`)
before the kernel acts on it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union, get_args

from pydantic import BaseModel, ConfigDict, Discriminator, TypeAdapter, ValidationError
from typing_extensions import NotRequired, TypedDict

from ...config.trust import TrustPrompt
from ...events import (
    ContextEvent,
    Event,
    EventAdapter,
    RunAction,
    StateEvent,
    SubagentOutputEvent,
    UsageEvent,
    WarningEvent,
)
from ...notebook.bridge import BridgeMode
from ...sessions.notebooks import Where
from ...states import AgentState
from ...tools.control import CONTROL_TOOLS

SCHEMA_FILE = Path(__file__).with_name("panel_protocol.json")

Entry = dict[str, Any]
"""An entry as the kernel builds and sends it: a dict in the shape of :data:`TranscriptEntry`
(the transcript merges and trims entries in place, so they stay plain dicts)."""

DROPPED_FIELDS = ("session_id", "seq", "time")
"""Event fields a view never reads: not sent."""


def to_entry(event: Event) -> Entry:
    """An event as the panel sends it: without the fields a view never reads."""
    if event.kind == "text_delta":
        compact: Entry = {"kind": "text_delta", "text": event.text}
        if event.phase:
            compact["phase"] = event.phase
        return compact
    data: Entry = EventAdapter.dump_python(event, mode="json")
    _drop_unread(data)
    return data


def _drop_unread(data: Entry) -> None:
    """Drop what a view never reads, from an entry and the subagent's events it wraps."""
    for key in DROPPED_FIELDS:
        data.pop(key, None)
    inner = data.get("event") if data.get("kind") == "subagent_output" else None
    if isinstance(inner, dict):
        if inner.get("kind") == "text_delta":
            for key in ("run_id", *DROPPED_FIELDS):
                inner.pop(key, None)
            if not inner.get("phase"):
                inner.pop("phase", None)
        _drop_unread(inner)


# --- the panel's own transcript entries ------------------------------------------------


class UserEntry(TypedDict):
    """What the user sent (shown again for a resumed session)."""

    kind: Literal["user"]
    text: str
    action: NotRequired[RunAction]
    """The user pressed a button (Execute plan) and ``text`` is the prompt it became: the
    view shows the action, the prompt only on demand."""
    n: NotRequired[int]


class NoteEntry(TypedDict):
    """A line from the panel itself: a resumed session, entries trimmed from the log."""

    kind: Literal["note"]
    text: str
    trimmed: NotRequired[bool]
    """The note that says how many of the oldest entries the log no longer holds."""
    cells_of: NotRequired[str]
    """The entries before this note were held in this other notebook (the session went on
    here): a view shows their cell references as text, never as links into this one."""
    n: NotRequired[int]


class TextEndEntry(TypedDict):
    """A text block ended whose text the view has streamed already: it keeps that text
    (a ``text`` entry carries the whole text instead when the pieces did not add up)."""

    kind: Literal["text_end"]
    phase: str | None
    interrupted: bool
    run_id: NotRequired[str]
    n: NotRequired[int]


class PlanStoppedEntry(TypedDict):
    """A resumed session's plan whose execution was cut short: the view offers to go on."""

    kind: Literal["plan_stopped"]
    n: NotRequired[int]


class TrustedEntry(TypedDict):
    """The user trusted the folder's settings: what now applies (the prompt they saw)."""

    kind: Literal["trusted"]
    applied: TrustPrompt
    n: NotRequired[int]


PanelEntry = UserEntry | NoteEntry | TextEndEntry | PlanStoppedEntry | TrustedEntry
EVENT_TYPES: tuple[type, ...] = get_args(get_args(Event)[0])
TRAIT_EVENTS = (StateEvent, UsageEvent, ContextEvent)
"""Events that only set traits (the status and usage lines, the context gauge): never
transcript entries."""


def innermost(event: Event) -> Event:
    """The event itself, or the subagent's event it wraps (a subagent's subagent's too)."""
    while isinstance(event, SubagentOutputEvent):
        event = event.event
    return event


def in_transcript(event: Event) -> bool:
    """Whether the transcript shows ``event``: not a trait event, nor a subagent's (its
    state shows on its card when it ends; its usage counts in the parent's own), nor the
    notice that the folder's settings wait for trust: the ``trust`` trait's prompt says
    that from the moment the panel opens, and goes once the folder is trusted, where a
    line in the transcript would come only with the first run and stay after trust."""
    inner = innermost(event)
    if isinstance(inner, WarningEvent) and inner.action == "trust_workspace":
        return False
    return not isinstance(inner, TRAIT_EVENTS)


if TYPE_CHECKING:
    TranscriptEntry = Entry
else:  # built from the event union, so a new event is in the protocol by itself
    TranscriptEntry = Annotated[
        Union[
            (*(t for t in EVENT_TYPES if t not in TRAIT_EVENTS), *get_args(PanelEntry))
        ],  # a Union of a tuple of types
        Discriminator("kind"),
    ]
"""Everything a transcript shows: every event kind (state, usage and context only set
traits) and the panel's own entries."""

# --- messages from the kernel ----------------------------------------------------------


class FoundSession(TypedDict):
    """A past session matching a ``search_sessions`` command, with its best passage."""

    id: str
    title: str
    updated: float
    """When the session was last written (seconds since the epoch)."""
    said: float
    """When the matching passage was written."""
    role: str
    """Who said it: user, assistant, plan, summary, question, tool call, tool result."""
    label: str
    """The tool's name, for a tool call or result."""
    parts: list[str]
    """The passage cut at its matches: plain text at even places, matched words at odd."""
    matches: int
    notebook: str
    """The notebook the session worked on, relative to the workspace (empty: not known)."""
    where: Where
    """That notebook seen from this panel's: resuming one of another notebook asks first."""
    open_path: str
    """That notebook as the Jupyter server names it, to open it (empty: it cannot be)."""
    outcome: str
    """What the session came to, cut short: its last summary, plan or answer (empty: none)."""
    outcome_kind: str
    """What ``outcome`` is: summary, plan or answer."""
    stop_reason: str
    """How its last run ended (completed, manual_stop…; empty: it never ended one)."""


class Reply(TypedDict):
    """The answer to a command: ``error`` says what went wrong, in words for the user."""

    type: Literal["reply"]
    id: str | None
    ok: bool
    error: str | None
    found: NotRequired[list[FoundSession]]
    """The answer to ``search_sessions``: matching sessions, best first."""


class Snapshot(TypedDict):
    """The transcript so far, for one view (``view``) or, after a resume, every view."""

    type: Literal["snapshot"]
    view: str | None
    entries: list[TranscriptEntry]


class Events(TypedDict):
    """New entries, about 30 batches a second at most; pieces of a stream merged."""

    type: Literal["events"]
    entries: list[TranscriptEntry]


class StreamedText(TypedDict):
    """A batch that is only streamed text of the current block: entry ``n`` appends ``text``."""

    type: Literal["text"]
    n: int
    text: str


KernelMessage = Annotated[Reply | Snapshot | Events | StreamedText, Discriminator("type")]

# --- messages from a view --------------------------------------------------------------


class Hello(BaseModel):
    """A view rendered (again, after a page reload): it wants a snapshot."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    type: Literal["hello"]
    view: str | None = None


class _Command(BaseModel):
    """A command: answered by a :class:`Reply` with the same ``id``."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    type: Literal["command"]
    id: str


class SendCommand(_Command):
    """Start a run with ``text`` as the task, in ``role`` (the current role if empty)."""

    name: Literal["send"]
    text: str
    role: str | None = None


class StopCommand(_Command):
    name: Literal["stop"]


class PauseCommand(_Command):
    """Pause the run before its next step or tool call (its approvals stay pending)."""

    name: Literal["pause"]


class UnpauseCommand(_Command):
    """Continue the paused run (Resume)."""

    name: Literal["unpause"]


class AnswerCommand(_Command):
    """Answer the pending question ``question_id``."""

    name: Literal["answer"]
    question_id: str
    value: str


class ApproveCommand(_Command):
    """Allow or deny the pending approval ``request_id``; ``remember``: always allow calls
    like it for the session, in the scope ``scope`` (an offered option's id; ``None``: the
    first)."""

    name: Literal["approve"]
    request_id: str
    allow: bool
    remember: bool = False
    scope: str | None = None


class ExecutePlanCommand(_Command):
    """Hand the submitted plan to the Actor (or carry on with one cut short)."""

    name: Literal["execute_plan"]


class SetRoleCommand(_Command):
    name: Literal["set_role"]
    role: str


class SetModelCommand(_Command):
    """Use the model ``model`` (a model string) from the next run on."""

    name: Literal["set_model"]
    model: str


class SetMaxStepsCommand(_Command):
    name: Literal["set_max_steps"]
    value: int


class ResumeCommand(_Command):
    """Show and continue the saved session ``session_id``. A session of another notebook
    is refused unless ``here``: the user chose to go on with it in this notebook (the view
    asked), without its cell references."""

    name: Literal["resume"]
    session_id: str
    here: bool = False


class SessionsCommand(_Command):
    """List the saved sessions again (the ``sessions`` trait)."""

    name: Literal["sessions"]


class SearchSessionsCommand(_Command):
    """Search the workspace's past sessions for ``query``'s words (the current session is
    left out); the reply carries the matches in ``found``."""

    name: Literal["search_sessions"]
    query: str
    limit: int = 10


class TrustCommand(_Command):
    """Trust the workspace's own settings (the trust prompt's button, and the one on the
    notice that they apply only in part). Refused when they changed since the prompt the
    view shows was made: the ``trust`` trait then holds the new prompt."""

    name: Literal["trust"]


class SetKeyCommand(_Command):
    """Use ``key`` as the model's API key: in memory for this session, and in the user's
    owner-only credentials file too when ``save``. The key is never sent back, logged or
    put in a trait."""

    name: Literal["set_key"]
    key: str
    save: bool = False

    def __repr__(self) -> str:  # a log line or a traceback never shows the key
        return f"SetKeyCommand(id={self.id!r}, save={self.save!r})"

    __str__ = __repr__


class RetryCommand(_Command):
    """Send the last message again (the button on an error)."""

    name: Literal["retry"]


class CompactCommand(_Command):
    """Make the conversation smaller now (Compact now): old tool results cleared, earlier
    turns summarised by the model. Refused while a run goes on or when there is nothing
    to compact."""

    name: Literal["compact"]


Command = Annotated[
    SendCommand
    | StopCommand
    | PauseCommand
    | UnpauseCommand
    | AnswerCommand
    | ApproveCommand
    | ExecutePlanCommand
    | SetRoleCommand
    | SetModelCommand
    | SetMaxStepsCommand
    | ResumeCommand
    | SessionsCommand
    | SearchSessionsCommand
    | TrustCommand
    | SetKeyCommand
    | RetryCommand
    | CompactCommand,
    Discriminator("name"),
]

ViewMessage = Annotated[Hello | Command, Discriminator("type")]
ViewMessageAdapter: TypeAdapter[Hello | Command] = TypeAdapter(ViewMessage)
"""Validates what a view sends: ``ViewMessageAdapter.validate_python(content)``."""


def why_invalid(content: dict[str, Any], exc: ValidationError) -> str:
    """What was wrong with a view's message, in a line (the reply's error)."""
    error = exc.errors()[0]
    if error["type"] == "union_tag_invalid" and content.get("type") == "command":
        return f"unknown command {content.get('name')!r}"
    where = ".".join(str(part) for part in error["loc"][1:]) or "message"
    name = content.get("name") or content.get("type")
    return f"bad {name!r} message: {where}: {error['msg']}"


# --- the synced traits ------------------------------------------------------------------


class RoleChoice(TypedDict):
    name: str
    description: str


class ModelChoice(TypedDict):
    """A model the picker offers: the one in use, those of the settings' ``[models]
    choices``, and the providers whose key is at hand."""

    id: str
    """Its model string (what ``set_model`` takes)."""
    label: str
    provider: str
    current: bool
    ready: bool
    setup: str
    """Why it cannot be called yet (empty when it can)."""


class SavedSession(TypedDict):
    """A session the picker lists: this notebook's first, then other notebooks', then those
    whose notebook is not known; the newest first in each."""

    id: str
    title: str
    updated: float
    state: str
    runs: int
    notebook: str
    """The notebook it worked on, relative to the workspace (empty: not known)."""
    where: Where
    """That notebook seen from this panel's: resuming one of another notebook asks first."""
    open_path: str
    """That notebook as the Jupyter server names it, to open it (empty: it cannot be)."""


class PanelUsage(TypedDict, total=False):
    """Tokens and cost of the current run and of the session (empty before the first call)."""

    run_input_tokens: int
    run_output_tokens: int
    run_cache_read_input_tokens: int
    run_cost_usd: float
    session_input_tokens: int
    session_output_tokens: int
    session_cache_read_input_tokens: int
    session_cost_usd: float
    run_unpriced_calls: int
    """Calls whose price is unknown: the view says the cost is unknown, not $0."""
    session_unpriced_calls: int


class PanelContext(TypedDict, total=False):
    """How full the model's context window is, for the gauge (empty while the conversation
    is: nothing to show, nothing to compact)."""

    used_tokens: int
    """What the next request holds: as the API counted the last one, or estimated."""
    window: int
    cached_tokens: int
    """Of ``used_tokens``, those the last request read from the prompt cache."""
    estimated: bool
    """``used_tokens`` is an estimate (after a compaction, or a resumed session before its
    first request), not the API's count."""


class PanelState(TypedDict):
    """The widget's synced traits, as :class:`~jupyter_agent.jupyter.panel.widget.AgentPanel`
    declares them; the kernel writes them, a view only reads."""

    status: AgentState
    detail: str
    """What the state is about: the tool being run, what the agent waits for, a message."""
    stop_reason: str
    busy: bool
    role: str
    roles: list[RoleChoice]
    model_name: str
    model_label: str
    models: list[ModelChoice]
    """What the model picker lists (the current model first)."""
    model_notes: str
    """What the current model's provider lacks, said plainly (no prompt caching, no
    images, an unknown price); empty when it lacks nothing."""
    session_id: str
    sessions: list[SavedSession]
    notebook: str
    bridge_mode: BridgeMode | Literal[""]
    """Empty when the agent has no notebook."""
    usage: PanelUsage
    context: PanelContext
    max_steps: int
    pending_question: str
    pending_approval: str
    running_code: bool
    """The agent runs code in this kernel: Stop must also interrupt the kernel."""
    kernel_id: str
    dock: Literal["inline", "side"]
    widget_id: str
    sandbox: str
    sandbox_detail: str
    sandboxed: bool
    model_ready: bool
    """The model can be called: a key was found, and was not rejected."""
    model_setup: str
    """Why the model cannot be called yet, in a sentence (empty when it can): the view
    shows the set-up box with it."""
    pausing: bool
    """The user paused the run: it waits at its next step or tool call (status "paused",
    its detail saying where, once it does); Resume continues it."""
    waiting_task: str
    """A task given before the model could be called, shown in the set-up box: it starts
    once the model can be called (empty: none)."""
    plan_ready: bool
    """The last run ended by submitting a plan, which awaits the user's review (the
    status says so rather than "completed")."""
    trust: TrustPrompt | None
    """What trusting the workspace's settings would enable, rendered by the kernel from
    their effect (never their own descriptions): shown from the moment the panel opens;
    ``None`` when nothing waits for trust."""


# --- the schema both sides are generated from ------------------------------------------


class _Protocol(TypedDict):
    """The roots of the schema (this type itself is never sent)."""

    entry: TranscriptEntry
    kernel_message: KernelMessage
    view_message: ViewMessage
    state: PanelState


CONSTANTS: dict[str, Any] = {
    "CONTROL_TOOLS": sorted(tool.name for tool in CONTROL_TOOLS),
}
"""Values the view needs as values, not types: the tools whose cards it hides unless
they fail (the agent talks to the panel through them)."""


_NAMED_UNIONS: dict[str, Any] = {
    "TranscriptEntry": TranscriptEntry,
    "KernelMessage": KernelMessage,
    "ViewMessage": ViewMessage,  # before Command, which it contains
    "Command": Command,
}


def schema() -> dict[str, Any]:
    """The JSON Schema of the protocol, with ``x-constants``, as ``panel_protocol.json``
    holds it."""
    root = TypeAdapter(_Protocol).json_schema(mode="serialization")
    defs = root["$defs"]
    for member in EVENT_TYPES:
        definition = defs[member.__name__]
        properties = definition["properties"]
        for key in DROPPED_FIELDS:
            del properties[key]
        properties["n"] = {"type": "integer", "description": "The entry's place in the log."}
        # `kind` has a default in Python, but every dump carries it: it is the discriminator.
        definition["required"] = ["kind", *definition.get("required", [])]
    # Unions are inlined where they are used; name each once, so the TypeScript has it.
    for name, union in _NAMED_UNIONS.items():
        body = TypeAdapter(union).json_schema(mode="serialization")
        body.pop("$defs", None)
        _replace(root, body, {"$ref": f"#/$defs/{name}"})
        defs[name] = {"title": name, **body}
    for definition in [root, *defs.values()]:
        for child in definition.get("properties", {}).values():
            _tidy(child)
    root["title"] = "PanelProtocol"
    root["x-constants"] = CONSTANTS
    return root


def _tidy(node: Any) -> None:
    """Keep a field's schema from becoming a TypeScript type of its own: a title names a
    type, and so does a reference with a default beside it."""
    if isinstance(node, dict):
        node.pop("title", None)
        if "$ref" in node:
            node.pop("default", None)
        for child in node.values():
            _tidy(child)
    elif isinstance(node, list):
        for child in node:
            _tidy(child)


def _replace(node: Any, old: dict[str, Any], new: dict[str, Any]) -> None:
    """Replace every sub-schema of ``node`` equal to ``old`` with ``new``, in place."""
    children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
    for key, child in list(node.items() if isinstance(node, dict) else enumerate(children)):
        if child == old:
            node[key] = dict(new)
        else:
            _replace(child, old, new)


def render() -> str:
    """``panel_protocol.json``'s text."""
    return json.dumps(schema(), indent=1, sort_keys=True, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else SCHEMA_FILE
    target.write_text(render(), encoding="utf-8")
