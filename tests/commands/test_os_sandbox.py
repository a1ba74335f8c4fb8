"""The OS sandbox holds against a command that tries to get out, with real processes.

Invariants, each checked by running the launch argv as the shell tool will (a new session,
``pass_fds``, ``Launch.close()`` afterwards), and by looking at the host afterwards:

- a command writes only in the workspace (also under /tmp), the writable roots and a private
  /tmp; protected paths cannot be written, created, renamed or removed, also through a link;
  no mount-point file stays behind, also when launches overlap or a process crashed;
- hidden paths are empty, the kernel's /proc entries are out of sight, Unix sockets cannot
  be created, the network is the host's or none, as set;
- nothing a command started outlives it: not when it exits, not when its group is killed;
- no sandbox is reported plainly, and ``enabled=False`` runs commands unconfined.

On Linux a missing bwrap fails these tests (CI installs it); they skip on other systems.
"""

from __future__ import annotations

import contextlib
import errno
import glob
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from jupyter_agent.os_sandbox import seccomp as _seccomp
from jupyter_agent.os_sandbox.launch import (
    Launch,
    OsSandbox,
    SandboxSettings,
)
from jupyter_agent.os_sandbox.seatbelt import seatbelt_profile
from jupyter_agent.secrets import credentials

linux = pytest.mark.skipif(sys.platform != "linux", reason="the bubblewrap sandbox is Linux's")

REPO = Path(__file__).resolve().parents[2]
PROCESS_WAIT = 60
"""Seconds a process these tests start (a Python that imports the package) may take to end:
a bound only decides how long a failure takes to show, on a loaded runner."""

# Does each operation work? Run inside the sandbox; prints {name: "ok" | errno name | listing}.
_ATTEMPT = r"""
import errno, json, os, sys
out = {}
for name, (op, *args) in json.loads(sys.argv[1]).items():
    try:
        if op == "append":
            with open(args[0], "a") as f:
                f.write("evil")
        elif op == "create":
            open(args[0], "x").close()
        elif op == "mkdir":
            os.mkdir(args[0])
        elif op == "rename":
            os.rename(args[0], args[1])
        elif op == "unlink":
            os.unlink(args[0])
        elif op == "rmdir":
            os.rmdir(args[0])
        elif op == "read":
            open(args[0]).read()
        elif op == "listdir":
            out[name] = sorted(os.listdir(args[0]))
            continue
        out[name] = "ok"
    except OSError as e:
        out[name] = errno.errorcode.get(e.errno, str(e.errno))
print(json.dumps(out))
"""


# --- fixtures and helpers ------------------------------------------------------------


@pytest.fixture
def outside() -> Iterator[Path]:
    """A folder outside the workspace that commands can see (the private /tmp would hide one
    under /tmp or /var/tmp)."""
    parent = REPO
    if any(
        REPO.is_relative_to(t) for t in (Path(tempfile.gettempdir()), Path("/var/tmp"))
    ):  # a checkout under /tmp
        parent = Path.home()
    folder = parent / f".os-sandbox-test-{uuid.uuid4().hex[:8]}"
    folder.mkdir()
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def make_sandbox(workspace: Path) -> Iterator[Callable[..., OsSandbox]]:
    """Sandboxes on the workspace, active (or the test fails, saying why), closed afterwards."""
    made: list[OsSandbox] = []

    def make(
        settings: SandboxSettings | None = None,
        *,
        protected: Sequence[Path] = (),
        hidden: Sequence[Path] = (),
    ) -> OsSandbox:
        sb = OsSandbox(
            workspace, settings or SandboxSettings(), protected=lambda: protected, hidden=hidden
        )
        made.append(sb)
        status = sb.status()
        assert status.active, f"no OS sandbox on this Linux machine: {status.detail}"
        assert status.mechanism == "bubblewrap"
        return sb

    yield make
    for sb in made:
        sb.close()


def run(
    sb: OsSandbox, argv: Sequence[str], cwd: Path, timeout: float = 10
) -> subprocess.CompletedProcess[str]:
    launch = sb.launch(argv, cwd)
    try:
        return subprocess.run(
            launch.argv,
            cwd=cwd,
            pass_fds=launch.pass_fds,
            start_new_session=True,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    finally:
        launch.close()


def sh(sb: OsSandbox, script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run(sb, ["sh", "-c", script], cwd)


def attempt(sb: OsSandbox, cwd: Path, **ops: tuple[str, ...]) -> dict[str, object]:
    done = run(sb, [sys.executable, "-c", _ATTEMPT, json.dumps(ops)], cwd)
    assert done.returncode == 0, done.stderr
    outcomes: dict[str, object] = json.loads(done.stdout)
    return outcomes


def python_in(sb: OsSandbox, code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run(sb, [sys.executable, "-c", textwrap.dedent(code)], cwd)


def processes_with(marks: Sequence[str]) -> set[str]:
    """Which of the ``sleep <mark>`` processes are alive on the host (zombies do not count)."""
    found = set()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        for mark in marks:
            if cmdline[:2] == [b"sleep", mark.encode()]:
                found.add(mark)
    return found


def wait_for(predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def sleep_marks(n: int) -> list[str]:
    """Unique arguments for ``sleep`` (``sleep 4242.123``), to find the processes by."""
    tag = uuid.uuid4().int % 10**6
    return [f"{4000 + i}.{tag:06d}" for i in range(n)]


# --- the filesystem ------------------------------------------------------------------


@linux
def test_a_write_outside_the_workspace_is_refused_by_the_os(make_sandbox, workspace, outside):
    (outside / "keep.txt").write_text("mine")
    sb = make_sandbox()
    done = attempt(
        sb,
        workspace,
        new=("create", str(outside / "new.txt")),
        append=("append", str(outside / "keep.txt")),
        remove=("unlink", str(outside / "keep.txt")),
        home=("create", str(Path.home() / f".sandbox-escape-{uuid.uuid4().hex[:6]}")),
    )
    assert done == {"new": "EROFS", "append": "EROFS", "remove": "EROFS", "home": "EROFS"}
    assert sorted(os.listdir(outside)) == ["keep.txt"]
    assert (outside / "keep.txt").read_text() == "mine"


@linux
def test_writes_inside_the_workspace_work_also_when_it_lies_under_tmp(make_sandbox, workspace):
    assert workspace.is_relative_to(tempfile.gettempdir())  # pytest's tmp_path
    sb = make_sandbox()
    done = sh(sb, "mkdir -p src && echo 'print(1)' > src/a.py && mv src/a.py src/b.py", workspace)
    assert done.returncode == 0, done.stderr
    assert (workspace / "src/b.py").read_text() == "print(1)\n"


@linux
def test_an_extra_writable_folder_is_writable(make_sandbox, workspace, outside):
    venv = outside / "venv"
    venv.mkdir()
    sb = make_sandbox(SandboxSettings(writable=(str(venv),)))
    assert sh(sb, f"touch {venv}/installed", workspace).returncode == 0
    assert (venv / "installed").exists()
    assert sh(sb, f"touch {outside}/not-there", workspace).returncode != 0


@linux
def test_protected_paths_cannot_be_written_created_renamed_or_removed(make_sandbox, workspace):
    git = workspace / ".git"
    (git / "hooks").mkdir(parents=True)
    (git / "config").write_text("[core]\n")
    (git / "hooks/pre-commit.sample").write_text("#!/bin/sh\n")
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    protected = [
        git / "config",  # an existing file
        git / "hooks",  # an existing folder
        workspace / ".jupyter_agent",  # missing
        git / "info/attributes",  # missing, in a missing folder
    ]
    sb = make_sandbox(protected=protected)
    done = attempt(
        sb,
        workspace,
        append_config=("append", ".git/config"),
        rename_config=("rename", ".git/config", ".git/config.old"),
        remove_config=("unlink", ".git/config"),
        add_hook=("create", ".git/hooks/pre-commit"),
        remove_hook=("unlink", ".git/hooks/pre-commit.sample"),
        rename_hooks=("rename", ".git/hooks", ".git/hooks.old"),
        remove_hooks=("rmdir", ".git/hooks"),
        rename_git=("rename", ".git", ".git.old"),  # then rebuild .git: a folder on the way
        create_store=("mkdir", ".jupyter_agent"),
        create_store_file=("create", ".jupyter_agent"),
        remove_store=("unlink", ".jupyter_agent"),
        create_info=("mkdir", ".git/info"),
        head=("append", ".git/HEAD"),  # the rest of .git stays writable: git works
        index=("create", ".git/index"),
    )
    assert done.pop("head") == "ok"
    assert done.pop("index") == "ok"
    assert all(result != "ok" for result in done.values()), done
    # Mount points cannot be moved or removed.
    assert done["rename_config"] == done["rename_hooks"] == done["rename_git"] == "EBUSY"
    assert (git / "config").read_text() == "[core]\n"
    assert os.listdir(git / "hooks") == ["pre-commit.sample"]
    assert not (workspace / ".jupyter_agent").exists()  # the mount-point file went
    assert not (git / "info").exists()


@linux
def test_a_protected_path_through_a_symlink_cannot_be_swapped(make_sandbox, workspace):
    # ~/.bashrc -> dotfiles/bashrc, a linked hooks folder, a link to a store not made yet.
    (workspace / "dotfiles").mkdir()
    (workspace / "dotfiles/bashrc").write_text("alias ll='ls -l'\n")
    (workspace / ".bashrc").symlink_to("dotfiles/bashrc")
    (workspace / "githooks").mkdir()
    (workspace / ".git").mkdir()
    (workspace / ".git/hooks").symlink_to("../githooks")
    (workspace / ".jupyter_agent").symlink_to("store")
    (workspace / "src").mkdir()
    sb = make_sandbox(
        protected=[workspace / ".bashrc", workspace / ".git/hooks", workspace / ".jupyter_agent"]
    )
    done = attempt(
        sb,
        workspace,
        unlink_link=("unlink", ".bashrc"),
        retarget_link=("rename", "src", ".bashrc"),
        write_through_link=("append", ".bashrc"),
        write_target=("append", "dotfiles/bashrc"),
        move_target=("rename", "dotfiles/bashrc", "dotfiles/old"),
        unlink_hooks_link=("unlink", ".git/hooks"),
        hook_through_link=("create", ".git/hooks/pre-commit"),
        hook_in_target=("create", "githooks/pre-commit"),
        make_store=("mkdir", "store"),
        store_through_link=("mkdir", ".jupyter_agent"),
        unlink_store_link=("unlink", ".jupyter_agent"),
        # A folder holding a link is pinned read-only: existing entries stay writable,
        # new entries cannot be made there.
        write_in_subfolder=("create", "src/new.py"),
        new_top_level_file=("create", "notes.txt"),
    )
    assert done.pop("write_in_subfolder") == "ok"
    assert done.pop("new_top_level_file") == "EROFS"
    assert all(result != "ok" for result in done.values()), done
    assert os.readlink(workspace / ".bashrc") == "dotfiles/bashrc"
    assert os.readlink(workspace / ".git/hooks") == "../githooks"
    assert (workspace / "dotfiles/bashrc").read_text() == "alias ll='ls -l'\n"
    assert os.listdir(workspace / "githooks") == []
    assert not os.path.lexists(workspace / "store")


@linux
def test_a_link_deep_in_the_workspace_stays_pinned(make_sandbox, workspace):
    # Folders on the way are mounted before the folder holding the link, never over it.
    (workspace / "tool/hooks").mkdir(parents=True)
    (workspace / "tool/hooks/other.sh").write_text("")
    (workspace / "scripts").mkdir()
    (workspace / "scripts/hook.sh").write_text("echo hook\n")
    (workspace / "tool/hooks/run.sh").symlink_to("../../scripts/hook.sh")
    sb = make_sandbox(protected=[workspace / "tool/hooks/run.sh"])
    done = attempt(
        sb,
        workspace,
        unlink_link=("unlink", "tool/hooks/run.sh"),
        move_folder=("rename", "tool/hooks", "tool/old"),
        move_top=("rename", "tool", "tool.old"),
        write_target=("append", "scripts/hook.sh"),
        write_sibling=("append", "tool/hooks/other.sh"),
        new_top_level_file=("create", "notes.txt"),
    )
    assert done == {
        "unlink_link": "EROFS",
        "move_folder": "EBUSY",
        "move_top": "EBUSY",
        "write_target": "EROFS",
        "write_sibling": "ok",
        "new_top_level_file": "ok",
    }
    assert os.readlink(workspace / "tool/hooks/run.sh") == "../../scripts/hook.sh"


@linux
def test_a_mount_point_file_stays_while_another_process_uses_it(make_sandbox, workspace):
    store = workspace / ".jupyter_agent"
    # Another kernel on the same workspace: its command waits for "go", then tries the path.
    other = subprocess.Popen(
        [sys.executable, "-c", _OTHER_KERNEL, str(workspace), "hold"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert other.stdout is not None
        assert other.stdout.readline().strip() == "ready"
        sb = make_sandbox(protected=[store])
        assert sh(sb, "mkdir .jupyter_agent", workspace).returncode != 0  # ends first
        assert store.is_file()  # still the other launch's mount point
        (workspace / "go").touch()
        assert other.stdout.readline().strip() == "refused"
        assert other.wait(timeout=PROCESS_WAIT) == 0
    finally:
        other.kill()
    assert not store.exists()


@linux
def test_what_a_crashed_process_left_is_swept_at_the_next_launch(make_sandbox, workspace):
    store = workspace / ".jupyter_agent"
    crashed = subprocess.Popen([sys.executable, "-c", _OTHER_KERNEL, str(workspace), "crash"])
    assert crashed.wait(timeout=PROCESS_WAIT) == 0
    its_tmp = f"{tempfile.gettempdir()}/jupyter_agent-tmp-{crashed.pid}-*"
    assert store.is_file()  # left behind: that process never closed its launch
    assert glob.glob(its_tmp)  # and its private /tmp
    sb = make_sandbox(protected=[store])
    assert sh(sb, "mkdir .jupyter_agent", workspace).returncode != 0
    assert not store.exists()
    assert not glob.glob(its_tmp)


# Runs an OsSandbox in a process of its own: "hold" keeps a launch open until ./go exists,
# "crash" exits without closing its launch.
_OTHER_KERNEL = r"""
import os, subprocess, sys
from pathlib import Path
from jupyter_agent.os_sandbox.launch import OsSandbox
ws, mode = Path(sys.argv[1]), sys.argv[2]
sb = OsSandbox(ws, protected=lambda: [ws / ".jupyter_agent"])
script = (
    "echo ready; while [ ! -e go ]; do sleep 0.01; done;"
    "if mkdir .jupyter_agent 2>/dev/null; then echo created; else echo refused; fi"
)
launch = sb.launch(["sh", "-c", script if mode == "hold" else "true"], ws)
subprocess.run(launch.argv, cwd=ws, pass_fds=launch.pass_fds, start_new_session=True, check=True)
if mode == "crash":
    os._exit(0)
launch.close()
sb.close()
"""


@linux
def test_the_jupyter_runtime_folder_and_hidden_paths_are_invisible(
    make_sandbox, workspace, outside, monkeypatch
):
    runtime = outside / "runtime"
    runtime.mkdir()
    (runtime / "kernel-1234.json").write_text('{"key": "hmac-secret"}')
    (runtime / "jpserver-99.json").write_text('{"token": "server-token"}')
    session = outside / "xdg"
    session.mkdir()
    (session / "bus").write_text("")
    secret = outside / "secret.txt"
    secret.write_text("s3cret")
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(runtime))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(session))
    sb = make_sandbox(hidden=[secret])
    done = attempt(
        sb,
        workspace,
        runtime=("listdir", str(runtime)),
        session=("listdir", str(session)),
        kernel=("read", str(runtime / "kernel-1234.json")),
        secret=("read", str(secret)),
        outside=("listdir", str(outside)),
    )
    assert done["runtime"] == []
    assert done["session"] == []
    assert done["kernel"] == "ENOENT"
    assert done["secret"] != "ok"
    assert done["outside"] == ["runtime", "secret.txt", "xdg"]  # the rest stays readable


def test_the_saved_api_key_is_invisible_to_commands(make_sandbox, workspace, outside, monkeypatch):
    # The user saved the model's key (the panel's "Save for my user"): a command the model
    # runs, even one the user allowed, cannot read it, so nothing can encode it past the
    # redaction of tool results.
    saved = outside / "home" / ".jupyter_agent" / "credentials.json"
    monkeypatch.setenv(credentials.LOCATION_VARIABLE, str(saved))
    credentials.save_key("sk-ant-api03-SAVEDSAVEDSAVED-0123456789")
    assert saved.is_file()
    sb = make_sandbox()
    done = attempt(sb, workspace, key=("read", str(saved)), folder=("listdir", str(saved.parent)))
    assert done["key"] != "ok"
    assert "SAVEDSAVED" not in json.dumps(done)


@linux
def test_the_private_tmp_lasts_across_launches_and_the_real_tmp_is_untouched(
    make_sandbox, workspace
):
    name = f"jupyter-agent-test-{uuid.uuid4().hex}"
    sb = make_sandbox()
    assert sh(sb, f'echo kept > /tmp/{name} && [ "$TMPDIR" = /tmp ]', workspace).returncode == 0
    assert not Path("/tmp", name).exists()
    assert not Path(tempfile.gettempdir(), name).exists()
    assert sh(sb, f"cat /tmp/{name}", workspace).stdout == "kept\n"
    other = make_sandbox()  # another agent gets a /tmp of its own
    assert sh(other, f"cat /tmp/{name}", workspace).returncode != 0
    sb.close()
    assert sh(sb, f"cat /tmp/{name}", workspace).returncode != 0  # a new one after close


@linux
def test_programs_installed_under_the_real_tmp_stay_visible(make_sandbox, workspace, monkeypatch):
    """A virtual environment (or a CI checkout) under /tmp is hidden by the private /tmp
    unless it is shown again, read-only: its programs must run, and stay unchanged."""
    env = Path(tempfile.mkdtemp(prefix="venv-under-tmp-"))
    try:
        (env / "bin").mkdir()
        tool = env / "bin" / "jupyter-agent-test-tool"
        tool.write_text("#!/bin/sh\necho tool ran\n")
        tool.chmod(0o755)
        monkeypatch.setenv("PATH", f"{env / 'bin'}:{os.environ['PATH']}")
        sb = make_sandbox()
        done = sh(sb, f"jupyter-agent-test-tool; echo x > {tool}", workspace)
        assert done.stdout == "tool ran\n"
        assert "Read-only file system" in done.stderr
        assert tool.read_text() == "#!/bin/sh\necho tool ran\n"
    finally:
        shutil.rmtree(env, ignore_errors=True)


@linux
def test_the_kernel_process_is_out_of_sight(make_sandbox, workspace):
    sb = make_sandbox()
    done = python_in(
        sb,
        f"""
        import os
        for name in ("environ", "cmdline"):
            try:
                open("/proc/{os.getpid()}/" + name, "rb").read()
                print(name, "readable")
            except OSError as e:
                print(name, e.strerror)
        print(sorted(int(p) for p in os.listdir("/proc") if p.isdigit()))
        """,
        workspace,
    )
    lines = done.stdout.splitlines()
    assert lines[:2] == ["environ No such file or directory", "cmdline No such file or directory"]
    assert max(json.loads(lines[2])) < 10  # only the sandbox's own few processes


@linux
def test_commands_have_no_capabilities_even_for_root(make_sandbox, workspace):
    sb = make_sandbox()
    done = sh(
        sb,
        "grep CapEff /proc/self/status; mount -o remount,rw / 2>/dev/null && echo REMOUNTED",
        workspace,
    )
    assert "CapEff:\t0000000000000000" in done.stdout
    assert "REMOUNTED" not in done.stdout


# --- processes -----------------------------------------------------------------------

_SPAWN = """
setsid sleep {0} &
( sleep {1} & ) &
nohup sleep {2} >/dev/null 2>&1 &
sleep {3} & disown
"""


@linux
def test_everything_a_command_started_dies_when_its_group_is_killed(make_sandbox, workspace):
    marks = sleep_marks(5)
    sb = make_sandbox()
    launch = sb.launch(["bash", "-c", _SPAWN.format(*marks) + f"sleep {marks[4]}"], workspace)
    proc = subprocess.Popen(
        launch.argv, cwd=workspace, pass_fds=launch.pass_fds, start_new_session=True
    )
    try:
        assert wait_for(lambda: processes_with(marks) == set(marks)), processes_with(marks)
        os.killpg(proc.pid, signal.SIGTERM)  # what Stop does first
        assert proc.wait(timeout=PROCESS_WAIT) == -signal.SIGTERM
        assert wait_for(lambda: not processes_with(marks)), processes_with(marks)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        launch.close()


@linux
def test_everything_a_command_started_dies_when_it_exits(make_sandbox, workspace):
    marks = sleep_marks(4)
    sb = make_sandbox()
    # Exit once all four are running.
    script = _SPAWN.format(*marks) + "while [ $(pgrep -c '^sleep$') -lt 4 ]; do sleep 0.01; done"
    done = run(sb, ["bash", "-c", script], workspace)
    assert done.returncode == 0, done.stderr
    assert wait_for(lambda: not processes_with(marks)), processes_with(marks)


@linux
def test_a_command_killed_by_a_signal_exits_128_plus_the_signal(make_sandbox, workspace):
    # bwrap's init reports a signalled command as an exit status, as a shell does.
    sb = make_sandbox()
    assert sh(sb, "kill -KILL $$", workspace).returncode == 128 + signal.SIGKILL


# --- network and sockets -------------------------------------------------------------


@pytest.fixture
def loopback_server() -> Iterator[int]:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    yield server.getsockname()[1]
    server.close()


_CONNECT = """
import socket, sys
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=3).close()
    print("connected")
except OSError as e:
    print(type(e).__name__)
"""


@linux
def test_with_network_on_a_host_loopback_server_is_reachable(
    make_sandbox, workspace, loopback_server
):
    sb = make_sandbox(SandboxSettings(network=True))
    assert python_in(sb, _CONNECT.format(port=loopback_server), workspace).stdout == "connected\n"


@linux
def test_with_network_off_a_host_loopback_server_is_unreachable(
    make_sandbox, workspace, loopback_server
):
    sb = make_sandbox(SandboxSettings(network=False))
    assert sb.status().summary == "commands sandboxed to this folder, no network"
    done = python_in(sb, _CONNECT.format(port=loopback_server), workspace)
    assert done.stdout == "ConnectionRefusedError\n"


_SOCKETS = """
import socket
for family in ("AF_UNIX", "AF_INET", "AF_INET6"):
    try:
        socket.socket(getattr(socket, family)).close()
        print(family, "ok")
    except OSError as e:
        print(family, type(e).__name__)
a, b = socket.socketpair()
print("socketpair ok")
"""


@linux
def test_unix_sockets_are_refused_and_inet_sockets_allowed(make_sandbox, workspace):
    sb = make_sandbox()
    done = python_in(sb, _SOCKETS, workspace)
    assert done.stdout.splitlines() == [
        "AF_UNIX PermissionError",
        "AF_INET ok",
        "AF_INET6 ok",
        "socketpair ok",
    ]


@linux
def test_unix_sockets_setting_allows_them_but_hidden_sockets_stay_hidden(
    make_sandbox, workspace, outside
):
    servers = []
    for name in ("docker.sock", "visible.sock"):
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(outside / name))
        server.listen(1)
        servers.append(server)
    try:
        sb = make_sandbox(SandboxSettings(unix_sockets=True), hidden=[outside / "docker.sock"])
        done = python_in(
            sb,
            f"""
            import socket
            for name in ("docker.sock", "visible.sock"):
                s = socket.socket(socket.AF_UNIX)
                try:
                    s.connect("{outside}/" + name)
                    print(name, "connected")
                except OSError as e:
                    print(name, type(e).__name__)
            """,
            workspace,
        )
        assert done.stdout.splitlines() == [
            "docker.sock ConnectionRefusedError",
            "visible.sock connected",
        ]
    finally:
        for server in servers:
            server.close()


# --- detection -----------------------------------------------------------------------


def _fake_bwrap(folder: Path, script: str) -> Path:
    path = folder / "bwrap"
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(0o755)
    return path


@linux
def test_a_failing_probe_means_no_sandbox_with_the_reason(workspace, tmp_path):
    # What Debian's bwrap says when unprivileged user namespaces are off.
    fake = _fake_bwrap(
        tmp_path,
        'echo "bwrap: No permissions to creating new namespace, likely because the kernel does'
        " not allow non-privileged user namespaces. On e.g. debian this can be enabled with"
        " 'sysctl kernel.unprivileged_userns_clone=1'.\" >&2\nexit 1\n",
    )
    sb = OsSandbox(workspace, bwrap=fake)
    status = sb.status()
    assert (status.active, status.mechanism) == (False, "none")
    assert status.summary == "commands not sandboxed"
    assert "No permissions to creating new namespace" in status.detail
    assert "sysctl" in status.detail
    assert "permission rules alone apply" in status.detail
    launch = sb.launch(["echo", "hi"], workspace)
    assert (launch.argv, launch.pass_fds) == (["echo", "hi"], ())


@linux
def test_a_missing_bwrap_says_how_to_install_it(workspace, tmp_path):
    status = OsSandbox(workspace, bwrap=tmp_path / "no-such-bwrap").status()
    assert (status.active, status.mechanism) == (False, "none")
    assert "apt install bubblewrap" in status.detail


@linux
def test_the_probe_runs_once_per_process(workspace, tmp_path):
    log = tmp_path / "probes"
    fake = _fake_bwrap(tmp_path, f'echo "$@" >> {log}\n')
    for _ in range(3):
        assert OsSandbox(workspace, bwrap=fake).status().active
    assert len(log.read_text().splitlines()) == 1


def test_turned_off_in_settings_commands_run_unconfined(workspace, outside):
    sb = OsSandbox(workspace, SandboxSettings(enabled=False))
    status = sb.status()
    assert (status.active, status.mechanism) == (False, "off")
    assert status.summary == "commands not sandboxed (turned off in settings)"
    write = f"open({str(outside / 'file')!r}, 'w').write('out')"
    launch = sb.launch([sys.executable, "-c", write], workspace)
    assert launch.pass_fds == ()
    subprocess.run(launch.argv, cwd=workspace, check=True)
    launch.close()
    assert (outside / "file").read_text() == "out"


@linux
def test_a_launch_closes_its_descriptor_once(make_sandbox, workspace):
    launch: Launch = make_sandbox().launch(["true"], workspace)
    (fd,) = launch.pass_fds
    os.fstat(fd)
    launch.close()
    launch.close()
    with pytest.raises(OSError, match="Bad file descriptor"):
        os.fstat(fd)


@pytest.fixture
def nobodys_folder() -> Iterator[Path]:
    """A folder nobody can reach (a checkout's folder, the home folder, pytest's base folder
    may not be), straight under the system's temporary folder."""
    folder = Path(tempfile.mkdtemp(prefix="os-sandbox-nobody-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@linux
@pytest.mark.skipif(
    getattr(os, "geteuid", lambda: -1)() != 0 or not shutil.which("setpriv"),
    reason="runs as root to become another user (as non-root, every other test shows it)",
)
def test_it_works_for_a_non_root_user(nobodys_folder):
    # The other tests run as root here; this one runs an OsSandbox as nobody.
    ws, outside = nobodys_folder / "ws", nobodys_folder / "outside"
    ws.mkdir()
    outside.mkdir()
    os.chown(ws, 65534, 65534)
    outside.chmod(0o777)  # so that only the sandbox stops nobody writing there
    code = textwrap.dedent(
        f"""
        import subprocess, sys
        from pathlib import Path
        from jupyter_agent.os_sandbox.launch import OsSandbox
        sb = OsSandbox(Path("{ws}"))
        print(sb.status().mechanism)
        launch = sb.launch(["sh", "-c", "id -u; touch in; touch {outside}/out"], Path("{ws}"))
        subprocess.run(launch.argv, pass_fds=launch.pass_fds, cwd="{ws}")
        launch.close()
        sb.close()
        """
    )
    as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    done = subprocess.run(
        [*as_nobody, sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=20,
        env={**os.environ, "HOME": str(ws)},
        check=False,
    )
    assert done.stdout.splitlines() == ["bubblewrap", "65534"], done.stderr
    assert (ws / "in").exists()
    assert not (outside / "out").exists()


# --- the seccomp program, interpreted ------------------------------------------------


def _run_bpf(program: bytes, nr: int, arch: int, arg0: int = 0) -> int:
    """A classic-BPF interpreter for the instructions the filter uses."""
    data = struct.pack("<iIQ6Q", nr, arch, 0, arg0, 0, 0, 0, 0, 0)
    insns: list[tuple[int, int, int, int]] = [
        struct.unpack("HBBI", program[i : i + 8]) for i in range(0, len(program), 8)
    ]
    acc, pc = 0, 0
    while True:
        code, jt, jf, k = insns[pc]
        if code == 0x20:
            acc = struct.unpack_from("<I", data, k)[0]
        elif code == 0x06:
            return k
        elif code in (0x15, 0x35):
            hit = acc == k if code == 0x15 else acc >= k
            pc += jt if hit else jf
        else:
            raise AssertionError(f"unexpected instruction {code:#x}")
        pc += 1


ALLOW, EPERM = 0x7FFF0000, 0x00050000 | errno.EPERM
AF_UNIX, AF_INET = 1, 2  # Linux's numbers, whatever system runs the test
X86_64, I386, AARCH64, ARM = 0xC000003E, 0x40000003, 0xC00000B7, 0x40000028


def test_the_filter_refuses_af_unix_sockets_on_x86_64():
    program = _seccomp.unix_socket_filter("x86_64")
    assert program is not None
    assert _run_bpf(program, 41, X86_64, AF_UNIX) == EPERM
    assert _run_bpf(program, 41, X86_64, AF_INET) == ALLOW
    assert _run_bpf(program, 41, X86_64, (0xFFFF << 32) | AF_INET) == ALLOW  # an int
    assert _run_bpf(program, 53, X86_64, AF_UNIX) == ALLOW  # socketpair
    assert _run_bpf(program, 0, X86_64) == ALLOW
    assert _run_bpf(program, 425, X86_64) == EPERM  # io_uring can make sockets too
    assert _run_bpf(program, 0x40000000 | 41, X86_64, AF_UNIX) == EPERM  # x32
    assert _run_bpf(program, 0x40000000 | 0, X86_64) == EPERM
    # 32-bit programs: socketcall hides its arguments; socket() is checked.
    assert _run_bpf(program, 102, I386) == EPERM
    assert _run_bpf(program, 359, I386, AF_UNIX) == EPERM
    assert _run_bpf(program, 359, I386, AF_INET) == ALLOW
    assert _run_bpf(program, 4, I386) == ALLOW
    assert _run_bpf(program, 41, ARM, AF_UNIX) == EPERM  # an ABI without a table


def test_the_filter_refuses_af_unix_sockets_on_aarch64():
    program = _seccomp.unix_socket_filter("aarch64")
    assert program is not None
    assert _run_bpf(program, 198, AARCH64, AF_UNIX) == EPERM
    assert _run_bpf(program, 198, AARCH64, AF_INET) == ALLOW
    assert _run_bpf(program, 199, AARCH64, AF_UNIX) == ALLOW  # socketpair
    assert _run_bpf(program, 41, X86_64, AF_UNIX) == EPERM


def test_there_is_no_filter_for_an_unknown_architecture():
    assert _seccomp.unix_socket_filter("riscv64") is None


# --- macOS ---------------------------------------------------------------------------


def test_the_seatbelt_profile_confines_writes_and_keeps_protected_paths():
    ws = Path("/Users/me/proj")
    profile = seatbelt_profile(
        writable=[ws, Path("/Users/me/tmp-agent")],
        protected=[ws / ".git/config", ws / ".git/hooks"],
        hidden=[Path("/Users/me/Library/Jupyter/runtime")],
        network=False,
        unix_sockets=False,
    )
    lines = profile.splitlines()
    assert lines[:3] == ["(version 1)", "(allow default)", "(deny file-write*)"]
    # Seatbelt applies the last matching rule: the protected denies come after the allow.
    allow = lines.index("(allow file-write*")
    deny = lines.index("(deny file-write*", allow)
    assert '  (subpath "/Users/me/proj")' in lines[allow:deny]
    assert lines[deny + 1 : deny + 3] == [
        '  (subpath "/Users/me/proj/.git/config")',
        '  (subpath "/Users/me/proj/.git/hooks")',
    ]
    moves = lines.index("(deny file-write-unlink file-write-create")
    assert '  (literal "/Users/me/proj/.git")' in lines[moves:]
    assert '(deny file-read* file-write*\n  (subpath "/Users/me/Library/Jupyter/runtime")' in (
        profile
    )
    assert "(deny network*)" in lines
    assert "(deny system-socket (socket-domain AF_UNIX))" in lines


def test_the_seatbelt_profile_leaves_network_and_unix_sockets_when_allowed():
    profile = seatbelt_profile(
        writable=[Path("/w")], protected=[], hidden=[], network=True, unix_sockets=True
    )
    assert "network" not in profile
    assert "system-socket" not in profile
    assert '(subpath "/w")' in profile
