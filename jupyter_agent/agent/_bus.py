"""Fan-out of an agent's events to any number of subscribers.

Publishing never waits: each async subscriber has its own queue, and callbacks run
inline and must be quick (a widget batching deltas, a renderer printing). A slow or
failing subscriber therefore cannot stall the agent.

Events are published on the agent's loop; a stream may be read on another thread's loop
(a cell awaiting ``handle.events()`` while the agent lives on its own thread): its queue
is filled on the reader's loop.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable

from ..events import Event
from ._home import on_loop

log = logging.getLogger(__name__)

Callback = Callable[[Event], None]


class _Queue:
    def __init__(self) -> None:
        self.items: deque[Event] = deque()
        self.ready = asyncio.Event()
        self.loop = asyncio.get_running_loop()
        """The reader's loop."""

    def put(self, event: Event) -> None:
        if on_loop(self.loop):
            self._put(event)
            return
        try:
            self.loop.call_soon_threadsafe(self._put, event)
        except RuntimeError:  # the reader's loop has closed: no one reads any more
            pass

    def _put(self, event: Event) -> None:
        self.items.append(event)
        self.ready.set()


class EventBus:
    def __init__(self) -> None:
        self._seq = 0
        self._callbacks: list[Callback] = []
        self._queues: list[_Queue] = []
        self.failures: deque[str] = deque(maxlen=5)
        """The newest subscriber failures (kind of event, exception): in a kernel the log
        goes to no cell from the agent's thread, so this is where one is found."""

    @property
    def seq(self) -> int:
        """Sequence number of the last published event."""
        return self._seq

    def publish(self, event: Event) -> Event:
        self._seq += 1
        event.seq = self._seq
        for callback in tuple(self._callbacks):
            try:
                callback(event)
            except Exception as exc:
                log.exception("an event subscriber failed on %s; it stays subscribed", event.kind)
                self.failures.append(f"{event.kind}: {type(exc).__name__}: {exc}"[:500])
        for queue in tuple(self._queues):  # a reader on another thread may leave meanwhile
            queue.put(event)
        return event

    def subscribe(self, callback: Callback) -> Callable[[], None]:
        """Call ``callback`` with every event from now on; returns an unsubscribe function."""
        self._callbacks.append(callback)

        def unsubscribe() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return unsubscribe

    async def stream(
        self,
        replay: Iterable[Event] = (),
        until: Callable[[Event], bool] | None = None,
    ) -> AsyncIterator[Event]:
        """Yield ``replay`` then live events, stopping after one for which ``until`` is true."""
        queue = _Queue()
        self._queues.append(queue)
        try:
            last = 0
            for event in list(replay):
                last = event.seq
                yield event
                if until is not None and until(event):
                    return
            while True:
                while not queue.items:
                    queue.ready.clear()
                    await queue.ready.wait()
                event = queue.items.popleft()
                if event.seq <= last:
                    continue  # already replayed
                yield event
                if until is not None and until(event):
                    return
        finally:
            self._queues.remove(queue)
