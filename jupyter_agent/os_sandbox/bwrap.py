"""bubblewrap's own command line: the flags every launch starts with, the probe that checks
they work on this machine, and the pipe that hands bwrap the seccomp program.

Invariants: launches and the probe use the same flags (:func:`bwrap_flags`), so a sandbox
that passed its probe is the one commands get; the command keeps no capability and, where
bwrap supports it (0.8+), cannot make user namespaces of its own.
"""

from __future__ import annotations

import os

from .probe import probe


def bwrap_flags(network: bool, disable_userns: bool) -> list[str]:
    flags = [
        # Run by root, bwrap leaves the command every capability unless told otherwise, and
        # `mount -o remount,rw /` would undo the sandbox. In a user namespace of its own, root
        # is root there only; no further namespaces (new mounts of its own) from inside.
        "--unshare-user",
        *(["--disable-userns"] if disable_userns else []),
        "--cap-drop",
        "ALL",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        *([] if network else ["--unshare-net"]),
        "--die-with-parent",
        "--new-session",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
    ]
    return flags


def probe_bwrap(bwrap: str, network: bool, seccomp: bytes | None) -> tuple[bool, str, bool]:
    """(works, why not, supports --disable-userns), with the flags launches will use."""
    results = []
    for disable_userns in (True, False):  # --disable-userns needs bwrap 0.8 (Ubuntu 22.04: 0.6)
        argv = [bwrap, *bwrap_flags(network, disable_userns)]
        fds: tuple[int, ...] = ()
        if seccomp is not None:
            fds = (readable_fd(seccomp),)
            argv += ["--seccomp", str(fds[0])]
        try:
            key = (bwrap, network, seccomp is not None, disable_userns)
            ok, reason = probe(key, [*argv, "--", "true"], fds)
        finally:
            for fd in fds:
                os.close(fd)
        if ok:
            return True, "", disable_userns
        results.append(reason)
    return False, results[-1], False


def readable_fd(data: bytes) -> int:
    """A pipe's read end holding ``data`` then EOF (how bwrap reads ``--seccomp FD``)."""
    read, write = os.pipe()
    try:
        os.write(write, data)  # a few hundred bytes: far below the pipe's buffer
    except BaseException:
        os.close(read)
        raise
    finally:
        os.close(write)
    return read
