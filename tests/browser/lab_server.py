"""JupyterLab for the browser tests (and the benchmarks that drive a browser): started on a
free loopback port, rooted in a temporary directory, isolated from the user's config,
settings and workspaces, serving the lab extension built in this tree; and stopped.

``start_lab_server(base)`` returns a ``LabServer`` once it answers; ``stop_lab_server``
ends it and its kernels.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILT_EXTENSION = ROOT / "jupyter_agent" / "labextension"
JS_SOURCES = [ROOT / "js" / "src", ROOT / "js" / "style", ROOT / "js" / "package.json"]

# Generous for a 2-core runner shared by two test processes: the wait ends as soon as the
# server answers, so the bound only decides how long a failure takes to show.
SERVER_START_TIMEOUT = 60.0  # s: JupyterLab answering /api/status

# User settings the test server starts with: no news prompt, no update checks.
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
}


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class LabServer:
    """A running ``jupyter lab``; ``root`` is its ``root_dir``."""

    url: str
    root: Path
    log: Path
    process: subprocess.Popen[bytes]
    runtime: Path
    """Its runtime folder, where the kernels' sockets are."""

    def log_tail(self, lines: int = 60) -> str:
        try:
            text = self.log.read_text(errors="replace")
        except OSError:
            return "(no server log)"
        return "\n".join(text.splitlines()[-lines:])

    def write_notebook(self, path: str, sources: list[str] | None = None) -> str:
        """Create (or replace) a Python 3 notebook at ``path`` under the root; returns ``path``."""
        cells: list[dict[str, Any]] = [
            {
                "cell_type": "code",
                "execution_count": None,
                "id": f"cell-{i}",
                "metadata": {},
                "outputs": [],
                "source": source,
            }
            for i, source in enumerate(sources or [""])
        ]
        notebook = {
            "cells": cells,
            "metadata": {
                "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                "language_info": {"name": "python"},
            },
            "nbformat": 4,
            "nbformat_minor": 5,
        }
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(notebook, indent=1))
        return path


def _wait_until_serving(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + SERVER_START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"jupyter lab exited with {process.returncode} before serving; log:\n"
                + log.read_text(errors="replace")[-4000:]
            )
        try:
            with urllib.request.urlopen(f"{url}/api/status", timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.2)
    raise RuntimeError(
        f"jupyter lab did not answer {url}/api/status within {SERVER_START_TIMEOUT:.0f} s; log:\n"
        + log.read_text(errors="replace")[-4000:]
    )


SERVER_STOP_GRACE = 5.0
"""Seconds a test server has to shut down after SIGTERM. A collaborative one with rooms
open waits about 15 s for its document rooms; the test is over, so it is killed (its
kernels notice their parent is gone and exit)."""


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)  # the server shuts its kernels down on the way out
    try:
        process.wait(timeout=SERVER_STOP_GRACE)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # its own session: start_new_session
        process.wait(timeout=5)


def serve_the_built_extension(base: Path) -> str | None:
    """A JUPYTER_PATH entry whose ``labextensions/jupyter-agent`` is the build in this tree.

    An editable install copies the extension into the environment once, at install time;
    the tests serve ``jupyter_agent/labextension`` instead, so ``cd js && npm run build``
    is all a change needs before they see it. A build older than its sources fails the
    tests rather than testing old code. Without a build in the tree (a regular install),
    the installed extension is served.
    """
    built = BUILT_EXTENSION / "package.json"
    if not built.exists():
        return None
    built_at = built.stat().st_mtime
    sources = [p for source in JS_SOURCES for p in [source, *source.rglob("*")] if p.is_file()]
    changed = sorted(str(p.relative_to(ROOT)) for p in sources if p.stat().st_mtime > built_at)
    if changed:
        pytest.fail(
            f"js/ changed after the lab extension was built ({', '.join(changed[:3])}): "
            "run `npm run build` in js/ (or `pip install -e .`) first",
            pytrace=False,
        )
    path = base / "jupyter-path"
    (path / "labextensions").mkdir(parents=True)
    (path / "labextensions" / "jupyter-agent").symlink_to(BUILT_EXTENSION)
    return str(path)


def _collaboration_options(base: Path, collaborative: bool) -> list[str]:
    """jupyter-collaboration's options for a test server, where it is installed: real-time
    collaboration on only when asked for, and its databases under ``base`` (out of the
    server root, which some tests list, and out of the user's data directory)."""
    options = []
    if importlib.util.find_spec("jupyter_server_fileid") is not None:
        options.append(f"--BaseFileIdManager.db_path={base / 'file_id_manager.db'}")
    if importlib.util.find_spec("jupyter_server_ydoc") is None:
        if collaborative:
            raise RuntimeError("real-time collaboration needs jupyter-collaboration installed")
        return options
    return [
        *options,
        f"--YDocExtension.disable_rtc={not collaborative}",
        f"--SQLiteYStore.db_path={base / 'ystore.db'}",
        f"--YDocExtension.session_store_path={base / 'collaboration_sessions.json'}",
    ]


def start_lab_server(
    base: Path, env: dict[str, str] | None = None, *, collaborative: bool = False
) -> LabServer:
    """Start JupyterLab as the browser tests use it (the benchmarks too): rooted in
    ``base / "root"`` (created if missing), isolated from the user's config, settings and
    workspaces under ``base``, serving the extension built in this tree; returns once it
    answers. ``env``: the environment to start from (default: this process's).
    ``collaborative``: real-time collaboration on (needs jupyter-collaboration); off by
    default, also where jupyter-collaboration is installed."""
    root = base / "root"
    root.mkdir(exist_ok=True)
    settings = base / "settings"
    for name, values in LAB_SETTINGS.items():
        target = settings / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(values))
    # No build check: the page asks for one on each load and the server answers by running
    # node twice (yarn's registry, node's version), 1.3 CPU-seconds for an extension that
    # ships prebuilt.
    labconfig = base / "config" / "labconfig"
    labconfig.mkdir(parents=True, exist_ok=True)
    (labconfig / "page_config.json").write_text(
        json.dumps({"buildCheck": False, "buildAvailable": False})
    )
    # A short folder of its own: a kernel's Unix socket path there must fit in 107 bytes
    # (kernel-<uuid>-ipc-N is 47), which a pytest temporary folder may not leave room for.
    runtime = Path(tempfile.mkdtemp(prefix="lab-"))
    env = {
        **(os.environ if env is None else env),
        "JUPYTER_CONFIG_DIR": str(base / "config"),
        "JUPYTER_RUNTIME_DIR": str(runtime),
        "JUPYTERLAB_SETTINGS_DIR": str(settings),
        "JUPYTERLAB_WORKSPACES_DIR": str(base / "workspaces"),
        "JUPYTER_PLATFORM_DIRS": "1",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
    }
    jupyter_path = serve_the_built_extension(base)
    if jupyter_path is not None:
        env["JUPYTER_PATH"] = os.pathsep.join(filter(None, [jupyter_path, env.get("JUPYTER_PATH")]))
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log = base / "server.log"
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--expose-app-in-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        "--IdentityProvider.token=",
        "--ServerApp.password=",
        f"--ServerApp.root_dir={root}",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.handlers.announcements.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly",
        # Kernels talk over Unix sockets beside their connection files: a TCP port the server
        # picked can be taken by another process before the kernel binds it.
        "--KernelManager.transport=ipc",
        "--JupyterNotebookApp.expose_app_in_browser=True",  # Notebook 7 pages, when installed
        *_collaboration_options(base, collaborative),
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")  # containers and CI machines often run as root
    with log.open("wb") as sink:
        process = subprocess.Popen(
            command,
            cwd=root,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server = LabServer(url=url, root=root, log=log, process=process, runtime=runtime)
    try:
        _wait_until_serving(url, process, log)
    except BaseException:
        stop_lab_server(server)
        raise
    return server


def stop_lab_server(server: LabServer) -> None:
    _stop(server.process)
    shutil.rmtree(server.runtime, ignore_errors=True)
