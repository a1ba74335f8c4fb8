"""How the OS sandbox is found and built: whether a sandbox is there is reported plainly,
``enabled=False`` runs commands unconfined, and it works for a non-root user; the seccomp
program (run in a BPF interpreter) refuses AF_UNIX sockets, and macOS's Seatbelt profile
confines writes and keeps the protected paths (checked as text, on any system).

On Linux a missing bwrap fails the tests that launch (CI installs it); they skip on other
systems.
"""

from __future__ import annotations

import errno
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from sandbox_runs import linux

from jupyter_agent.os_sandbox import seccomp as _seccomp
from jupyter_agent.os_sandbox.launch import Launch, OsSandbox, SandboxSettings
from jupyter_agent.os_sandbox.seatbelt import seatbelt_profile

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
