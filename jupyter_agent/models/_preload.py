"""Importing a model's SDK ahead of its first call, in a thread.

``import anthropic`` builds some 1,500 pydantic models: a second or more (2–4 s on a slow
disk). Done on the first call, it ran on the agent's loop: the first answer (a rejected
key's 401 among them) waited for it, and the panel's commands with it. A model starts the
import when it is made (the panel shows it long before the first message is sent); its
first call awaits the import off the loop (:func:`loaded`).

Invariant: a package is imported once, by one thread; a failed import (a package not
installed) raises where the call awaits it, as ``import`` there would.
"""

from __future__ import annotations

import asyncio
import importlib
import sys
import threading
from concurrent.futures import Future
from types import ModuleType

_imports: dict[str, Future[ModuleType]] = {}
_lock = threading.Lock()


def preload(package: str) -> Future[ModuleType]:
    """Start importing ``package`` in a daemon thread (once); the import's future."""
    with _lock:
        future = _imports.get(package)
        if future is not None:
            return future
        future = _imports[package] = Future()
        module = sys.modules.get(package)
        if module is not None:
            future.set_result(module)
            return future
    threading.Thread(
        target=_import, args=(package, future), name=f"import {package}", daemon=True
    ).start()
    return future


def _import(package: str, future: Future[ModuleType]) -> None:
    try:
        future.set_result(importlib.import_module(package))
    except BaseException as exc:  # said where it is awaited
        future.set_exception(exc)


async def loaded(package: str) -> ModuleType:
    """``package``, imported: awaited off the loop (started now if no model did)."""
    future = preload(package)
    if future.done():
        return future.result()
    # Shielded: a Stop cancels this wait, and wrap_future would pass that on to the shared
    # import, which every later call would then find cancelled.
    return await asyncio.shield(asyncio.wrap_future(future))
