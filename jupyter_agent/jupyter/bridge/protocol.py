"""The notebook bridge's vocabulary on the kernel side, and its errors worded for the model.

One job: what ``bridge_protocol.json`` defines (the comm target, the protocol version,
the operations, the error codes and their fields; the lab extension's
``js/src/protocol.ts`` is generated from the same file), and the errors
:class:`~jupyter_agent.jupyter.bridge.live.LiveBridge` raises when the frontend fails a
request or closes the comm.

Invariants: every error carries its ``code`` and ``fields`` for code that branches on it,
and a message written for the model from that code, never from the frontend's prose —
except for ``failed`` (an error nobody foresaw) and codes this side does not know (a
newer extension), which keep the frontend's own message. Every code of
``bridge_protocol.json`` has its wording here (``tests/jupyter/test_live_bridge.py``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from importlib import resources
from typing import Any

from ...errors import ToolError

__all__ = [
    "ERROR_CODES",
    "KERNEL_ERROR_CODES",
    "NO_EXTENSION",
    "OPERATIONS",
    "PROTOCOL",
    "SOURCE_CHECK",
    "SPEC",
    "TARGET",
    "BridgeClosed",
    "BridgeError",
    "BridgeTimeout",
    "closed_why",
    "failure",
]


SPEC: dict[str, Any] = json.loads(
    resources.files(__package__).joinpath("bridge_protocol.json").read_text(encoding="utf-8")
)
"""The protocol's names, defined once for both sides (``bridge_protocol.json``; the lab
extension's ``js/src/protocol.ts`` is generated from it)."""
TARGET: str = SPEC["comm_target"]
"""The comm target the lab extension registers."""
PROTOCOL: int = SPEC["version"]
"""The protocol version this side speaks (docs/notebook-bridge.md)."""
OPERATIONS: dict[str, str] = SPEC["operations"]
"""Each operation, with what it does (as in "could not read the notebook")."""
EVENTS: dict[str, str] = SPEC["events"]
"""What the frontend tells the kernel unasked (``{"event": name, ...}``), e.g. a rename."""
ERROR_CODES: frozenset[str] = frozenset(SPEC["errors"])
"""The codes of the frontend's failed replies and comm closes."""
KERNEL_ERROR_CODES: frozenset[str] = frozenset(SPEC["kernel_errors"])
"""The codes of failures this side finds itself (a timeout, a close without a code, …)."""

SOURCE_CHECK = 2
"""The protocol from which the frontend checks a run's expected source (``run``'s
``source``) and says so in its ping answer (``protocol``)."""

NO_EXTENSION = "no_extension"
"""Why a comm was closed when the frontend closed it without a code: JupyterLab (or
another frontend) without the lab extension closes comms to targets it does not know."""


class BridgeError(ToolError):
    """The notebook frontend refused or failed a request. The message is written for the
    model; ``code`` (one of :data:`ERROR_CODES` or :data:`KERNEL_ERROR_CODES`) and
    ``fields`` say the same for code that branches on it."""

    def __init__(
        self, message: str, *, code: str = "failed", fields: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.fields: dict[str, str] = dict(fields or {})


class BridgeTimeout(BridgeError):
    """The frontend did not answer a request in time."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code="timeout")


class BridgeClosed(BridgeError):
    """The frontend closed the comm (the notebook was closed, or it is not this kernel's);
    ``code`` says why."""


# Why the frontend failed a request, by the reply's code: a clause for "JupyterLab could
# not <do it>: <why>." The frontend's own message is used only for `failed` (an error
# nobody foresaw) and for codes this side does not know (a newer extension).
_WHY: dict[str, Callable[[Mapping[str, str], str], str]] = {
    "path_mismatch": lambda f, m: "no notebook on this kernel has that path",
    "notebook_closed": lambda f, m: "the notebook was closed",
    "malformed_request": lambda f, m: f"the request was malformed ({f['problem']})",
    "unknown_operation": lambda f, m: (
        f"the jupyter-agent extension does not know the operation {f['op']!r} (it may be "
        "older than this kernel's jupyter_agent)"
    ),
    "bad_argument": lambda f, m: (
        f"the argument {f['argument']!r} is missing or invalid (it must be {f['expected']})"
    ),
    "bad_cell_type": lambda f, m: f"unknown cell type {f['cell_type']}: use code, markdown or raw",
    "no_cell": lambda f, m: f"there is no cell with id {f['cell_id']!r}",
    "duplicate_id": lambda f, m: f"a cell with id {f['cell_id']} already exists",
    "before_and_after": lambda f, m: "give either before or after, not both",
    "no_anchor": lambda f, m: "give one of before or after",
    "next_to_itself": lambda f, m: f"cannot move cell {f['cell_id']} next to itself",
    "not_code": lambda f, m: f"cell {f['cell_id']} is a {f['cell_type']} cell; only code cells run",
    "no_view": lambda f, m: "the notebook is not open in a view, so its cells cannot run",
    "no_kernel": lambda f, m: "the notebook has no running kernel, so its cells cannot run",
    "source_changed": lambda f, m: (
        f"cell {f['cell_id']} holds other code than the code that was approved, so nothing ran"
    ),
    "failed": lambda f, m: m or "it failed",
}

# Why the comm is closed, by code, for codes a close carries or this side sets.
_CLOSED_WHY: dict[str, Callable[[str], str]] = {
    "no_extension": lambda path: "it has no jupyter-agent extension",
    "path_mismatch": lambda path: f"no notebook open there is {path} on this kernel",
    "notebook_closed": lambda path: "the notebook was closed",
    "closed_by_kernel": lambda path: "the kernel closed it",
    "not_connected": lambda path: "it was never connected",
    "not_in_a_kernel": lambda path: "this Python is not a Jupyter kernel",
    "old_extension": lambda path: (
        "its jupyter-agent extension is older than this kernel's jupyter_agent"
    ),
}


def _sentence(clause: str) -> str:
    sentence = clause[:1].upper() + clause[1:]
    return sentence if sentence.endswith(".") else sentence + "."


def _fields(code: str, data: Mapping[str, Any]) -> dict[str, str]:
    """The fields ``code`` carries, from a reply or close; a missing one is empty."""
    names = SPEC["errors"].get(code, {}).get("fields", {})
    return {name: str(data.get(name, "")) for name in names}


def closed_why(code: str | None, message: str, kernel_path: str) -> str:
    """Why the comm is closed, in words (a clause): ``code`` is why it closed (None counts
    as never connected), ``message`` what the frontend said, ``kernel_path`` the notebook
    the comm was opened for."""
    code = code or "not_connected"
    if code in _CLOSED_WHY:
        return _CLOSED_WHY[code](kernel_path)
    if code in _WHY:
        return _WHY[code](_fields(code, {}), message)
    return message or code


def failure(
    op: str,
    args: Mapping[str, Any],
    reply: Mapping[str, Any],
    path: str,
    *,
    app: str = "JupyterLab",
) -> BridgeError:
    """The error for the frontend's failed reply to ``op``, worded from its code and fields
    (``path``: the notebook, as shown; ``app``: where it is open, as the user knows it)."""
    code = reply.get("code")
    message = str(reply.get("message") or "")
    if not isinstance(code, str) or code not in _WHY:
        code = "failed"  # a newer extension's code: its message is all there is
    fields = _fields(code, reply)
    if code == "no_cell":
        return BridgeError(
            f"There is no cell with id {fields['cell_id']!r} in {path}. Call "
            "read_notebook to see the cell ids.",
            code=code,
            fields=fields,
        )
    target = f" {args['cell_id']}" if "cell_id" in args and op != "interrupt" else ""
    verb = OPERATIONS.get(op, op)
    if target and verb.endswith(" the cell"):
        verb = verb[: -len(" the cell")] + f" cell{target}"
    why = _sentence(_WHY[code](fields, message))
    app = app[:1].upper() + app[1:]
    return BridgeError(f"{app} could not {verb}: {why}", code=code, fields=fields)
