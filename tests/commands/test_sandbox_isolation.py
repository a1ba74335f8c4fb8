"""The OS sandbox keeps a command from seeing, reaching or outliving what it should not, with
real processes (``sandbox_runs``).

Invariants, each checked by running the launch argv as the shell tool will (a new session,
``pass_fds``, ``Launch.close()`` afterwards), and by looking at the host afterwards:

- hidden paths are empty (Jupyter's runtime folder, the saved API key), the kernel's /proc
  entries are out of sight, and commands have no capabilities, even as root;
- Unix sockets cannot be created (unless allowed, and hidden ones stay hidden), the network
  is the host's or none, as set;
- nothing a command started outlives it: not when it exits, not when its group is killed.

On Linux a missing bwrap fails these tests (CI installs it); they skip on other systems.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
from collections.abc import Iterator

import pytest
from sandbox_runs import (
    PROCESS_WAIT,
    attempt,
    linux,
    processes_with,
    python_in,
    run,
    sh,
    sleep_marks,
    wait_for,
)

from jupyter_agent.os_sandbox.launch import SandboxSettings
from jupyter_agent.secrets import credentials

# --- what commands cannot see --------------------------------------------------------


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
