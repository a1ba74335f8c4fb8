"""A real ipykernel for tests, driven through jupyter_client: the suite's one kernel harness.

Every iopub message the kernel sends is kept, in order, in ``Kernel.seen``, so a test can
look back at what a cell printed even after later cells ran (an agent running in the
background prints under the cell that started it). The panel is driven the way the lab
extension drives it: custom comm messages to and from its anywidget.

A kernel never reaches a real model API: its environment is this process's (where the
conftest already points every SDK at an unreachable loopback port), and ``agent_kernel``
also drops any key and sets ``ANTHROPIC_BASE_URL`` to that port.
"""

from __future__ import annotations

import json
import os
import queue
import tempfile
import textwrap
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
from jupyter_client.manager import KernelManager

TIMEOUT = 60.0
"""Seconds a cell, a message or a condition is waited for, unless a test says otherwise."""
PANEL = "jupyter_agent.jupyter.panel.widget.AgentPanel"
OUTPUT_TYPES = ("stream", "display_data", "execute_result", "error", "update_display_data")

Message = dict[str, Any]


def _is_idle_after(msg_id: str) -> Callable[[Message], bool]:
    return lambda m: (
        m["parent_header"].get("msg_id") == msg_id
        and m["msg_type"] == "status"
        and m["content"]["execution_state"] == "idle"
    )


@dataclass
class Result:
    """What one cell run sent: its shell reply and its iopub messages."""

    msg_id: str
    reply: Message
    messages: list[Message]

    def _streams(self, name: str) -> str:
        return "".join(
            m["content"]["text"]
            for m in self.messages
            if m["msg_type"] == "stream" and m["content"]["name"] == name
        )

    @property
    def stdout(self) -> str:
        return self._streams("stdout")

    @property
    def stderr(self) -> str:
        return self._streams("stderr")

    @property
    def outputs(self) -> list[Message]:
        """The content of each output message (streams, displays, results, errors)."""
        return [m["content"] for m in self.messages if m["msg_type"] in OUTPUT_TYPES]

    @property
    def errors(self) -> list[Message]:
        return [m["content"] for m in self.messages if m["msg_type"] == "error"]

    @property
    def displays(self) -> list[Message]:
        return [m["content"] for m in self.messages if m["msg_type"] == "display_data"]

    @property
    def result(self) -> str | None:
        for m in self.messages:
            if m["msg_type"] == "execute_result":
                return str(m["content"]["data"].get("text/plain"))
        return None

    @property
    def page(self) -> str:
        pages = [p for p in self.reply["content"].get("payload", []) if p["source"] == "page"]
        return "".join(p["data"].get("text/plain", "") for p in pages)


@dataclass
class Kernel:
    """A running kernel, its blocking client, and every iopub message it sent (``seen``)."""

    folder: Path
    manager: KernelManager
    client: Any
    seen: list[Message] = field(default_factory=list)
    on_message: Callable[[Message], None] | None = None
    """Called with each iopub message as it is read (a played frontend answers its comm
    requests here, while a cell that waits for the answer runs)."""

    # --- messages -----------------------------------------------------------------------

    def _pump(self, timeout: float) -> Message | None:
        try:
            msg: Message = self.client.get_iopub_msg(timeout=timeout)
        except queue.Empty:
            return None
        self.seen.append(msg)
        if self.on_message is not None:
            self.on_message(msg)
        return msg

    def wait_for(
        self, predicate: Callable[[Message], bool], timeout: float = TIMEOUT, *, since: int = 0
    ) -> Message:
        """The first iopub message (from index ``since``) for which ``predicate`` holds."""
        for msg in self.seen[since:]:
            if predicate(msg):
                return msg
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            read = self._pump(min(0.5, max(0.01, deadline - time.monotonic())))
            if read is not None and predicate(read):
                return read
        raise AssertionError(f"no matching iopub message within {timeout} s")

    def outputs(self, msg_id: str) -> list[Message]:
        """Every output message seen so far under the request ``msg_id``."""
        return [
            m
            for m in self.seen
            if m["parent_header"].get("msg_id") == msg_id and m["msg_type"] in OUTPUT_TYPES
        ]

    def all_output_text(self) -> str:
        """Every output seen so far, as one JSON text (to look for a value anywhere)."""
        return json.dumps([m["content"] for m in self.seen if m["msg_type"] in OUTPUT_TYPES])

    # --- cells ----------------------------------------------------------------------------

    def _reply(self, msg_id: str, timeout: float) -> Message:
        reply: Message = self.client.get_shell_msg(timeout=timeout)
        while reply["parent_header"].get("msg_id") != msg_id:  # a late kernel_info reply
            reply = self.client.get_shell_msg(timeout=timeout)
        return reply

    def run(self, code: str, timeout: float = TIMEOUT) -> Result:
        """Execute a cell and wait until the kernel is idle after it. An indented block
        (a triple-quoted string that starts on a new line) is dedented first; any other
        cell is sent as written, whitespace and all."""
        start = len(self.seen)
        msg_id = self.client.execute(textwrap.dedent(code) if code.startswith("\n") else code)
        # iopub first: a cell may wait for a comm answer that only reading iopub sends
        self.wait_for(_is_idle_after(msg_id), timeout, since=start)
        reply = self._reply(msg_id, timeout)
        mine = [m for m in self.seen if m["parent_header"].get("msg_id") == msg_id]
        return Result(msg_id, reply, mine)

    def ok(self, code: str, timeout: float = TIMEOUT) -> Result:
        """Run a cell that must succeed: no error, nothing like an error on stderr."""
        result = self.run(code, timeout)
        assert not result.errors, result.errors[0]["traceback"]
        assert result.reply["content"]["status"] == "ok", result.reply["content"]
        assert "Error" not in result.stderr, result.stderr
        return result

    def value(self, expression: str, timeout: float = TIMEOUT) -> Any:
        """The value of a JSON-able expression, evaluated in the kernel."""
        text = self.ok(f"import json as _json\nprint(_json.dumps({expression}))", timeout).stdout
        return json.loads(text.strip().splitlines()[-1])

    def until(self, condition: str, timeout: float = TIMEOUT) -> None:
        """Poll from later cells (each awaiting a little) until ``condition`` holds."""
        deadline = time.monotonic() + timeout
        while not self.value(f"bool({condition})"):
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout} s waiting for {condition}")
            self.ok("import asyncio as _asyncio\nawait _asyncio.sleep(0.05)")

    def answering(self, code: str, answers: list[str], timeout: float = TIMEOUT) -> list[Message]:
        """Run ``code``, typing each of ``answers`` at its input requests (the stdin channel,
        where a frontend hides a password); returns the requests."""
        start = len(self.seen)
        msg_id = self.client.execute(code, allow_stdin=True)
        requests = []
        for answer in answers:
            request = self.client.get_stdin_msg(timeout=timeout)
            assert request["msg_type"] == "input_request"
            requests.append(request["content"])
            self.client.input(answer)
        self.wait_for(_is_idle_after(msg_id), timeout, since=start)
        reply = self._reply(msg_id, timeout)
        assert reply["content"]["status"] == "ok", reply["content"]
        return requests

    # --- the panel, as the lab extension sees it ------------------------------------------

    def panel_comm(self) -> str:
        opened = self.wait_for(
            lambda m: (
                m["msg_type"] == "comm_open"
                and m["content"]["data"].get("state", {}).get("_anywidget_id") == PANEL
            )
        )
        return str(opened["content"]["comm_id"])

    def subshell(self, timeout: float = TIMEOUT) -> str:
        """A new subshell of the kernel (JEP 91), as the lab extension opens for the agent's
        control messages: its id, for ``to_panel(..., subshell=…)``."""
        request = self.client.session.msg("create_subshell_request", {})
        self.client.control_channel.send(request)
        deadline = time.monotonic() + timeout
        while True:
            reply: Message = self.client.get_control_msg(timeout=deadline - time.monotonic())
            if reply["parent_header"].get("msg_id") == request["header"]["msg_id"]:
                assert reply["content"]["status"] == "ok", reply["content"]
                return str(reply["content"]["subshell_id"])

    def to_panel(self, comm_id: str, content: Message, *, subshell: str | None = None) -> None:
        """Send the panel a view's message; on ``subshell``, it is read while a cell runs."""
        msg = self.client.session.msg(
            "comm_msg", {"comm_id": comm_id, "data": {"method": "custom", "content": content}}
        )
        if subshell is not None:
            msg["header"]["subshell_id"] = subshell
        self.client.shell_channel.send(msg)

    def execute(self, code: str) -> str:
        """Start a cell without waiting for it; its request's id (``idle_after`` waits)."""
        return str(self.client.execute(code))

    def idle_after(self, msg_id: str, timeout: float = TIMEOUT) -> Message:
        """The idle status that ends request ``msg_id`` (the cell has ended)."""
        return self.wait_for(_is_idle_after(msg_id), timeout)

    def from_panel(
        self,
        comm_id: str,
        predicate: Callable[[Message], bool],
        timeout: float = TIMEOUT,
        since: int = 0,
    ) -> Message:
        """The next custom message from the panel matching ``predicate``."""

        def match(m: Message) -> bool:
            if m["msg_type"] != "comm_msg" or m["content"]["comm_id"] != comm_id:
                return False
            data = m["content"]["data"]
            return bool(data.get("method") == "custom" and predicate(data["content"]))

        content: Message = self.wait_for(match, timeout, since=since)["content"]["data"]["content"]
        return content

    def state_of(self, comm_id: str, name: str, value: Any, timeout: float = TIMEOUT) -> None:
        """Wait until the panel's trait ``name`` was sent with ``value``."""
        self.wait_for(
            lambda m: (
                m["msg_type"] == "comm_msg"
                and m["content"]["comm_id"] == comm_id
                and m["content"]["data"].get("method") == "update"
                and m["content"]["data"].get("state", {}).get(name) == value
            ),
            timeout,
        )


# --- starting and stopping ----------------------------------------------------------------


def start_kernel(folder: Path, env: dict[str, str] | None = None) -> Kernel:
    """A python3 kernel started in ``folder``, with ``env`` as its whole environment
    (this process's when None), ready for cells."""
    # Unix sockets beside the connection file: a TCP port picked here could be taken by
    # another process (another test worker's kernel) before the kernel binds it.
    connection = Path(tempfile.gettempdir()) / f"kernel-{uuid.uuid4()}.json"
    manager = KernelManager(kernel_name="python3", transport="ipc", connection_file=str(connection))
    manager.start_kernel(cwd=str(folder), env=dict(os.environ) if env is None else env)
    client = manager.blocking_client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=90)  # a start on a loaded 2-core runner
    except BaseException:
        stop_kernel(Kernel(folder, manager, client))
        raise
    return Kernel(folder, manager, client)


def stop_kernel(kernel: Kernel) -> None:
    kernel.client.stop_channels()
    kernel.manager.shutdown_kernel(now=True)


@contextmanager
def kernel(folder: Path, env: dict[str, str] | None = None) -> Iterator[Kernel]:
    """``start_kernel`` for the length of a ``with`` block."""
    k = start_kernel(folder, env)
    try:
        yield k
    finally:
        stop_kernel(k)


def agent_env(notebook: Path, **extra: str) -> dict[str, str]:
    """This process's environment without any key or model, the model API unreachable, and
    ``notebook`` as the kernel's own (``JPY_SESSION_NAME``, as Jupyter sets it)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "JUPYTER_AGENT_MODEL")
    }
    env["ANTHROPIC_BASE_URL"] = "http://127.0.0.1:9"  # never a real API
    env["JPY_SESSION_NAME"] = str(notebook)
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
    return {**env, **extra}


def agent_kernel(folder: Path, **env: str) -> Kernel:
    """A kernel in ``folder`` whose notebook is a new, empty ``analysis.ipynb`` there, with
    the extension loaded (``%load_ext jupyter_agent``); ``env`` adds to ``agent_env``."""
    notebook = folder / "analysis.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), notebook)
    k = start_kernel(folder, agent_env(notebook, **env))
    try:
        k.ok("%load_ext jupyter_agent")
    except BaseException:
        stop_kernel(k)
        raise
    return k
