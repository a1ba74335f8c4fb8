"""Models served on this machine: what Ollama has pulled, found by asking it.

The model picker lists them beside the configured ones. Asking is a network call, so it
happens in a thread, bounded by a short timeout and a size limit, at most once a minute;
whoever asked is told when the list changed.
"""

from __future__ import annotations

import json
import os
import threading
import time
import urllib.request
from collections.abc import Callable

OLLAMA_URL = "http://localhost:11434"
_MOST = 1 << 20  # bytes of an answer read at most
_MODELS = 50  # models listed at most


def ollama_url() -> str:
    """Where Ollama listens, read as Ollama reads ``$OLLAMA_HOST``: ``host[:port]`` (port
    11434 by default) or a URL (its scheme's port by default); else its default."""
    given = os.environ.get("OLLAMA_HOST", "").strip().rstrip("/")
    if not given:
        return OLLAMA_URL
    scheme, found, rest = given.partition("://")
    if not found:
        scheme, rest = "http", given
        if ":" not in rest.rpartition("]")[2]:
            rest += ":11434"
    if rest == "0.0.0.0" or rest.startswith("0.0.0.0:"):  # where it listens, not where to ask
        rest = "localhost" + rest[7:]
    return f"{scheme}://{rest}"


class LocalModels:
    """The models Ollama serves, as model strings (``ollama:qwen3:8b``), asked in a thread."""

    def __init__(self, every: float = 60.0, timeout: float = 0.5) -> None:
        self.every = every
        self.timeout = timeout
        self._known: list[str] = []
        self._asked_at = float("-inf")
        self._asking = False
        self._lock = threading.Lock()

    def known(self) -> list[str]:
        """What the last answer listed (empty before one, or when Ollama is not running)."""
        with self._lock:
            return list(self._known)

    def refresh(self, changed: Callable[[], None]) -> None:
        """Ask again if the last answer is old; ``changed()`` is called, from the thread,
        when the list differs from the one before."""
        with self._lock:
            if self._asking or time.monotonic() - self._asked_at < self.every:
                return
            self._asking = True
        threading.Thread(target=self._ask, args=(changed,), daemon=True, name="ollama").start()

    def _ask(self, changed: Callable[[], None]) -> None:
        try:
            found = self._listed()
        finally:
            with self._lock:
                self._asking = False
                self._asked_at = time.monotonic()
        with self._lock:
            if found == self._known:
                return
            self._known = found
        changed()

    def _listed(self) -> list[str]:
        try:
            with urllib.request.urlopen(f"{ollama_url()}/api/tags", timeout=self.timeout) as r:
                data = json.loads(r.read(_MOST))
        except (OSError, ValueError):  # not running, not Ollama, or not answering in time
            return []
        models = data.get("models") if isinstance(data, dict) else None
        if not isinstance(models, list):
            return []
        names = [m.get("name") for m in models[:_MODELS] if isinstance(m, dict)]
        return [
            f"ollama:{n}"
            for n in names
            if isinstance(n, str) and n.isprintable() and n and not any(c.isspace() for c in n)
        ]


LOCAL_MODELS = LocalModels()
"""The one list of this process (every panel shares it)."""
