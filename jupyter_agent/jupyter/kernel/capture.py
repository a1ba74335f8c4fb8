"""Output capture for cells the agent runs in its own kernel (see ``kernel.py``).

One job: while :class:`~jupyter_agent.jupyter.kernel.runner.KernelExecutor` runs code, everything
that code prints or displays, its result and its error, lands in that run's
:class:`Capture` as nbformat output dicts, and nowhere else.

- ipykernel sends output to the *parent* of a context variable, and a task started from
  a cell inherits that cell's parent: left alone, the agent's cells would print into the
  cell that started the agent. So ``sys.stdout``/``sys.stderr``, the display publisher,
  the display hook (``Out``) and the traceback display are routed while a run captures.
  The routing is chosen per asyncio *context* (:data:`CAPTURE`): output of the code a run
  executes (and of tasks that code starts) is captured; output of anything else — a cell
  the user runs meanwhile, the kernel's own machinery — goes where it always went.
- The hooks are installed while at least one run captures (:data:`ROUTER`, refcounted)
  and restored exactly afterwards: a hook someone else replaced meanwhile is left alone.
- ``input()`` and ``getpass()`` raise in captured code: no one can answer them, and the
  kernel's stdin outside a cell is a pipe that never delivers (the kernel would hang).
- Output that bypasses the routing (a logging handler holding the kernel's stream) goes
  to no cell once :func:`detach_from_cell` emptied the run's parent header.
"""

from __future__ import annotations

import base64
import builtins
import contextlib
import contextvars
import functools
import getpass
import json
import sys
from collections.abc import Iterator
from typing import Any, TextIO

__all__ = ["CAPTURE", "ROUTER", "Capture", "detach_from_cell"]


# --- what one run captured -------------------------------------------------------------


class Capture:
    """The outputs of one run, in order, as nbformat output dicts."""

    def __init__(self, execution_count: int) -> None:
        self.execution_count = execution_count
        self.outputs: list[dict[str, Any]] = []
        self._clear_pending = False
        self._result: dict[str, Any] | None = None

    def _before_output(self) -> None:
        if self._clear_pending:
            self._clear_pending = False
            self.outputs.clear()

    def stream(self, name: str, text: str) -> None:
        if not text:
            return
        self._before_output()
        last = self.outputs[-1] if self.outputs else None
        if last is not None and last["output_type"] == "stream" and last["name"] == name:
            last["text"] += text
        else:
            self.outputs.append({"output_type": "stream", "name": name, "text": text})

    def display(
        self,
        data: dict[str, Any],
        metadata: dict[str, Any] | None,
        transient: dict[str, Any] | None,
        update: bool,
    ) -> None:
        display_id = (transient or {}).get("display_id")
        bundle = _json_bundle(data)
        if update:
            for output in self.outputs:
                if display_id is not None and output.get("_display_id") == display_id:
                    output["data"] = bundle
                    output["metadata"] = dict(metadata or {})
            return
        self._before_output()
        output = {"output_type": "display_data", "data": bundle, "metadata": dict(metadata or {})}
        if display_id is not None:
            output["_display_id"] = display_id
        self.outputs.append(output)

    def clear(self, wait: bool) -> None:
        if wait:
            self._clear_pending = True
        else:
            self.outputs.clear()

    def start_result(self) -> None:
        self._result = {
            "output_type": "execute_result",
            "execution_count": self.execution_count,
            "data": {},
            "metadata": {},
        }

    def result_data(self, data: dict[str, Any], metadata: dict[str, Any] | None) -> None:
        if self._result is not None:
            self._result["data"] = _json_bundle(data)
            self._result["metadata"] = dict(metadata or {})

    def finish_result(self) -> None:
        result, self._result = self._result, None
        if result is not None and result["data"]:
            self._before_output()
            self.outputs.append(result)

    def error(self, ename: str, evalue: str, traceback: list[str]) -> None:
        self._before_output()
        self.outputs.append(
            {
                "output_type": "error",
                "ename": ename,
                "evalue": evalue,
                "traceback": [str(line) for line in traceback],
            }
        )

    def finished(self) -> list[dict[str, Any]]:
        return [{k: v for k, v in o.items() if not k.startswith("_")} for o in self.outputs]


def _json_bundle(data: dict[str, Any]) -> dict[str, Any]:
    """A mime bundle as nbformat stores it: images base64 text, everything JSON."""
    bundle: dict[str, Any] = {}
    for mime, value in (data or {}).items():
        if isinstance(value, (bytes, bytearray)):
            if mime.startswith("image/") and mime != "image/svg+xml":
                value = base64.b64encode(bytes(value)).decode("ascii")
            else:
                value = bytes(value).decode("utf-8", "replace")
        elif not isinstance(value, str):
            try:
                value = json.loads(json.dumps(value, default=str))
            except (TypeError, ValueError):
                value = str(value)
        bundle[str(mime)] = value
    return bundle


CAPTURE: contextvars.ContextVar[Capture | None] = contextvars.ContextVar(
    "jupyter_agent_capture", default=None
)


# --- routing the kernel's output hooks ----------------------------------------------------


class _RoutedStream:
    """Stands in for ``sys.stdout``/``sys.stderr``: captured contexts write to their capture."""

    def __init__(self, original: TextIO, name: str) -> None:
        self._original = original
        self._name = name

    def write(self, text: str) -> int:
        capture = CAPTURE.get()
        if capture is None:
            return self._original.write(text)
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        capture.stream(self._name, text)
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if CAPTURE.get() is None:
            self._original.flush()

    def isatty(self) -> bool:
        return False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._original, name)


# --- the hooks: each routes a captured context's output to its capture -------------


def _routed_publish(original: Any) -> Any:
    def routed(data: Any, metadata: Any = None, *args: Any, **kwargs: Any) -> Any:
        capture = CAPTURE.get()
        if capture is None:
            return original(data, metadata, *args, **kwargs)
        transient = kwargs.get("transient")
        capture.display(data, metadata, transient, bool(kwargs.get("update")))
        return None

    return routed


def _routed_clear_output(original: Any) -> Any:
    def routed(wait: bool = False) -> Any:
        capture = CAPTURE.get()
        return original(wait=wait) if capture is None else capture.clear(wait)

    return routed


def _routed_start_displayhook(original: Any) -> Any:
    def routed() -> Any:
        capture = CAPTURE.get()
        return original() if capture is None else capture.start_result()

    return routed


def _routed_update_user_ns(shell: Any, hook: Any, original: Any) -> Any:
    def routed(result: Any) -> Any:
        capture = CAPTURE.get()
        wrong = hook.prompt_count
        if capture is None or wrong == capture.execution_count:
            return original(result)
        # A cell of the user's started while this one ran, so the shell's count
        # moved on: file the value under this run's count, as IPython would have.
        ns = shell.user_ns
        out = ns.get("_oh")
        out = out if isinstance(out, dict) else {}
        marker = object()
        before = (ns.get(f"_{wrong}", marker), out.get(wrong, marker))
        original(result)
        if ns.get(f"_{wrong}", marker) is result:
            _put_back(ns, f"_{wrong}", before[0], marker)
            ns[f"_{capture.execution_count}"] = result
        if out.get(wrong, marker) is result:
            _put_back(out, wrong, before[1], marker)
            out[capture.execution_count] = result
        return None

    return routed


def _routed_write_output_prompt(original: Any) -> Any:
    def routed() -> Any:
        return original() if CAPTURE.get() is None else None

    return routed


def _routed_write_format_data(original: Any) -> Any:
    def routed(format_dict: Any, md_dict: Any = None) -> Any:
        capture = CAPTURE.get()
        if capture is None:
            return original(format_dict, md_dict)
        return capture.result_data(format_dict, md_dict)

    return routed


def _routed_finish_displayhook(original: Any) -> Any:
    def routed() -> Any:
        capture = CAPTURE.get()
        return original() if capture is None else capture.finish_result()

    return routed


def _routed_showtraceback(original: Any) -> Any:
    def routed(etype: Any, evalue: Any, stb: Any) -> Any:
        capture = CAPTURE.get()
        if capture is None:
            return original(etype, evalue, stb)
        name = getattr(etype, "__name__", str(etype))
        return capture.error(name, str(evalue), list(stb or []))

    return routed


def _routed_no_input(original: Any) -> Any:
    def routed(*args: Any, **kwargs: Any) -> Any:
        if CAPTURE.get() is not None:
            raise RuntimeError(
                "input() and getpass() are not available in cells the agent runs: "
                "no one can type an answer there."
            )
        return original(*args, **kwargs)

    return routed


class _Router:
    """Installs the routing hooks while at least one run is capturing (refcounted)."""

    def __init__(self) -> None:
        self._users = 0
        self._undo: list[Any] = []

    @contextlib.contextmanager
    def installed(self, shell: Any) -> Iterator[None]:
        if self._users == 0:
            self._install(shell)
        self._users += 1
        try:
            yield
        finally:
            self._users -= 1
            if self._users == 0:
                undo, self._undo = self._undo, []
                for restore in reversed(undo):
                    with contextlib.suppress(Exception):
                        restore()

    def _install(self, shell: Any) -> None:
        for name in ("stdout", "stderr"):
            original = getattr(sys, name)
            routed = _RoutedStream(original, name)
            setattr(sys, name, routed)
            self._undo.append(_restore_module_attr(sys, name, routed, original))

        pub, hook = shell.display_pub, shell.displayhook
        for obj, name, make in (
            (pub, "publish", _routed_publish),
            (pub, "clear_output", _routed_clear_output),
            (hook, "start_displayhook", _routed_start_displayhook),
            (hook, "update_user_ns", functools.partial(_routed_update_user_ns, shell, hook)),
            (hook, "write_output_prompt", _routed_write_output_prompt),
            (hook, "write_format_data", _routed_write_format_data),
            (hook, "finish_displayhook", _routed_finish_displayhook),
            (shell, "_showtraceback", _routed_showtraceback),
        ):
            self._patch(obj, name, make)
        for module, name in ((builtins, "input"), (getpass, "getpass")):
            original = getattr(module, name)
            routed = _routed_no_input(original)
            setattr(module, name, routed)
            self._undo.append(_restore_module_attr(module, name, routed, original))

    def _patch(self, obj: Any, name: str, make: Any) -> None:
        """Shadow a method on an instance; undo exactly (only if still ours)."""
        had = name in vars(obj)
        previous = vars(obj).get(name)
        routed = make(getattr(obj, name))
        setattr(obj, name, routed)

        def restore() -> None:
            if vars(obj).get(name) is not routed:
                return  # someone replaced it since: leave theirs
            if had:
                setattr(obj, name, previous)
            else:
                delattr(obj, name)

        self._undo.append(restore)


def _put_back(mapping: dict[Any, Any], key: Any, value: Any, missing: object) -> None:
    if value is missing:
        mapping.pop(key, None)
    else:
        mapping[key] = value


def _restore_module_attr(module: Any, name: str, routed: Any, original: Any) -> Any:
    def restore() -> None:
        if getattr(module, name) is routed:
            setattr(module, name, original)

    return restore


ROUTER = _Router()


# --- output that bypasses the routing --------------------------------------------------


def detach_from_cell() -> None:
    """In this task's context, send stray kernel output nowhere rather than to a cell.

    A task inherits the parent header of the cell that started it, so output that
    bypasses the routing (a logging handler holding the kernel's stream) would land in
    that finished cell. An empty parent header sends it to no cell instead.
    """
    for stream in _original_streams():
        setter = getattr(stream, "set_thread_parent", None)
        if callable(setter):
            with contextlib.suppress(Exception):
                setter({})


def _original_streams() -> list[Any]:
    found = []
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        found.append(stream._original if isinstance(stream, _RoutedStream) else stream)
    return found
