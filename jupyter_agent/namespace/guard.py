"""A guard for code that must only read, enforced by the interpreter itself.

The namespace tools read the user's live objects. However carefully they read, an object
may still run code of its own (a property, ``__repr__``, a metaclass). While
:func:`read_only` is on, a ``sys.addaudithook`` hook refuses what such code could do to
the world: write, rename or delete files, start processes, send signals, open network
connections or look up hosts, change the environment, load native code, and run code
that is not part of an installed library (``exec``/``eval`` of strings, importing modules
of the workspace). The refused operation raises :class:`PermissionError` inside that
code, and the guard records it, so the tool can say what it stopped.

The guard holds in the context that turned it on, and in the tasks and callbacks created
there, which copy that context (even after the block). Starting a thread is refused: a
new thread would run unguarded, and Python 3.11 raises no audit event for it, so the
guard wraps ``threading``'s and ``_thread``'s starters (whichever this Python has).

The hook is installed once per process and cannot be removed (Python's rule); it costs
one context-variable read per audited event while no guard is on.

Limits: this is a seat belt against code that acts as a side effect of being read (a
lazy property that connects, a ``__repr__`` that caches to disk), not a sandbox against
code written to defeat it (audit hooks are not one, PEP 578): such code runs in the same
interpreter and can leave the context (``contextvars.Context().run``) or rebind this
module's names. Work handed to a thread that already runs (a pool's worker) and work
scheduled outside the context (``atexit``, ``weakref.finalize``, signal handlers) run
unguarded. Code in C extensions that raises no audit events (a library's own C
``fopen``) is not seen. Reading files is allowed; an object can still spend CPU time.
"""

from __future__ import annotations

import _thread
import contextlib
import contextvars
import os
import sys
import sysconfig
import threading
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

_blocked: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar(
    "jupyter_agent_read_only", default=None
)
_install_lock = threading.Lock()
_installed = False

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_CHANGES = frozenset(
    {"os.remove", "os.unlink", "os.rename", "os.replace", "os.rmdir", "os.mkdir", "os.chmod",
     "os.chown", "os.chflags", "os.lchflags", "os.lchmod", "os.lchown", "os.truncate",
     "os.link", "os.symlink", "os.utime", "os.mknod", "os.mkfifo", "os.setxattr",
     "os.removexattr", "shutil.rmtree", "shutil.move", "shutil.copyfile", "shutil.copytree",
     "shutil.copymode", "shutil.copystat", "shutil.chown", "shutil.make_archive",
     "shutil.unpack_archive", "tempfile.mkstemp", "tempfile.mkdtemp", "os.putenv",
     "os.unsetenv", "os.chdir", "os.fchdir"}
)  # fmt: skip
_RUNS = frozenset(
    {"subprocess.Popen", "os.system", "os.exec", "os.spawn", "os.posix_spawn", "os.fork",
     "os.forkpty", "os.startfile", "os.kill", "os.killpg", "pty.spawn", "webbrowser.open",
     "ctypes.dlopen", "ctypes.dlsym", "ctypes.call_function", "sys.addaudithook"}
)  # fmt: skip
_NETWORK = frozenset(
    {"socket.connect", "socket.bind", "socket.sendto", "socket.sendmsg", "socket.getaddrinfo",
     "socket.gethostbyname", "socket.gethostbyaddr", "urllib.Request", "http.client.connect",
     "ftplib.connect", "smtplib.connect", "imaplib.open", "poplib.connect", "nntplib.connect",
     "telnetlib.Telnet.open"}
)  # fmt: skip


def _library_paths() -> tuple[str, ...]:
    paths = {sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    paths.update((sys.prefix, sys.base_prefix, sys.exec_prefix))
    return tuple(sorted(os.path.realpath(p) + os.sep for p in paths if p))


_LIBRARIES = _library_paths()


def _installed_code(filename: str) -> bool:
    """Whether a code object's file belongs to Python or an installed library."""
    if filename.startswith("<frozen "):
        return True
    return os.path.realpath(filename).startswith(_LIBRARIES) if filename[:1] == "/" else False


def _refusal(event: str, args: tuple[Any, ...]) -> str | None:
    """What the event would do, when a reader must not do it."""
    if event == "open":
        path, mode, flags = (*args, None, None, None)[:3]
        writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            isinstance(flags, int) and flags & _WRITE_FLAGS
        )
        return f"writing {path!r}" if writes else None
    if event in _CHANGES:
        return f"{event}({_first(args)})"
    if event in _RUNS or event.startswith(("os.exec", "os.spawn")):
        return f"{event}({_first(args)})"
    if event in _NETWORK:
        return f"{event}({_first(args)})"
    if event == "exec":
        code = args[0] if args else None
        filename = getattr(code, "co_filename", "")
        return None if _installed_code(filename) else f"running code from {filename!r}"
    return None  # compiling alone runs nothing: the code is refused when it would run


def _first(args: tuple[Any, ...]) -> str:
    if not args:
        return ""
    text = (
        repr(args[0]) if isinstance(args[0], (str, bytes, int, tuple)) else type(args[0]).__name__
    )
    return text[:80]


def _refuse(blocked: list[str], why: str) -> NoReturn:
    blocked.append(why)
    raise PermissionError(f"refused while the agent only reads: {why}")


def _hook(event: str, args: tuple[Any, ...]) -> None:
    blocked = _blocked.get()
    if blocked is None:
        return
    why = _refusal(event, args)
    if why is not None:
        _refuse(blocked, why)


_THREAD_STARTERS = (
    (threading, "_start_new_thread"),  # what Thread.start calls up to Python 3.12
    (threading, "_start_joinable_thread"),  # and from 3.13
    (_thread, "start_new_thread"),
    (_thread, "start_joinable_thread"),
)


def _refusing_threads(start: Callable[..., int]) -> Callable[..., int]:
    """``start`` (a thread starter), refused where the guard is on."""

    def start_new_thread(function: Callable[..., object], *args: Any) -> int:
        blocked = _blocked.get()
        if blocked is not None:
            _refuse(blocked, f"starting a thread ({getattr(function, '__qualname__', '?')})")
        return start(function, *args)

    return start_new_thread


def _install() -> None:
    global _installed
    with _install_lock:
        if not _installed:
            sys.addaudithook(_hook)
            for module, name in _THREAD_STARTERS:
                start = getattr(module, name, None)
                if start is not None:  # which exist depends on the Python version
                    setattr(module, name, _refusing_threads(start))
            _installed = True


@contextlib.contextmanager
def read_only() -> Iterator[list[str]]:
    """Within this block (this thread or task), refuse writes, processes, network and
    foreign code; yields the list of what was refused."""
    _install()
    blocked: list[str] = []
    token = _blocked.set(blocked)
    try:
        yield blocked
    finally:
        _blocked.reset(token)


def blocked_note(blocked: list[str]) -> str:
    """A line for a tool's result saying what the guard stopped (empty when nothing)."""
    if not blocked:
        return ""
    shown = "; ".join(dict.fromkeys(blocked))
    return (
        f"\n[While reading, an object tried to run code that acts: {shown}. It was refused: "
        "inspecting never lets a variable write files, run commands or connect.]"
    )
