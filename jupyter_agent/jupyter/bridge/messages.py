"""The notebook bridge's requests and results, typed: one definition for both sides.

Each operation of ``bridge_protocol.json`` is an :class:`Operation` here, with the
``TypedDict`` of its arguments and of its reply's ``result``. The kernel sends a request
through :meth:`~jupyter_agent.jupyter.bridge.live.LiveBridge._request`, which takes an
:class:`Operation` and arguments of that operation's type, so a request of the wrong shape
is a type error, and the result has its operation's type (the frontend's answer is turned
into :class:`~jupyter_agent.notebook.bridge.Cell` and the like, which validate it, where it
is used).

``python -m jupyter_agent.jupyter.bridge.messages`` writes these types as JSON Schema to
``bridge_messages.json``; ``js/scripts/protocol.js`` (``npm run build:protocol``) turns it
into the lab extension's ``js/src/protocol.ts``, whose handlers are checked by tsc against
the same types. A test on each side fails when its generated file is stale, and
:data:`OPERATIONS` names exactly the operations of ``bridge_protocol.json`` (checked here at
import).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar

from pydantic import TypeAdapter
from typing_extensions import NotRequired, TypedDict

from .protocol import SPEC

__all__ = [
    "DELETE",
    "INSERT",
    "INTERRUPT",
    "LEGACY_INSERT",
    "MOVE",
    "OPERATIONS",
    "PING",
    "READ",
    "READ_CELL",
    "RUN",
    "SAVE",
    "SCHEMA_FILE",
    "SET_TYPE",
    "UPDATE",
    "Operation",
    "Request",
]

SCHEMA_FILE = Path(__file__).with_name("bridge_messages.json")

WireCellType = Literal["code", "markdown", "raw"]


# --- arguments --------------------------------------------------------------------------


class NoArgs(TypedDict):
    """An operation that takes no arguments."""


class CellArgs(TypedDict):
    """The cell an operation is about."""

    cell_id: str


class InsertArgs(TypedDict):
    """A new cell: its source and type, and where it goes (neither anchor: at the end)."""

    source: str
    cell_type: WireCellType
    before: NotRequired[str]
    after: NotRequired[str]
    cell_id: NotRequired[str]
    """The id to give it (for undo: putting a deleted cell back); an id in use is an
    error."""


class LegacyInsertArgs(TypedDict):
    """``insert`` as frontends of protocol 2 and older take it: the id to reuse is ``id``."""

    source: str
    cell_type: WireCellType
    before: NotRequired[str]
    after: NotRequired[str]
    id: NotRequired[str]


class UpdateArgs(TypedDict):
    """The cell's new source, replacing the old."""

    cell_id: str
    source: str


class MoveArgs(TypedDict):
    """Where the cell goes: before one cell or after one (exactly one of them)."""

    cell_id: str
    before: NotRequired[str]
    after: NotRequired[str]


class SetTypeArgs(TypedDict):
    cell_id: str
    cell_type: WireCellType


class RunArgs(TypedDict):
    cell_id: str
    timeout: float | None
    """Seconds after which the frontend interrupts the cell (None: none)."""
    source: NotRequired[str]
    """Run only if this is exactly the cell's source (protocol 2 and later)."""


class InterruptArgs(TypedDict):
    cell_id: NotRequired[str]
    """Only if the bridge still runs this cell (a late interrupt must not hit the next)."""


# --- results ----------------------------------------------------------------------------


class PingResult(TypedDict):
    """Who answers, for which notebook."""

    path: str
    """The notebook's path as the frontend knows it (relative to its root)."""
    frontend: str
    version: str
    """The extension's version."""
    protocol: NotRequired[int]
    """The protocol the extension speaks (absent: 1 or older)."""
    instance: NotRequired[str]
    """This frontend's id for the comm, to address requests to (protocol 1 and later)."""
    server_root: NotRequired[str]
    """The Jupyter server's root folder, as its page names it (``~`` for its home): with
    ``path``, where the notebook is on the server's host, which a remote kernel's is not."""


class WireCell(TypedDict):
    """A cell as replies carry it: every field, the source as one string."""

    id: str
    cell_type: str
    source: str
    execution_count: int | None
    outputs: list[dict[str, Any]]
    metadata: dict[str, Any]
    edited_since_run: NotRequired[bool]
    """A code cell whose source changed since it last ran, so its outputs and execution
    count are those of its earlier source: JupyterLab's ``isDirty``. Extensions older
    than this field leave it out, which reads as False."""


class ReadResult(TypedDict):
    path: str
    cells: list[WireCell]
    dirty: bool


class DeletedCell(WireCell):
    """The deleted cell, and the index it had."""

    index: int


class MoveResult(TypedDict):
    index: int
    """The cell's index once moved."""


class RunError(TypedDict):
    ename: str
    evalue: str
    traceback: list[str]


class RunReply(TypedDict):
    """How a run ended."""

    status: Literal["ok", "error", "aborted", "timeout"]
    execution_count: int | None
    outputs: list[dict[str, Any]]
    error: NotRequired[RunError]


class InterruptResult(TypedDict):
    interrupted: bool
    """Whether a kernel was interrupted."""


class SaveResult(TypedDict):
    """Nothing: the notebook is saved."""


# --- the operations ---------------------------------------------------------------------

A = TypeVar("A", bound=Mapping[str, object])
R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)


@dataclass(frozen=True)
class Operation(Generic[A, R]):
    """One operation of the bridge: its name on the wire, the type of its arguments and
    of its result (``A`` and ``R`` for the type checker, ``args`` and ``result`` for the
    schema)."""

    name: str
    args: type[A] = field(repr=False)
    result: type[R] = field(repr=False)

    def __call__(self, args: A) -> Request[R]:
        """A request of this operation with ``args``, whose reply's result is an ``R``."""
        return Request[R](self.name, args)


@dataclass(frozen=True)
class Request(Generic[R_co]):
    """A request ready to send: made by calling an :class:`Operation` with its arguments,
    so only arguments of the operation's type make one; ``R_co`` is its result's type."""

    op: str
    args: Mapping[str, object]


PING = Operation("ping", NoArgs, PingResult)
READ = Operation("read", NoArgs, ReadResult)
READ_CELL = Operation("read_cell", CellArgs, WireCell)
INSERT = Operation("insert", InsertArgs, WireCell)
LEGACY_INSERT = Operation("insert", LegacyInsertArgs, WireCell)
"""``insert`` for a frontend of protocol 2 or older (see :data:`INSERT_CELL_ID`)."""
UPDATE = Operation("update", UpdateArgs, WireCell)
DELETE = Operation("delete", CellArgs, DeletedCell)
MOVE = Operation("move", MoveArgs, MoveResult)
SET_TYPE = Operation("set_type", SetTypeArgs, WireCell)
RUN = Operation("run", RunArgs, RunReply)
INTERRUPT = Operation("interrupt", InterruptArgs, InterruptResult)
SAVE = Operation("save", NoArgs, SaveResult)

OPERATIONS: dict[str, Operation[Any, Any]] = {
    op.name: op for op in (PING, READ, READ_CELL, INSERT, UPDATE, DELETE, MOVE)
} | {op.name: op for op in (SET_TYPE, RUN, INTERRUPT, SAVE)}
"""Each operation of ``bridge_protocol.json``, by name, as this protocol version sends it."""

INSERT_CELL_ID = 3
"""The protocol from which ``insert`` takes the id to reuse as ``cell_id``, as every other
operation names a cell (before: ``id``)."""

if list(OPERATIONS) != list(SPEC["operations"]):  # pragma: no cover - a developer's slip
    raise ImportError(
        "bridge_messages.OPERATIONS must list exactly the operations of bridge_protocol.json, "
        f"in its order: {list(SPEC['operations'])}"
    )


# --- the schema -------------------------------------------------------------------------


def schema() -> dict[str, Any]:
    """The JSON Schema of every operation's arguments and result, as ``bridge_messages.json``
    holds it: ``OperationArgs`` and ``OperationResults`` map each operation to its types;
    ``x-constants`` holds the values the extension needs as values."""
    names = {op.args for op in OPERATIONS.values()} | {op.result for op in OPERATIONS.values()}
    names |= {LegacyInsertArgs}
    root: dict[str, Any] = {"$defs": {}}
    for t in sorted(names, key=lambda t: t.__name__):
        found = TypeAdapter(t).json_schema(ref_template="#/$defs/{model}")
        root["$defs"].update(found.pop("$defs", {}))
        root["$defs"][t.__name__] = found
    for definition in root["$defs"].values():
        for child in definition.get("properties", {}).values():
            _untitle(child)

    def table(title: str, kind: Literal["args", "result"], doc: str) -> dict[str, Any]:
        return {
            "title": title,
            "description": doc,
            "type": "object",
            "properties": {
                name: {"$ref": f"#/$defs/{getattr(op, kind).__name__}"}
                for name, op in OPERATIONS.items()
            },
            "required": list(OPERATIONS),
            "additionalProperties": False,
        }

    root["$defs"]["OperationArgs"] = table(
        "OperationArgs", "args", "The arguments of each operation's request."
    )
    root["$defs"]["OperationResults"] = table(
        "OperationResults", "result", "The result of each operation's successful reply."
    )
    root["title"] = "BridgeMessages"
    root["type"] = "object"
    root["x-constants"] = {"INSERT_CELL_ID": INSERT_CELL_ID}
    return root


def _untitle(node: Any) -> None:
    """Drop a field's title, which would make it a TypeScript type of its own."""
    if isinstance(node, dict):
        node.pop("title", None)
        for child in node.values():
            _untitle(child)
    elif isinstance(node, list):
        for child in node:
            _untitle(child)


def render() -> str:
    """``bridge_messages.json``'s text."""
    return json.dumps(schema(), indent=1, sort_keys=True) + "\n"


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else SCHEMA_FILE
    target.write_text(render(), encoding="utf-8")
