"""A stand-in for the lab extension's side of the live bridge (test_live_bridge,
test_live_bridge_connection): a comm whose frontend answers each request from a thread of
its own, as replies arrive on the shell or a subshell thread, never the loop's."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from jupyter_agent.jupyter.bridge.live import LiveBridge

PING = {"path": "work/analysis.ipynb", "frontend": "jupyterlab", "version": "0", "instance": "tab1"}
CELL = {
    "id": "a",
    "cell_type": "code",
    "source": "print(1)",
    "execution_count": 1,
    "outputs": [{"output_type": "stream", "name": "stdout", "text": "1\n"}],
    "metadata": {},
}

# --- a stand-in comm, answered from another thread ----------------------------------------

Answer = Callable[[dict[str, Any]], Any]


class Failure(Exception):
    """A failed reply as the lab extension sends it: a code, its fields, a message for logs."""

    def __init__(self, code: str, message: str = "", **fields: str) -> None:
        super().__init__(message)
        self.body = {"code": code, "message": message or code, **fields}


class FakeComm:
    """The comm as the bridge sees it; ``frontend`` answers each request, on a thread of its
    own (as replies arrive on the shell or a subshell thread, never the loop's)."""

    def __init__(self, frontend: FakeFrontend, **kwargs: Any) -> None:
        self.frontend = frontend
        self.target_name = kwargs["target_name"]
        self.open_data = kwargs["data"]
        self.sent: list[dict[str, Any]] = []
        self.closed = False
        self._on_msg: Callable[[dict[str, Any]], None] | None = None
        self._on_close: Callable[[dict[str, Any]], None] | None = None

    def on_msg(self, callback: Callable[[dict[str, Any]], None]) -> None:
        self._on_msg = callback

    def on_close(self, callback: Callable[[dict[str, Any]], None]) -> None:
        self._on_close = callback

    def send(self, data: dict[str, Any]) -> None:
        self.sent.append(data)
        self.frontend.received(self, data)

    def close(self) -> None:
        self.closed = True

    # the frontend's side
    def reply(self, data: dict[str, Any]) -> None:
        assert self._on_msg is not None
        self._on_msg({"content": {"comm_id": "c", "data": data}})

    def close_from_frontend(self, data: dict[str, Any]) -> None:
        assert self._on_close is not None
        self._on_close({"content": {"comm_id": "c", "data": data}})


class FakeFrontend:
    """Answers requests with ``answers[op](request)`` from a worker thread: a dict is the
    reply's result, a :class:`Failure` an error reply, None no reply at all."""

    def __init__(self, answers: dict[str, Answer] | None = None) -> None:
        self.answers: dict[str, Answer] = {"ping": lambda _: PING, **(answers or {})}
        self.comms: list[FakeComm] = []
        self.requests: list[dict[str, Any]] = []
        self.threads: set[str] = set()

    def factory(self, **kwargs: Any) -> FakeComm:
        comm = FakeComm(self, **kwargs)
        self.comms.append(comm)
        return comm

    def received(self, comm: FakeComm, request: dict[str, Any]) -> None:
        self.requests.append(request)

        def answer() -> None:
            self.threads.add(threading.current_thread().name)
            handler = self.answers.get(request["op"])
            if handler is None:
                result: Any = Failure("unknown_operation", op=request["op"])
            else:
                result = handler(request)
            if result is None:
                return
            if isinstance(result, Failure):
                comm.reply({"id": request["id"], "ok": False, **result.body})
            else:
                comm.reply({"id": request["id"], "ok": True, "result": result})

        threading.Thread(target=answer, name="shell-or-subshell").start()

    def ops(self) -> list[str]:
        return [r["op"] for r in self.requests]


async def connected(frontend: FakeFrontend, **kwargs: Any) -> LiveBridge:
    bridge = LiveBridge("/srv/work/analysis.ipynb", comm_factory=frontend.factory, **kwargs)
    await bridge.connect()
    return bridge
