"""The thread that keeps session indexes up to date as sessions are written.

Invariants kept here:

- **Never on the event loop.** A session's write only queues the bytes it wrote
  (:meth:`SessionWriter.put` returns at once); one thread per process writes them, grouped
  by index, one transaction per index per round.
- **Never the session's problem.** The index writes its batches itself
  (:meth:`IndexTarget.write_queued`) and never raises: a failure is logged and caught up
  on by the next search, which compares each history's size with what was indexed.
- **Gone when idle.** The thread starts with the first batch and ends after
  :attr:`SessionWriter.IDLE` seconds without work (the next batch starts another).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Protocol

from .index_rows import Batch


class IndexTarget(Protocol):
    """An index the writer thread can hand batches to (a :class:`SessionIndex`)."""

    def write_queued(self, batches: Sequence[Batch]) -> None:
        """Write ``batches`` into the index if there is one; never raise."""


class SessionWriter:
    """One thread per process that writes queued batches, grouped by index, one
    transaction per index per round; started on the first batch, ended when idle."""

    IDLE = 5.0
    """Seconds without work after which the thread ends (a new batch starts another)."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._queue: list[tuple[IndexTarget, Batch]] = []
        self._busy = 0
        self._thread: threading.Thread | None = None

    def put(self, index: IndexTarget, batch: Batch) -> None:
        with self._lock:
            self._queue.append((index, batch))
            self._busy += 1
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="jupyter_agent session index", daemon=True
                )
                self._thread.start()
            self._lock.notify_all()

    def wait(self, timeout: float) -> bool:
        """Wait until everything queued so far is written; ``False`` if ``timeout`` passed."""
        with self._lock:
            return self._lock.wait_for(lambda: self._busy == 0, timeout)

    def _run(self) -> None:
        while True:
            with self._lock:
                if not self._lock.wait_for(lambda: self._queue, self.IDLE):
                    self._thread = None
                    return
                work, self._queue = self._queue, []
            try:
                grouped: dict[IndexTarget, list[Batch]] = {}
                for index, batch in work:
                    grouped.setdefault(index, []).append(batch)
                for index, batches in grouped.items():
                    index.write_queued(batches)
            finally:
                with self._lock:
                    self._busy -= len(work)
                    self._lock.notify_all()


writer = SessionWriter()
"""The process's writer thread."""
