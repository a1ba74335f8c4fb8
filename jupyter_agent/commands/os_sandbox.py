"""The OS sandbox every shell command of the agent runs in.

:class:`OsSandbox` turns a command's argv into a :class:`Launch`: the argv to execute (the
command wrapped in the sandbox) and the file descriptors the child must inherit. The caller
starts it with ``start_new_session=True`` and ``pass_fds=launch.pass_fds``, stops it by
killing the process group (SIGTERM, then SIGKILL), and calls :meth:`Launch.close` once the
process has ended. Spawn it from a thread that outlives it (the event loop's):
``--die-with-parent`` fires when the *thread* that forked bwrap ends. A command killed by
signal N makes bwrap exit with status 128+N (as a shell reports it), not -N.

Linux (bubblewrap) keeps these invariants:

- **Writes.** The filesystem is read-only (``--ro-bind / /``) except the workspace, the
  ``writable`` roots and a private ``/tmp`` and ``/var/tmp``: in a 0700 folder of this
  sandbox under :func:`tempfile.gettempdir`, kept across its commands, removed by
  :meth:`OsSandbox.close` or at exit (or, after a crash, by the next sandbox that makes one).
  ``TMPDIR`` is ``/tmp`` inside.
- **Protected paths** stay read-only and in place: an existing one is a read-only mount
  (a mount point cannot be renamed or removed: EBUSY); each folder between the writable root
  and it is mounted on itself, so no folder on the way can be moved aside and rebuilt; a
  missing one is blocked by ``/dev/null`` mounted read-only on its first missing component.
  mount(2) follows symbolic links, so a mount cannot pin a link itself: a link on the way is
  pinned by making the folder that holds it read-only (its other entries are mounted back
  writable; that folder then takes no new entries), and what the link points to is protected
  in turn.
- **Mount-point files.** bwrap creates an empty file on the host where it mounts
  ``/dev/null`` on a missing path. :meth:`Launch.close` removes it unless another live launch,
  in any process, still uses it (marker files under a lock; a crashed process's markers are
  swept at the next launch). Removing it early would be a hole: unlinking a mount point on
  the host detaches that mount in every sandbox that has it.
- **Hidden paths** (the Jupyter runtime folder with the kernels' connection files and the
  server's token, the user's runtime folder with the session bus and ssh-agent, the system
  bus, container-engine sockets, and ``hidden``) are covered by an empty tmpfs or ``/dev/null``.
- **Processes.** A PID namespace: the command sees only its own processes (not the kernel's
  ``/proc/<pid>/environ``), and when the command exits or bwrap is killed, the kernel kills
  every process left in it (``setsid``, double forks, ``nohup``). No capabilities, no new user
  namespaces (bwrap 0.8+), a new session (no TIOCSTI into a terminal).
- **Unix sockets** cannot be created (seccomp, see ``_seccomp.py``) unless
  ``unix_sockets=True``. **Network** is the host's, or none with ``network=False``.

macOS (``sandbox-exec``): writes, protected and hidden paths, network and Unix sockets are
confined the same way by a Seatbelt profile, but there is **no process-tree containment** (a
background process outlives the command unless the group kill reaches it), ``/tmp`` is not
private (it is read-only; ``TMPDIR`` points at the private folder), and Mach services
(``open``, ``osascript``) stay reachable. Elsewhere there is no OS sandbox, and
:meth:`OsSandbox.status` says so.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import logging
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .._system import system_program
from ._seccomp import unix_socket_filter

log = logging.getLogger(__name__)

_PROBE_TIMEOUT = 5.0

_NO_SANDBOX = "the permission rules alone apply"


@dataclass(frozen=True)
class SandboxSettings:
    """What the user chose for the sandbox (the settings file's ``[sandbox]`` table)."""

    enabled: bool = True
    """False: commands run unconfined, knowingly."""
    network: bool = True
    """False: commands get no network at all (not even the host's loopback)."""
    writable: tuple[str, ...] = ()
    """Extra folders (absolute or ``~/…``) commands may write, e.g. a venv outside the workspace."""
    unix_sockets: bool = False
    """True: commands may create Unix sockets (by default a way out: D-Bus, docker.sock, X11)."""


@dataclass(frozen=True)
class SandboxStatus:
    """What the sandbox does on this machine, in words the panel can show."""

    active: bool
    """Commands run confined."""
    mechanism: str
    """``"bubblewrap"``, ``"sandbox-exec"``, ``"none"`` (unavailable) or ``"off"`` (settings)."""
    summary: str
    """One short line for the panel header."""
    detail: str
    """Plain sentences for a once-per-session notice: what is confined, or why nothing is."""


@dataclass
class Launch:
    """One command, ready to execute; :meth:`close` it after the process ended."""

    argv: list[str]
    """What to execute: the wrapped command, or the command itself when nothing confines it."""
    pass_fds: tuple[int, ...] = ()
    """Descriptors the child must inherit (``create_subprocess_exec(pass_fds=…)``)."""
    _cleanups: list[Callable[[], None]] = field(default_factory=list, init=False, repr=False)

    def close(self) -> None:
        """Close the descriptors and remove the mount points this launch created.

        Idempotent; never raises (a failed cleanup is logged).
        """
        cleanups, self._cleanups = self._cleanups, []
        for cleanup in reversed(cleanups):
            try:
                cleanup()
            except Exception:
                log.warning("sandbox launch cleanup failed", exc_info=True)


class OsSandbox:
    """Wraps commands so the OS confines them to the workspace (see the module docstring)."""

    def __init__(
        self,
        workspace: Path,
        settings: SandboxSettings = SandboxSettings(),
        *,
        protected: Callable[[], Iterable[Path]] = lambda: (),
        hidden: Iterable[Path] = (),
        bwrap: str | os.PathLike[str] | None = None,
    ) -> None:
        """``protected`` is called at every launch and returns paths inside the writable roots
        that must stay read-only (they need not exist). ``hidden`` are paths commands must not
        see, besides the defaults. ``bwrap`` overrides the bubblewrap binary (default: PATH).
        """
        self._workspace = Path(os.path.abspath(workspace))
        self._settings = settings
        self._protected = protected
        self._hidden = (*_default_hidden(), *(Path(p) for p in hidden))
        self._bwrap = os.fspath(bwrap) if bwrap is not None else None
        self._status: SandboxStatus | None = None
        self._disable_userns = False
        self._lock = threading.Lock()
        self._tmp: Path | None = None
        self._tmp_finalizer: weakref.finalize | None = None

    # --- status ----------------------------------------------------------------------

    def status(self) -> SandboxStatus:
        """What confines commands here. Detection runs once per process and configuration."""
        if self._status is None:
            self._status = self._detect()
        return self._status

    def _detect(self) -> SandboxStatus:
        if not self._settings.enabled:
            return SandboxStatus(
                active=False,
                mechanism="off",
                summary="commands not sandboxed (turned off in settings)",
                detail="The OS sandbox is turned off in the settings: commands run with all "
                f"of your rights; {_NO_SANDBOX}.",
            )
        if sys.platform.startswith("linux"):
            return self._detect_bwrap()
        if sys.platform == "darwin":
            return self._detect_seatbelt()
        return _unavailable(
            f"There is no OS sandbox for commands on {sys.platform}; {_NO_SANDBOX}."
        )

    def _detect_bwrap(self) -> SandboxStatus:
        bwrap = self._bwrap or system_program("bwrap")  # never a file of the workspace
        if not bwrap or not os.access(bwrap, os.X_OK):
            where = f" (not found at {self._bwrap})" if self._bwrap else ""
            return _unavailable(
                f"bubblewrap is not installed{where} (Debian/Ubuntu: sudo apt install "
                f"bubblewrap; Fedora: sudo dnf install bubblewrap); {_NO_SANDBOX}."
            )
        self._bwrap = bwrap
        seccomp = None if self._settings.unix_sockets else unix_socket_filter()
        ok, reason, disable_userns = _probe_bwrap(bwrap, self._settings.network, seccomp)
        if not ok:
            return _unavailable(
                f"bubblewrap cannot create a sandbox here: {reason}. It needs unprivileged "
                "user namespaces: on Debian, sudo sysctl kernel.unprivileged_userns_clone=1; on "
                "Ubuntu 23.10 and later, allow them for bwrap in AppArmor (or sudo sysctl "
                "kernel.apparmor_restrict_unprivileged_userns=0); in a container, run it with "
                f"user namespaces allowed. Until then {_NO_SANDBOX}."
            )
        self._disable_userns = disable_userns
        return SandboxStatus(
            active=True,
            mechanism="bubblewrap",
            summary=self._summary(),
            detail=self._confined_detail(unix_filter=seccomp is not None)
            + " Anything a command starts in the background ends with it.",
        )

    def _detect_seatbelt(self) -> SandboxStatus:
        tool = "/usr/bin/sandbox-exec"
        if not os.access(tool, os.X_OK):
            return _unavailable(f"sandbox-exec is missing from this Mac; {_NO_SANDBOX}.")
        profile = self._profile([])
        ok, reason = _probe_cached((tool, profile), [tool, "-p", profile, "/usr/bin/true"], ())
        if not ok:
            return _unavailable(
                f"sandbox-exec refused the sandbox profile: {reason}; {_NO_SANDBOX}."
            )
        return SandboxStatus(
            active=True,
            mechanism="sandbox-exec",
            summary=self._summary(),
            detail=self._confined_detail(unix_filter=not self._settings.unix_sockets)
            + " On macOS a background process can outlive its command.",
        )

    def _summary(self) -> str:
        network = "" if self._settings.network else ", no network"
        return f"commands sandboxed to this folder{network}"

    def _confined_detail(self, *, unix_filter: bool) -> str:
        places = ", ".join(str(p) for p in self._roots()[1:])
        extra = f", {places}" if places else ""
        sockets = (
            "they cannot open Unix sockets"
            if unix_filter
            else "Unix sockets are allowed"
            if self._settings.unix_sockets
            else "Unix sockets are not filtered on this machine's architecture"
        )
        network = "they have network access" if self._settings.network else "they have no network"
        return (
            f"Commands can write only in {self._workspace_real()}{extra} and a private /tmp, "
            "except the paths the agent protects (such as git's config and hooks); Jupyter's "
            f"connection files and the desktop session's sockets are hidden; {sockets}; "
            f"{network}."
        )

    def scratch(self) -> list[Path]:
        """Folders outside the workspace that commands may write (as commands name them):
        the private /tmp and the extra writable folders; none without a sandbox."""
        status = self.status()
        if not status.active:
            return []
        places = self._roots()[1:]
        if status.mechanism == "bubblewrap":
            places += [Path("/tmp"), Path("/var/tmp")]
        return places

    def hide(self, *paths: Path | str) -> None:
        """Hide more paths from commands (e.g. the kernel's connection file's folder)."""
        self._hidden = (*self._hidden, *(Path(p) for p in paths))

    # --- launching -------------------------------------------------------------------

    def launch(self, argv: Sequence[str], cwd: Path) -> Launch:
        """The command ``argv``, to run in ``cwd``, wrapped in the sandbox when it is active."""
        status = self.status()
        if not status.active:
            return Launch(list(argv))
        if status.mechanism == "sandbox-exec":
            return self._seatbelt_launch(argv)
        return self._bwrap_launch(argv, cwd)

    def close(self) -> None:
        """Remove the private /tmp (a later launch makes a new one). Idempotent."""
        with self._lock:
            finalizer, self._tmp_finalizer, self._tmp = self._tmp_finalizer, None, None
        if finalizer is not None:
            finalizer()

    def _bwrap_launch(self, argv: Sequence[str], cwd: Path) -> Launch:
        assert self._bwrap is not None
        launch = Launch([])
        try:
            tmp = self._private_tmp()
            args = [self._bwrap, *_bwrap_flags(self._settings.network, self._disable_userns)]
            roots = sorted(self._roots(), key=_depth)
            # The private /tmp goes over the real one, and a workspace under /tmp over it in
            # turn; a root that is /tmp itself keeps the real one.
            temps = [
                (tmp / name, Path(place))
                for name, place in (("tmp", "/tmp"), ("var-tmp", "/var/tmp"))
                if os.path.isdir(place) and Path(os.path.realpath(place)) not in roots
            ]
            above = [r for r in roots if any(r in place.parents for _, place in temps)]
            for root in above:
                args += ["--bind", str(root), str(root)]
            for source, place in temps:
                args += ["--bind", str(source), str(place)]
            for program in _programs_under([place for _, place in temps], roots):
                args += ["--ro-bind", str(program), str(program)]
            for root in roots:
                if root not in above:
                    args += ["--bind", str(root), str(root)]
            protected, spellings = self._protected(), self._root_spellings()
            plan, release = _LEDGER.reserve(lambda: _plan_protection(protected, spellings))
            launch._cleanups.append(release)
            args += plan.mount_args()
            args += _hidden_args(self._hidden, roots)
            args += ["--setenv", "TMPDIR", "/tmp", "--chdir", os.fspath(cwd)]
            program = None if self._settings.unix_sockets else unix_socket_filter()
            if program is not None:
                fd = _readable_fd(program)
                launch._cleanups.append(lambda: os.close(fd))
                launch.pass_fds = (fd,)
                args += ["--seccomp", str(fd)]
            launch.argv = [*args, "--", *argv]
        except BaseException:
            launch.close()
            raise
        return launch

    def _seatbelt_launch(self, argv: Sequence[str]) -> Launch:
        tmp = self._private_tmp()
        profile = self._profile([Path(os.path.abspath(p)) for p in self._protected()])
        env = ["/usr/bin/env", f"TMPDIR={tmp / 'tmp'}"]
        return Launch(["/usr/bin/sandbox-exec", "-p", profile, *env, *argv])

    def _profile(self, protected: Sequence[Path]) -> str:
        tmp = self._tmp or Path(tempfile.gettempdir()) / "jupyter_agent-tmp-probe"
        return seatbelt_profile(
            writable=[*self._roots(), tmp],
            protected=protected,
            hidden=[p for p in self._hidden if os.path.lexists(p)],
            network=self._settings.network,
            unix_sockets=self._settings.unix_sockets,
        )

    # --- places ----------------------------------------------------------------------

    def _workspace_real(self) -> Path:
        return Path(os.path.realpath(self._workspace))

    def _roots(self) -> list[Path]:
        """The writable roots, resolved: the workspace first, then the existing extra ones."""
        roots = [self._workspace_real()]
        for spelled in self._settings.writable:
            real = Path(os.path.realpath(os.path.expanduser(spelled)))
            if os.path.isdir(real) and real not in roots:
                roots.append(real)
        return roots

    def _root_spellings(self) -> list[tuple[Path, Path]]:
        """(as written, resolved) for each root, deepest first, to anchor protected paths."""
        pairs = [(self._workspace, self._workspace_real())]
        for spelled in self._settings.writable:
            written = Path(os.path.abspath(os.path.expanduser(spelled)))
            pairs.append((written, Path(os.path.realpath(written))))
        roots = set(self._roots())
        return sorted((p for p in pairs if p[1] in roots), key=lambda p: -_depth(p[1]))

    def _private_tmp(self) -> Path:
        with self._lock:
            if self._tmp is None:
                _remove_orphaned_tmps()
                owner = f"{os.getpid()}-{_start_time(os.getpid())}"
                tmp = Path(tempfile.mkdtemp(prefix=f"{_TMP_PREFIX}{owner}-"))  # 0700
                for name in ("tmp", "var-tmp"):
                    (tmp / name).mkdir()
                    # What programs expect of /tmp; the 0700 folder around keeps others out.
                    os.chmod(tmp / name, 0o1777)
                self._tmp = tmp
                self._tmp_finalizer = weakref.finalize(self, _remove_tree, tmp)
            return self._tmp


def _programs_under(temps: Sequence[Path], roots: Sequence[Path]) -> list[Path]:
    """Installed programs the private /tmp would hide: this Python's prefixes and the
    PATH's folders that live under the real /tmp (a virtual environment made there, a CI
    checkout), shown read-only, outermost first."""
    places = [Path(sys.prefix), Path(sys.exec_prefix), Path(sys.base_prefix)]
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        if entry and os.path.isabs(entry):
            folder = Path(entry)
            places.append(folder.parent if folder.name == "bin" else folder)
    found: list[Path] = []
    for place in places:
        real = Path(os.path.realpath(place))
        if (
            os.path.isdir(real)
            and any(t in real.parents for t in temps)
            and not any(r == real or r in real.parents for r in roots)
            and not any(f == real or f in real.parents for f in found)
        ):
            found = [f for f in found if real not in f.parents]
            found.append(real)
    return sorted(found, key=_depth)


def _unavailable(detail: str) -> SandboxStatus:
    return SandboxStatus(
        active=False, mechanism="none", summary="commands not sandboxed", detail=detail
    )


def _depth(path: Path) -> int:
    return len(path.parts)


# --- bubblewrap ----------------------------------------------------------------------


def _bwrap_flags(network: bool, disable_userns: bool) -> list[str]:
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


_probe_lock = threading.Lock()
_probes: dict[object, tuple[bool, str]] = {}


def _probe_cached(key: object, argv: list[str], pass_fds: tuple[int, ...]) -> tuple[bool, str]:
    """Run a trivial confined command once per process and key: (worked, why not)."""
    with _probe_lock:
        if key not in _probes:
            _probes[key] = _run_probe(argv, pass_fds)
        return _probes[key]


def _run_probe(argv: list[str], pass_fds: tuple[int, ...]) -> tuple[bool, str]:
    try:
        done = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_PROBE_TIMEOUT,
            pass_fds=pass_fds,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return False, f"{Path(argv[0]).name} did not answer within {_PROBE_TIMEOUT:g} s"
    except OSError as e:
        return False, str(e)
    if done.returncode == 0:
        return True, ""
    reason = done.stderr.decode(errors="replace").strip() or f"exit status {done.returncode}"
    return False, reason


def _probe_bwrap(bwrap: str, network: bool, seccomp: bytes | None) -> tuple[bool, str, bool]:
    """(works, why not, supports --disable-userns), with the flags launches will use."""
    results = []
    for disable_userns in (True, False):  # --disable-userns needs bwrap 0.8 (Ubuntu 22.04: 0.6)
        argv = [bwrap, *_bwrap_flags(network, disable_userns)]
        fds: tuple[int, ...] = ()
        if seccomp is not None:
            fds = (_readable_fd(seccomp),)
            argv += ["--seccomp", str(fds[0])]
        try:
            key = (bwrap, network, seccomp is not None, disable_userns)
            ok, reason = _probe_cached(key, [*argv, "--", "true"], fds)
        finally:
            for fd in fds:
                os.close(fd)
        if ok:
            return True, "", disable_userns
        results.append(reason)
    return False, results[-1], False


def _readable_fd(data: bytes) -> int:
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


@dataclass
class _Plan:
    """Mounts that keep the protected paths read-only and in place."""

    pinned: dict[Path, set[str]] = field(default_factory=dict)
    """Folder → names of symbolic links in it that must not change: the folder goes read-only."""
    kept: set[Path] = field(default_factory=set)
    """Folders on the way to a protected path: mounted on themselves so they cannot move."""
    readonly: set[Path] = field(default_factory=set)
    """Existing protected paths, no link on the way."""
    blocked: set[Path] = field(default_factory=set)
    """First missing component of a protected path: /dev/null goes there."""

    def _covered(self, path: Path, *, itself: bool) -> bool:
        """Whether a read-only path already covers ``path`` (then a mount there is moot)."""
        if any(parent in self.readonly for parent in path.parents):
            return True
        return itself and path in self.readonly

    def blocked_paths(self) -> list[Path]:
        # A missing entry of a pinned (read-only) folder cannot be created anyway, and bwrap
        # could not create a mount point there.
        return sorted(
            b
            for b in self.blocked
            if b.parent not in self.pinned and not self._covered(b, itself=False)
        )

    def mount_args(self) -> list[str]:
        # A mount replaces everything mounted below its target earlier (its source is the
        # host's folder), so mounts go shallowest first; at one depth, read-only last.
        mounts: list[tuple[int, int, list[str]]] = []
        for folder, links in self.pinned.items():
            if self._covered(folder, itself=True):
                continue
            mounts.append((_depth(folder), 1, ["--ro-bind", str(folder), str(folder)]))
            for entry in _entries(folder):
                if entry.name not in links:
                    mounts.append((_depth(folder) + 1, 0, ["--bind", entry.path, entry.path]))
        for folder in self.kept:
            # A folder in a pinned one was mounted back with its siblings already.
            moot = folder in self.pinned or folder.parent in self.pinned
            if not moot and not self._covered(folder, itself=True):
                mounts.append((_depth(folder), 0, ["--bind", str(folder), str(folder)]))
        for path in self.readonly:
            if not self._covered(path, itself=False):
                mounts.append((_depth(path), 1, ["--ro-bind", str(path), str(path)]))
        for path in self.blocked_paths():
            mounts.append((_depth(path), 1, ["--ro-bind", "/dev/null", str(path)]))
        return [arg for *_, args in sorted(mounts) for arg in args]


def _entries(folder: Path) -> list[os.DirEntry[str]]:
    """The entries of a pinned folder that get mounted back writable: files and folders."""
    try:
        with os.scandir(folder) as it:
            return [
                e
                for e in it
                if not e.is_symlink() and (e.is_dir(follow_symlinks=False) or e.is_file())
            ]
    except OSError:
        return []


def _plan_protection(paths: Iterable[Path], roots: Sequence[tuple[Path, Path]]) -> _Plan:
    plan = _Plan()
    todo = [Path(os.path.abspath(p)) for p in paths]
    seen: set[Path] = set()
    while todo and len(seen) < 10_000:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        anchored = _anchor(path, roots)
        if anchored is None:
            continue  # outside the writable roots: read-only already
        root, parts = anchored
        current = root
        for index, part in enumerate(parts):
            parent, current = current, current / part
            try:
                mode = os.lstat(current).st_mode
            except FileNotFoundError:
                plan.blocked.add(current)
                break
            except OSError:
                break  # e.g. a file where a folder should be: nothing can be created below
            if stat.S_ISLNK(mode):
                plan.pinned.setdefault(parent, set()).add(part)
                target = os.path.realpath(current.joinpath(*parts[index + 1 :]))
                todo.append(Path(target))
                break
            if index < len(parts) - 1:
                if not stat.S_ISDIR(mode):
                    break
                plan.kept.add(current)
        else:
            plan.readonly.add(current)
    return plan


def _anchor(path: Path, roots: Sequence[tuple[Path, Path]]) -> tuple[Path, tuple[str, ...]] | None:
    """(resolved root, the parts below it) for a path inside a writable root, else None."""
    for written, real in roots:
        for base in (real, written):
            if path == base or base in path.parents:
                return real, path.relative_to(base).parts
    # Spelled through a link above the root: resolve the folders, never the last part.
    resolved = Path(os.path.realpath(path.parent)) / path.name
    if resolved != path:
        for _written, real in roots:
            if resolved == real or real in resolved.parents:
                return real, resolved.relative_to(real).parts
    return None


def _hidden_args(hidden: Iterable[Path], roots: Sequence[Path]) -> list[str]:
    places: list[Path] = []
    for spelled in hidden:
        path = Path(os.path.realpath(spelled))
        if not os.path.exists(path) or path in places:  # False, never raising, if unreadable
            continue
        if any(path == root or path in root.parents for root in roots):
            continue  # covering it would hide the workspace itself
        in_tmp = any(path == t or t in path.parents for t in (Path("/tmp"), Path("/var/tmp")))
        if in_tmp and not any(r in path.parents for r in roots):
            continue  # the private /tmp hides it already
        places.append(path)
    args: list[str] = []
    for path in sorted(places, key=_depth):
        if any(p in path.parents for p in places):
            continue  # inside a hidden folder
        if os.path.isdir(path):
            args += ["--tmpfs", str(path)]
        else:
            args += ["--ro-bind", "/dev/null", str(path)]
    return args


def _default_hidden() -> list[Path]:
    """Places that hold keys to processes outside the sandbox."""
    uid = os.getuid() if hasattr(os, "getuid") else 0
    user_runtime = os.environ.get("XDG_RUNTIME_DIR") or f"/run/user/{uid}"
    return [
        _jupyter_runtime_dir(),  # kernels' connection files (HMAC keys), servers' tokens
        Path(user_runtime),  # session D-Bus, systemd --user, ssh-agent, podman, pipewire
        Path("/run/dbus"),
        Path("/var/run/dbus"),
        Path("/run/docker.sock"),
        Path("/var/run/docker.sock"),
        Path("/run/containerd/containerd.sock"),
        Path("/run/podman/podman.sock"),
        Path("/run/snapd.socket"),
        Path("/run/snapd-snap.socket"),
        Path.home() / ".docker/run/docker.sock",
        Path.home() / ".docker/desktop/docker.sock",
    ]


def _jupyter_runtime_dir() -> Path:
    try:
        from jupyter_core.paths import jupyter_runtime_dir

        return Path(jupyter_runtime_dir())
    except Exception:  # jupyter_core missing or broken: its documented defaults
        if runtime := os.environ.get("JUPYTER_RUNTIME_DIR"):
            return Path(runtime)
        if data := os.environ.get("JUPYTER_DATA_DIR"):
            return Path(data) / "runtime"
        if sys.platform == "darwin":
            return Path.home() / "Library/Jupyter/runtime"
        data_home = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local/share")
        return Path(data_home) / "jupyter/runtime"


_TMP_PREFIX = "jupyter_agent-tmp-"


def _remove_orphaned_tmps() -> None:
    """Remove the private /tmp folders of processes that ended without closing (a killed
    kernel): ``jupyter_agent-tmp-<pid>-<start time>-<random>``."""
    base = tempfile.gettempdir()
    uid = os.getuid() if hasattr(os, "getuid") else None
    try:
        names = [n for n in os.listdir(base) if n.startswith(_TMP_PREFIX)]
    except OSError:
        return
    for name in names:
        owner = name[len(_TMP_PREFIX) :].rsplit("-", 1)[0]
        path = os.path.join(base, name)
        try:
            info = os.lstat(path)
        except OSError:
            continue
        ours = stat.S_ISDIR(info.st_mode) and (uid is None or info.st_uid == uid)
        if ours and owner.count("-") == 1 and not _owner_alive(owner):
            _remove_tree(Path(path))


def _remove_tree(path: Path) -> None:
    """Remove a private /tmp, including folders a command made read-only."""
    for folder, dirs, _files in os.walk(path):
        for name in dirs:
            child = os.path.join(folder, name)
            if not os.path.islink(child):
                with contextlib.suppress(OSError):
                    os.chmod(child, 0o700)
    shutil.rmtree(path, ignore_errors=True)


# --- mount-point files ---------------------------------------------------------------


class _MountPointLedger:
    """Which live launches, in any process of this user, use a /dev/null mount-point file.

    ``<tempdir>/jupyter_agent-mountpoints-<uid>/<hash of the path>/`` holds the path and one
    marker per live launch, ``<pid>-<process start time>-<n>`` (a reused pid does not look
    alive). All of it happens under an exclusive ``flock`` on ``lock``: a launch plans its
    mounts and adds its markers in one locked step before bwrap starts, and a file is removed
    only when no live marker is left.
    """

    def __init__(self) -> None:
        self._count = itertools.count()

    @contextlib.contextmanager
    def _locked(self, *, create: bool) -> Iterator[Path | None]:
        import fcntl  # POSIX only; the ledger serves bubblewrap alone

        base = Path(tempfile.gettempdir()) / f"jupyter_agent-mountpoints-{os.getuid()}"
        if create:
            with contextlib.suppress(FileExistsError):
                base.mkdir(mode=0o700)
        try:
            info = os.lstat(base)
        except FileNotFoundError:
            yield None
            return
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
            log.warning("%s is not a private folder of ours: mount points are left in place", base)
            yield None
            return
        fd = os.open(base / "lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield base
        finally:
            os.close(fd)

    def reserve(self, make_plan: Callable[[], _Plan]) -> tuple[_Plan, Callable[[], None]]:
        """Plan a launch's mounts and mark the mount-point files it uses, in one locked step.

        First the files of crashed processes go (else the plan would take one for a real
        file); a planned read-only path that is another launch's mount-point file is marked
        too, so that launch's end does not remove it under this one. The returned function
        releases the marks.
        """
        with self._locked(create=True) as base:
            if base is None:
                return make_plan(), lambda: None
            for entry in os.listdir(base):
                if entry != "lock":
                    _settle(base / entry)
            plan = make_plan()
            used = {base / _key(p): p for p in plan.blocked_paths()}
            used.update((base / _key(p), p) for p in plan.readonly if (base / _key(p)).is_dir())
            folders = list(used)
            marker = f"{os.getpid()}-{_start_time(os.getpid())}-{next(self._count)}"
            for folder, path in used.items():
                folder.mkdir(exist_ok=True)
                (folder / "path").write_bytes(os.fsencode(path))
                (folder / marker).touch()
        if not folders:
            return plan, lambda: None

        def release() -> None:
            with self._locked(create=False) as base:
                if base is None:
                    return
                for folder in folders:
                    with contextlib.suppress(FileNotFoundError):
                        (folder / marker).unlink()
                    _settle(folder)

        return plan, release


def _key(path: Path) -> str:
    return hashlib.sha256(os.fsencode(path)).hexdigest()[:32]


def _settle(folder: Path) -> None:
    """Drop stale markers; with no live one left, remove the mount-point file if unchanged."""
    try:
        names = os.listdir(folder)
    except OSError:
        return
    live = False
    for name in names:
        if name == "path":
            continue
        if _owner_alive(name):
            live = True
        else:
            with contextlib.suppress(OSError):
                (folder / name).unlink()
    if live:
        return
    with contextlib.suppress(OSError):
        path = os.fsdecode((folder / "path").read_bytes())
        info = os.lstat(path)
        # Only the empty regular file bwrap made: anything else is someone's work.
        if stat.S_ISREG(info.st_mode) and info.st_size == 0:
            os.unlink(path)
    with contextlib.suppress(OSError):
        (folder / "path").unlink()
    with contextlib.suppress(OSError):
        folder.rmdir()


def _start_time(pid: int) -> str:
    """When the process started (clock ticks since boot), or "" if that cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
        # The command name (field 2) may hold spaces and parentheses: split after its last ")".
        return data.rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return ""


def _owner_alive(name: str) -> bool:
    """Whether the process named ``<pid>-<start time>[-…]`` still runs."""
    pid, start, _n = [*name.split("-", 2), "", ""][:3]
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # alive, another user's: only the start time can tell a reused pid
    return not start or _start_time(int(pid)) == start


_LEDGER = _MountPointLedger()


# --- macOS ---------------------------------------------------------------------------


def seatbelt_profile(
    *,
    writable: Sequence[Path],
    protected: Sequence[Path],
    hidden: Sequence[Path],
    network: bool,
    unix_sockets: bool,
) -> str:
    """A ``sandbox-exec`` profile with the semantics of the bubblewrap sandbox.

    Seatbelt applies the last rule that matches, so the order is: everything allowed; writes
    denied; writes re-allowed in the writable roots; protected paths, their folders and hidden
    paths denied again. Rules name paths, so a link itself is protected by its own name; both
    the written and the resolved spelling are listed.
    """

    def spellings(paths: Iterable[Path]) -> list[Path]:
        out: list[Path] = []
        for path in paths:
            for spelled in (Path(os.path.abspath(path)), Path(os.path.realpath(path))):
                if spelled not in out:
                    out.append(spelled)
        return out

    def quoted(path: Path) -> str:
        return '"' + str(path).replace("\\", "\\\\").replace('"', '\\"') + '"'

    def rule(verb: str, operations: str, filters: list[str]) -> list[str]:
        if not filters:
            return []
        return [f"({verb} {operations}", *(f"  {f}" for f in filters), ")"]

    devices = ["/dev/null", "/dev/zero", "/dev/tty", "/dev/dtracehelper"]
    lines = ["(version 1)", "(allow default)", "(deny file-write*)"]
    lines += rule(
        "allow",
        "file-write*",
        [f"(subpath {quoted(p)})" for p in spellings(writable)]
        + [f"(literal {quoted(Path(d))})" for d in devices]
        + ['(regex #"^/dev/ttys[0-9]+$")', '(regex #"^/dev/fd/")'],
    )
    guarded = spellings(protected)
    lines += rule("deny", "file-write*", [f"(subpath {quoted(p)})" for p in guarded])
    # rename(2) of a folder on the way would move a protected path out from under its rule.
    ancestors = sorted({a for p in guarded for a in p.parents if a != a.parent})
    lines += rule(
        "deny", "file-write-unlink file-write-create", [f"(literal {quoted(a)})" for a in ancestors]
    )
    secret = [f"(subpath {quoted(p)})" for p in spellings(hidden)]
    lines += rule("deny", "file-read* file-write*", secret)
    if not network:
        lines.append("(deny network*)")
    if not unix_sockets:
        lines.append("(deny system-socket (socket-domain AF_UNIX))")
    return "\n".join(lines) + "\n"
