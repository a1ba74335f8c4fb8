"""Crossing between event loops on different threads.

In a kernel, an agent's runs live on a loop of their own (its *home*, on the agent's
thread: :mod:`jupyter_agent.jupyter.kernel.agent_thread`) while cells run on the kernel's
main loop. Two crossings, one per direction, and one rule that keeps them free of
deadlocks: only a thread that is not a home may *block* on a home (:func:`call_on`,
which returns within a loop turn: a home's loop runs no user code); a home only ever
*awaits* work elsewhere (:func:`await_on`), as that work may wait for a running cell.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import weakref
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

T = TypeVar("T")
P = ParamSpec("P")

_CONTEXTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, contextvars.Context] = (
    weakref.WeakKeyDictionary()
)

CALL_TIMEOUT = 30.0
"""Seconds a blocking call waits for a home's loop to take it: a loop that runs no user
code takes it within a turn, so this bounds a fault of ours, never a busy cell."""


def on_loop(loop: asyncio.AbstractEventLoop | None) -> bool:
    """Whether the calling thread runs ``loop`` (True too for no loop at all)."""
    if loop is None:
        return True
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


def adopt(loop: asyncio.AbstractEventLoop) -> None:
    """Make the calling thread's context ``loop``'s own (called on that loop's thread):
    work handed to ``loop`` from other threads runs in a copy of it rather than in a copy
    of the sender's (a cell's, whose parent header would send stray output into it)."""
    _CONTEXTS[loop] = contextvars.copy_context()


def _context(loop: asyncio.AbstractEventLoop) -> contextvars.Context | None:
    own = _CONTEXTS.get(loop)
    return own.copy() if own is not None else None


def schedule(loop: asyncio.AbstractEventLoop, fn: Callable[..., Any], *args: Any) -> None:
    """``fn(*args)`` soon on ``loop``'s thread (not waited for); dropped when the loop has
    closed (the kernel is shutting down)."""
    if loop.is_closed():
        return
    try:
        loop.call_soon_threadsafe(fn, *args, context=_context(loop))
    except RuntimeError:  # closed meanwhile
        pass


def call_on(loop: asyncio.AbstractEventLoop, fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` on ``loop``'s thread, its result or exception returned here; at once
    when this thread runs ``loop``. Blocks the caller for one turn of ``loop``."""
    if on_loop(loop):
        return fn(*args)
    if loop.is_closed():
        raise RuntimeError("the agent's thread has ended (the kernel is shutting down)")
    done: concurrent.futures.Future[T] = concurrent.futures.Future()

    def call() -> None:
        if not done.set_running_or_notify_cancel():
            return
        try:
            done.set_result(fn(*args))
        except BaseException as exc:  # the caller gets it, whatever it is
            done.set_exception(exc)

    loop.call_soon_threadsafe(call, context=_context(loop))
    try:
        return done.result(timeout=CALL_TIMEOUT)
    except concurrent.futures.TimeoutError:
        done.cancel()
        raise RuntimeError(f"the agent's thread did not answer within {CALL_TIMEOUT:g} s") from None


async def await_on(
    loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, T], *, grace: float = 0.0
) -> T:
    """Await ``coro``, run as a task on ``loop`` (another thread's, or this one's).

    Cancelling the caller cancels that task and waits up to ``grace`` seconds for it to
    unwind (a cell's code cleaning up) before the cancel goes on."""
    if on_loop(loop):
        return await coro
    here = asyncio.get_running_loop()
    ended = here.create_future()

    def end() -> None:
        if not ended.done():
            ended.set_result(None)

    async def tracked() -> T:
        try:
            return await coro
        finally:
            if not here.is_closed():
                here.call_soon_threadsafe(end)

    remote = asyncio.run_coroutine_threadsafe(tracked(), loop)
    try:
        return await asyncio.wrap_future(remote)
    except asyncio.CancelledError:
        remote.cancel()
        if grace > 0:
            await asyncio.wait({ended}, timeout=grace)
        raise


class Homed(Protocol):
    """An object whose work lives on a home loop (an :class:`Agent`, its panel)."""

    @property
    def home(self) -> asyncio.AbstractEventLoop | None: ...


H = TypeVar("H", bound=Homed)


def at_home(method: Callable[Concatenate[H, P], T]) -> Callable[Concatenate[H, P], T]:
    """Run ``method`` on its object's home loop, waiting for it there (:func:`call_on`),
    when called from another thread (a magic, on the kernel's main thread): what it
    changes, a run on the home may be reading at that moment."""

    @functools.wraps(method)
    def hop(owner: H, /, *args: P.args, **kwargs: P.kwargs) -> T:
        home = owner.home
        if home is not None and home.is_running() and not on_loop(home):
            return call_on(home, lambda: method(owner, *args, **kwargs))
        return method(owner, *args, **kwargs)

    return hop
