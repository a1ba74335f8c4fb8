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
  and it is mounted on itself, so no folder on the way can be moved aside and rebuilt (from
  a descriptor: one a concurrent command swapped for a link fails the launch); a
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

This module decides and assembles; the parts live apart: bubblewrap's flags and probe
(``_bwrap.py``), the mounts for protected and hidden paths (``_mounts.py``), the mount-point
files (``_mount_points.py``), the private /tmp (``_private_tmp.py``), the seccomp filter
(``_seccomp.py``) and the macOS profile (``_seatbelt.py``).
"""

from __future__ import annotations

import contextvars
import errno
import logging
import os
import stat
import sys
import tempfile
import threading
import weakref
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..admin_policy import current_policy
from ..secrets.credentials import credentials_file
from ..workspace.system_programs import system_program
from .bwrap import bwrap_flags, probe_bwrap, readable_fd
from .mount_points import LEDGER
from .mounts import Protected, depth, hidden_args, plan_protection
from .private_tmp import make_private_tmp, programs_under, remove_tree
from .probe import probe
from .seatbelt import seatbelt_profile
from .seccomp import unix_socket_filter

log = logging.getLogger(__name__)

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
        protected: Callable[[], Iterable[Path] | Protected] = lambda: (),
        hidden: Iterable[Path] = (),
        bwrap: str | os.PathLike[str] | None = None,
    ) -> None:
        """``protected`` is called at every launch (in the caller's thread: keep it off the
        event loop) and returns paths inside the writable roots that must stay read-only
        (they need not exist), or a :class:`Protected` that also says what missing ones
        must read as. ``hidden`` are paths commands must not see, besides the defaults.
        ``bwrap`` overrides the bubblewrap binary (default: PATH).
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
        self._tmp_finalizer: weakref.finalize[[Path], OsSandbox] | None = None

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
        ok, reason, disable_userns = probe_bwrap(bwrap, self._settings.network, seccomp)
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
        ok, reason = probe((tool, profile), [tool, "-p", profile, "/usr/bin/true"], ())
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
            "except the paths the agent protects (what redirects git, in every repository, "
            "and files that run code later); Jupyter's connection files and the desktop "
            f"session's sockets are hidden; {sockets}; "
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
            policy = current_policy()
            if policy.sandbox_required:  # no confinement here, and none is not allowed
                raise PermissionError(
                    f"your administrator's policy ({policy.where}) runs commands only in the "
                    f"sandbox, and there is none here: {status.detail}"
                )
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
            args = [self._bwrap, *bwrap_flags(self._settings.network, self._disable_userns)]
            roots = sorted(self._roots(), key=depth)
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
            for program in programs_under([place for _, place in temps], roots):
                args += ["--ro-bind", str(program), str(program)]
            for root in roots:
                if root not in above:
                    args += ["--bind", str(root), str(root)]
            protected, spellings = self._protection(), self._root_spellings()
            plan, release = LEDGER.reserve(
                lambda: plan_protection(protected.paths, spellings, protected.fills)
            )
            launch._cleanups.append(release)
            held: list[int] = []
            launch._cleanups.append(lambda: _close_all(held))
            args += plan.mount_args(lambda path: _hold(path, held))
            args += hidden_args(self._hidden, roots)
            args += ["--setenv", "TMPDIR", "/tmp", "--chdir", os.fspath(cwd)]
            seccomp = None if self._settings.unix_sockets else unix_socket_filter()
            launch.pass_fds = tuple(held)
            if seccomp is not None:
                fd = readable_fd(seccomp)
                launch._cleanups.append(lambda: os.close(fd))
                launch.pass_fds = (*held, fd)
                args += ["--seccomp", str(fd)]
            launch.argv = [*args, "--", *argv]
        except BaseException:
            launch.close()
            raise
        return launch

    def _seatbelt_launch(self, argv: Sequence[str]) -> Launch:
        tmp = self._private_tmp()
        profile = self._profile([Path(os.path.abspath(p)) for p in self._protection().paths])
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

    def roots(self) -> list[Path]:
        """The folders commands may write (resolved): the workspace first, then the existing
        extra ``writable`` ones (the private /tmp is not one: it is the sandbox's own)."""
        return self._roots()

    def _protection(self) -> Protected:
        found = self._protected()
        return found if isinstance(found, Protected) else Protected(list(found))

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
        return sorted((p for p in pairs if p[1] in roots), key=lambda p: -depth(p[1]))

    def _private_tmp(self) -> Path:
        with self._lock:
            if self._tmp is None:
                tmp = make_private_tmp()
                self._tmp = tmp
                self._tmp_finalizer = weakref.finalize(self, _remove_on_its_own, tmp)
            return self._tmp


def _remove_on_its_own(tmp: Path) -> None:
    """Remove a private /tmp in a context of its own: the garbage collector runs this
    finalizer inside whatever it interrupted, a read-only inspection of the namespace
    among them, whose refusals are for what the inspected code does, not this cleanup."""
    contextvars.Context().run(remove_tree, tmp)


def _hold(path: str, held: list[int]) -> int:
    """A descriptor of ``path`` itself (never what a link there names), kept in ``held``."""
    fd = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
    if stat.S_ISLNK(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(
            errno.ELOOP,
            f"{path} was replaced by a symbolic link while the sandbox was being set up; "
            "run the command again",
        )
    held.append(fd)
    return fd


def _close_all(fds: list[int]) -> None:
    for fd in fds:
        os.close(fd)


def _unavailable(detail: str) -> SandboxStatus:
    return SandboxStatus(
        active=False, mechanism="none", summary="commands not sandboxed", detail=detail
    )


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
        credentials_file(),  # the model's API key, if the user saved it
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
