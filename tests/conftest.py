"""Shared fixtures. Real network calls are impossible here: only loopback is reachable."""

from __future__ import annotations

import asyncio
import ipaddress
import os
import shutil
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

# Real notebooks kept as test data are read and edited by the tests, never collected.
collect_ignore_glob = ["fixtures/*"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slow tests first (order otherwise kept): spread over processes by file
    (scripts/run-tests), the longest files start at once instead of trailing at the end."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


_real_connect = socket.socket.connect


def _loopback_only(self: socket.socket, address: object) -> None:
    if self.family in (socket.AF_INET, socket.AF_INET6) and isinstance(address, tuple):
        host = address[0]
        try:
            allowed = host == "localhost" or ipaddress.ip_address(host).is_loopback
        except ValueError:
            allowed = False
        if not allowed:
            raise ConnectionRefusedError(f"tests may only connect to loopback, not {host!r}")
    _real_connect(self, address)  # type: ignore[arg-type]


_WATCHED = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OLLAMA_HOST",
    "JUPYTER_AGENT_MODEL",
    "HOME",
)
"""Variables a test must leave as it found them: the tutorials' kernels, started later in
the same process, choose their model by them (a key left behind takes them online)."""
_AT_START = {name: os.environ.get(name) for name in _WATCHED}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    result = yield
    left = {n: os.environ.get(n) for n in _WATCHED if os.environ.get(n) != _AT_START[n]}
    if left:
        for name in left:  # put back, so one leak does not spread to every later test
            if _AT_START[name] is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = _AT_START[name]  # type: ignore[assignment]
        raise AssertionError(
            f"{item.nodeid} left {', '.join(sorted(left))} changed in os.environ: set them "
            "with monkeypatch.setenv, or pass the value to the client"
        )
    return result


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket.socket, "connect", _loopback_only)
    # An SDK call that forgets its base_url must fail fast, not reach a real API.
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    monkeypatch.delenv("JUPYTER_AGENT_MODEL", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OLLAMA_HOST", "127.0.0.1:9")  # no Ollama of the machine's is asked


@pytest.fixture(scope="session")
def _credentials_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("credentials")


@pytest.fixture(autouse=True)
def _no_saved_key(monkeypatch: pytest.MonkeyPatch, _credentials_folder: Path) -> None:
    """The user's own saved key (``~/.jupyter_agent/credentials.json``) and a key given in
    an earlier test are never seen: each test starts with neither (kernels too), in a new
    folder at the same path. The same path: the variable's name makes its value a secret
    to hide, and a value new to a process costs every agent a compiled pattern (40 ms)."""
    from jupyter_agent.secrets import credentials

    shutil.rmtree(_credentials_folder, ignore_errors=True)
    _credentials_folder.mkdir(mode=0o700)  # as pytest makes its temporary folders
    monkeypatch.setenv(credentials.LOCATION_VARIABLE, str(_credentials_folder / "credentials.json"))
    monkeypatch.setattr(credentials, "_session_keys", {})


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


@pytest.fixture(scope="module")
def agent_home() -> Iterator[asyncio.AbstractEventLoop]:
    """A loop on a thread of its own ("agent-home"), where an agent with this ``home``
    lives, as a kernel's agents live on their thread."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="agent-home", daemon=True)
    thread.start()
    yield loop
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder of the test's own (the user's settings, instructions and trusted
    folders)."""
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    return folder


@pytest.fixture
def messages_server() -> Iterator[object]:
    from jupyter_agent.testing import MessagesServer

    with MessagesServer() as server:
        yield server


@pytest.fixture
def chat_server() -> Iterator[object]:
    from jupyter_agent.testing import ChatCompletionsServer

    with ChatCompletionsServer() as server:
        yield server


# --- a file system with coarse time stamps ------------------------------------------------


@pytest.fixture(params=[1, 2], ids=["whole seconds", "even seconds"])
def coarse_stamps(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The file system keeps time stamps in whole or even seconds, cut down (HFS+, ext3,
    many network file systems; FAT): every status ``os`` reports is as such a file
    system's would be."""
    seconds: int = request.param
    step = seconds * 1_000_000_000

    def coarse(st: os.stat_result) -> os.stat_result:
        fields = list(st)
        fields[7:10] = [t // seconds * seconds for t in fields[7:10]]
        extra = {name: getattr(st, name) for name in ("st_blksize", "st_blocks", "st_rdev")}
        for name in ("st_atime", "st_mtime", "st_ctime"):
            stamp = getattr(st, f"{name}_ns") // step * step
            extra[f"{name}_ns"], extra[name] = stamp, stamp / 1e9
        return os.stat_result(fields, extra)

    for name in ("stat", "lstat", "fstat"):
        real = getattr(os, name)
        monkeypatch.setattr(os, name, lambda *a, _real=real, **k: coarse(_real(*a, **k)))
