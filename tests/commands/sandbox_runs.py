"""Running commands in a real OS sandbox as the shell tool does, for the sandbox tests
(``test_sandbox_*.py``): a new session, ``pass_fds``, ``Launch.close()`` afterwards, and the
host looked at from outside. The fixtures' bodies live here as context managers; each test
module declares the fixtures it uses with them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

from jupyter_agent.os_sandbox.launch import OsSandbox, SandboxSettings

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


@contextmanager
def outside_folder() -> Iterator[Path]:
    """A folder outside the workspace that commands can see (the private /tmp would hide one
    under /tmp or /var/tmp)."""
    parent = REPO
    if any(
        REPO.is_relative_to(t) for t in (Path(tempfile.gettempdir()), Path("/var/tmp"))
    ):  # a checkout under /tmp
        parent = Path.home()
    folder = parent / f".os-sandbox-test-{uuid.uuid4().hex[:8]}"
    folder.mkdir()
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def sandbox_maker(workspace: Path) -> Iterator[Callable[..., OsSandbox]]:
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

    try:
        yield make
    finally:
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
