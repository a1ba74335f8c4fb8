"""Real JupyterLab in headless Chromium: the fixtures every browser test shares.

- ``lab`` (session): JupyterLab from this environment on a free loopback port, rooted in
  a temporary directory, isolated from the user's config, settings and workspaces, with
  news and update checks off and ``window.jupyterapp`` exposed (for waits, as Galata does).
  It serves the lab extension as built in this tree (``jupyter_agent/labextension``) and
  refuses to start when ``js/`` changed after that build. With jupyter-collaboration
  installed, real-time collaboration is off there: it tests JupyterLab as most people run it.
- ``collaborative_lab`` (module): the same with real-time collaboration on (every view of
  a notebook edits one shared Yjs document, which the server saves); skips the test when
  jupyter-collaboration is not installed.
- ``browser`` (session or module, see ``_browser_scope``): Debian's chromium through
  Python Playwright.
- ``page`` (function): the process's JupyterLab window (``lab_window``, as long-lived as
  ``browser``): JupyterLab stays loaded while each test opens its notebooks in it (a test
  on another server loads that one's), and after the test they are closed,
  their kernels shut down and the layout reset, as a user's window lives. A test marked
  ``own_window`` (it changes the page in ways no reset undoes) gets a fresh browser
  context instead. On failure a screenshot, the test's browser console and the server
  log tail land in ``test-artifacts/``.
- ``open_notebook`` (function): writes a notebook into the server root, opens it and
  waits for its kernel; the returned ``NotebookUI`` runs cells the way a person does
  (type into the cell editor, Shift+Enter) and reads what the page shows.
- ``collaborator`` (function): ``collaborator(name, path)``: another user (a browser
  context of their own) opens the notebook on ``collaborative_lab``, as ``open_notebook``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
BUILT_EXTENSION = ROOT / "jupyter_agent" / "labextension"
JS_SOURCES = [ROOT / "js" / "src", ROOT / "js" / "style", ROOT / "js" / "package.json"]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]

# Bounds on waits, generous for a 2-core runner shared by two test processes: a wait ends
# as soon as its condition holds, so a bound only decides how long a failure takes to show.
SERVER_START_TIMEOUT = 60.0  # s: JupyterLab answering /api/status
PAGE_TIMEOUT = 60_000  # ms: the page loading and showing a notebook
KERNEL_TIMEOUT = 90_000  # ms: a kernel starting, restarting or going idle
CELL_TIMEOUT = 60_000  # ms: one cell running
EXPECT_TIMEOUT = 30_000  # ms: the page showing what an expect() waits for (Playwright: 5 s)

# User settings the test server starts with: no news prompt, no update checks.
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
}


# --- the server ------------------------------------------------------------------------


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


def _serve_the_built_extension(base: Path) -> str | None:
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
    jupyter_path = _serve_the_built_extension(base)
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


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    server = start_lab_server(tmp_path_factory.mktemp("lab"))
    try:
        yield server
    finally:
        stop_lab_server(server)


@pytest.fixture(scope="module")
def lab_with_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., LabServer]]:
    """``lab_with_env(env)``: start a JupyterLab whose kernels get the environment ``env``
    (a module's own ``lab``, overriding the shared one); stopped after the module."""
    servers: list[LabServer] = []

    def start(env: dict[str, str]) -> LabServer:
        servers.append(start_lab_server(tmp_path_factory.mktemp("lab-with-env"), env))
        return servers[-1]

    try:
        yield start
    finally:
        for server in servers:
            stop_lab_server(server)


@pytest.fixture(scope="module")
def collaborative_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    pytest.importorskip(
        "jupyter_server_ydoc", reason="jupyter-collaboration is not installed (the test extra)"
    )
    server = start_lab_server(tmp_path_factory.mktemp("collaborative-lab"), collaborative=True)
    try:
        yield server
    finally:
        stop_lab_server(server)


# --- the browser -----------------------------------------------------------------------


def _browser_scope(fixture_name: str, config: pytest.Config) -> Literal["session", "module"]:
    """How long Chromium and its window live: the whole session where it runs browser tests
    alone (``scripts/run-tests`` runs them so), else one test module. While Playwright's
    sync API is up, its event loop is the thread's running loop (asyncio's marker is per
    thread, and Playwright switches greenlets inside ``run_until_complete``), so an async
    test run meanwhile fails with "cannot be called from a running event loop": browser
    test modules hold none, other modules do. Loading JupyterLab once per process rather
    than per module saves the browser job about 15 CPU-seconds a module."""
    start = config.invocation_params.dir
    chosen = [Path(start, arg.split("::")[0]).resolve() for arg in config.args]
    here = Path(__file__).resolve().parent
    return "session" if chosen and all(p.is_relative_to(here) for p in chosen) else "module"


@pytest.fixture(scope=_browser_scope)
def browser() -> Iterator[Any]:
    """Debian's Chromium, for the session or for one module (``_browser_scope``)."""
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=EXPECT_TIMEOUT)
    _poll_on_a_timer()
    if not CHROMIUM.exists():
        subprocess.run([str(ROOT / "scripts" / "ensure-system-packages")], check=True)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


POLL_MS = 100
"""How often ``page.wait_for_function`` checks its condition."""


def _poll_on_a_timer() -> None:
    """Every ``page.wait_for_function`` polls on a timer, not on animation frames (its
    default): a loaded headless Chromium starved the frames, and a condition that held
    went unseen past the wait's own timeout (the quickstart tutorial's wait for its last
    cell ran 300 s)."""
    from playwright.sync_api import JSHandle, Page

    original = Page.wait_for_function
    if getattr(original, "polls_on_a_timer", False):
        return

    def wait_for_function(
        self: Page,
        expression: str,
        *,
        arg: Any | None = None,
        polling: float | Literal["raf"] | None = POLL_MS,
        timeout: float | timedelta | None = None,
    ) -> JSHandle:
        return original(self, expression, arg=arg, timeout=timeout, polling=polling)

    wait_for_function.polls_on_a_timer = True  # type: ignore[attr-defined]
    Page.wait_for_function = wait_for_function  # type: ignore[method-assign]


_REPORTS = pytest.StashKey[dict[str, pytest.TestReport]]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    item.stash.setdefault(_REPORTS, {})[report.when] = report
    return report


def _failed(node: pytest.Item) -> bool:
    return any(report.failed for report in node.stash.get(_REPORTS, {}).values())


VIEWPORT = {"width": 1400, "height": 900}


def _new_page(browser: Any) -> tuple[Any, Any, list[str]]:
    """A page in a fresh browser context (a user of its own), and the list its console
    messages and uncaught errors are appended to."""
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(PAGE_TIMEOUT)
    page = context.new_page()
    console: list[str] = []
    page.on("console", lambda message: console.append(f"[{message.type}] {message.text}"))
    page.on("pageerror", lambda error: console.append(f"[pageerror] {error}"))
    return context, page, console


def _save_artifacts(
    page: Any, console: list[str], lab: LabServer, request: pytest.FixtureRequest, name: str
) -> None:
    """A failed test's screenshot, browser console and server log, in test-artifacts/
    (``name`` tells a test's pages apart)."""
    ARTIFACTS.mkdir(exist_ok=True)
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.nodeid + (name and f"-{name}"))
    try:
        page.screenshot(path=str(ARTIFACTS / f"{stem}.png"), full_page=True)
    except Exception as error:
        console = [*console, f"(no screenshot: {error})"]
    (ARTIFACTS / f"{stem}.console.txt").write_text("\n".join(console))
    (ARTIFACTS / f"{stem}.server.txt").write_text(lab.log_tail(200))


@contextmanager
def _browser_page(
    browser: Any, lab: LabServer, request: pytest.FixtureRequest, name: str = ""
) -> Iterator[Any]:
    """A page in a fresh browser context, closed after the test; on failure its
    screenshot, console and the server log land in test-artifacts/."""
    context, page, console = _new_page(browser)
    try:
        yield page
    finally:
        if _failed(request.node):
            _save_artifacts(page, console, lab, request, name)
        try:
            page.evaluate("() => window.jupyterapp?.serviceManager.sessions.shutdownAll()")
        except Exception:
            pass  # the page is gone; the server still shuts the kernels down at the end
        context.close()


@dataclass
class LabWindow:
    """The page a module's tests share, and its console so far."""

    page: Any
    console: list[str]


@pytest.fixture(scope=_browser_scope)
def lab_window(browser: Any) -> Iterator[LabWindow]:
    """One browser page for the tests of ``browser``'s lifetime. Loading JupyterLab costs
    Chromium about 10 CPU-seconds and the server 2; opening a notebook in a loaded
    JupyterLab, about 2 and 1 (measured on this 2-core machine)."""
    context, page, console = _new_page(browser)
    try:
        yield LabWindow(page, console)
    finally:
        context.close()


# Closes what a test opened, as a user closing every tab without saving: the notebooks
# (disposed: closing asks about unsaved changes), their kernels, then the default layout
# (side panels as a fresh JupyterLab shows them). False where the page is not a loaded
# JupyterLab or a dialog stays open.
_CLEAR_WINDOW = """async () => {
  const app = window.jupyterapp;
  if (!app || app.name !== 'JupyterLab') return false;
  for (const widget of Array.from(app.shell.widgets('main'))) widget.dispose();
  await app.serviceManager.sessions.shutdownAll();
  await app.commands.execute('application:reset-layout');
  return Array.from(app.shell.widgets('main')).length === 0
    && document.querySelector('.jp-Dialog') === null;
}"""


def _clear_window(page: Any) -> None:
    """Leave the shared page as the next test expects it: JupyterLab with nothing open, or
    a blank page (the next test loads JupyterLab) where that cannot be had."""
    try:
        page.set_viewport_size(VIEWPORT)
        page.emulate_media(reduced_motion="no-override")
        if page.evaluate(_CLEAR_WINDOW):
            return
    except Exception:
        pass  # a page that cannot be cleared is replaced
    with contextlib.suppress(Exception):
        page.evaluate("() => window.jupyterapp?.serviceManager.sessions.shutdownAll()")
    page.goto("about:blank")


@pytest.fixture
def page(
    browser: Any, lab: LabServer, lab_window: LabWindow, request: pytest.FixtureRequest
) -> Iterator[Any]:
    if request.node.get_closest_marker("own_window") is not None:
        with _browser_page(browser, lab, request) as page:
            yield page
        return
    window, start = lab_window, len(lab_window.console)
    try:
        yield window.page
    finally:
        if _failed(request.node):
            _save_artifacts(window.page, window.console[start:], lab, request, "")
        _clear_window(window.page)


@pytest.fixture
def collaborator(
    browser: Any, collaborative_lab: LabServer, request: pytest.FixtureRequest
) -> Iterator[Callable[..., NotebookUI]]:
    """``collaborator(name, path, sources=None, write=True)``: user ``name`` opens the
    notebook on ``collaborative_lab`` (as ``open_notebook`` does) in a browser context of
    their own; ``.page`` is their page. All are closed after the test."""
    with ExitStack() as pages:

        def open_(
            name: str, path: str, sources: list[str] | None = None, *, write: bool = True
        ) -> NotebookUI:
            page = pages.enter_context(_browser_page(browser, collaborative_lab, request, name))
            return _open_notebook(page, collaborative_lab, path, sources, write=write)

        yield open_


# --- a notebook in the page --------------------------------------------------------------

# JavaScript run in the page. Each function takes the notebook's path and finds its panel
# among the main area's widgets, so nothing depends on which tab is current.
_PANEL_OF = """const panelOf = path => Array.from(window.jupyterapp?.shell.widgets('main') ?? [])
  .find(w => w.context?.path === path && w.content?.widgets !== undefined);"""

_PANEL_ID = f"""path => {{ {_PANEL_OF}
  return panelOf(path)?.id ?? null;
}}"""

_KERNEL_STATE = f"""path => {{ {_PANEL_OF}
  const kernel = panelOf(path)?.sessionContext.session?.kernel;
  return kernel ? `${{kernel.status}}/${{kernel.connectionStatus}}` : 'no kernel';
}}"""

_KERNEL_ID = f"""path => {{ {_PANEL_OF}
  return panelOf(path)?.sessionContext.session?.kernel?.id ?? null;
}}"""

_KERNEL_IDLE = f"path => ({_KERNEL_STATE})(path) === 'idle/connected'"

# Restarts are quick: count them from the kernel's own signal rather than hoping to
# catch the status between two polls.
_COUNT_RESTARTS = f"""path => {{ {_PANEL_OF}
  const kernel = panelOf(path).sessionContext.session.kernel;
  window.__testRestarts = 0;
  kernel.statusChanged.connect((_, status) => {{
    if (status === 'restarting' || status === 'autorestarting') window.__testRestarts++;
  }});
}}"""

_CELL_SOURCE = f"""([path, index]) => {{ {_PANEL_OF}
  return panelOf(path).content.widgets[index]?.model.sharedModel.getSource() ?? null;
}}"""

_CELL_OUTPUTS = f"""([path, index]) => {{ {_PANEL_OF}
  return panelOf(path).content.widgets[index].model.toJSON().outputs ?? [];
}}"""


@dataclass
class NotebookUI:
    """One open notebook, driven through the page the way a person does."""

    page: Any
    path: str
    panel_id: str

    @property
    def panel(self) -> Any:
        return self.page.locator(f'[id="{self.panel_id}"]')

    @property
    def cells(self) -> Any:
        return self.panel.locator(".jp-Notebook .jp-Cell")

    def kernel_state(self) -> str:
        return str(self.page.evaluate(_KERNEL_STATE, self.path))

    def wait_for_kernel_idle(self, timeout: float = KERNEL_TIMEOUT) -> None:
        """Wait until the notebook's kernel is idle and connected, and its toolbar says so."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        try:
            self.page.wait_for_function(_KERNEL_IDLE, arg=self.path, timeout=timeout)
            self.panel.locator('.jp-Notebook-ExecutionIndicator[data-status="idle"]').wait_for(
                timeout=timeout
            )
        except PlaywrightTimeout:
            raise AssertionError(
                f"the kernel of {self.path} was not idle within {timeout / 1000:.0f} s "
                f"(kernel: {self.kernel_state()})"
            ) from None

    def run_cell(
        self, code: str, *, timeout: float = CELL_TIMEOUT, allow_error: bool = False
    ) -> str:
        """Type ``code`` into the last cell (into a new one below if the last is not empty),
        press Shift+Enter, wait for it to finish and return the text its outputs show.
        A cell that raises fails the test unless ``allow_error``."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout
        from playwright.sync_api import expect

        self.wait_for_kernel_idle()
        index = self.cells.count() - 1
        cell = self.cells.nth(index)
        editor = cell.locator(".cm-content")
        editor.click()
        if self.page.evaluate(_CELL_SOURCE, [self.path, index]):
            self.page.keyboard.press("Escape")
            self.page.keyboard.press("b")  # command mode: insert a cell below
            index += 1
            cell = self.cells.nth(index)
            editor = cell.locator(".cm-content")
            editor.click()
        # Inserted as one input event, as a paste is: typed key by key, the editor would
        # indent every line after a colon a second time.
        self.page.keyboard.insert_text(code)
        try:
            self.page.wait_for_function(
                f"([path, index, code]) => ({_CELL_SOURCE})([path, index]) === code",
                arg=[self.path, index, code],
                timeout=5_000,
            )
        except PlaywrightTimeout:
            shown = self.page.evaluate(_CELL_SOURCE, [self.path, index])
            raise AssertionError(
                f"cell {index} of {self.path} holds {shown!r} after typing {code!r}"
            ) from None
        self.page.keyboard.press("Shift+Enter")
        try:
            expect(cell.locator(".jp-InputPrompt")).to_have_text(
                re.compile(r"\[\d+\]"), timeout=timeout
            )
        except AssertionError:
            raise AssertionError(
                f"cell {index} of {self.path} did not finish within {timeout / 1000:.0f} s "
                f"(kernel: {self.kernel_state()}); it shows:\n{self._output_text(cell)}"
            ) from None
        self.wait_for_kernel_idle()
        text = self._output_text(cell)
        outputs = self.page.evaluate(_CELL_OUTPUTS, [self.path, index])
        errors = [output for output in outputs if output["output_type"] == "error"]
        if errors and not allow_error:
            error = errors[0]
            raise AssertionError(
                f"cell {index} of {self.path} raised {error['ename']}: {error['evalue']}\n{text}"
            )
        return text

    def run_from(self, index: int, command: str) -> None:
        """Select cell ``index`` and run a notebook command on it, as a reader does with
        Run → Run Selected Cell and All Below (``notebook:run-all-below``) and the like."""
        self.page.evaluate(
            f"""async ([path, index, command]) => {{ {_PANEL_OF}
                panelOf(path).content.activeCellIndex = index;
                await window.jupyterapp.commands.execute(command);
            }}""",
            [self.path, index, command],
        )

    def save(self) -> None:
        """Save the notebook (File → Save), so a reloaded page shows what it shows now."""
        self.page.evaluate(
            f"async path => {{ {_PANEL_OF} await panelOf(path).context.save(); }}", self.path
        )

    def restart_kernel(self) -> None:
        """Kernel menu → Restart Kernel… → Restart, then wait for the kernel."""
        self.page.evaluate(_COUNT_RESTARTS, self.path)
        self.page.get_by_role("menuitem", name="Kernel", exact=True).click()
        self.page.get_by_role("menuitem", name=re.compile(r"^Restart Kernel…")).first.click()
        # The dialog's button reads "Restart"; its accessible name is this.
        self.page.get_by_role("button", name="Confirm Kernel Restart").click()
        self.page.wait_for_function("() => window.__testRestarts > 0", timeout=KERNEL_TIMEOUT)
        self.wait_for_kernel_idle()

    def change_kernel(self, kernel_name: str = "python3") -> None:
        """Kernel menu → Change Kernel… → start a new ``kernel_name`` kernel → Select: a new
        kernel, hence a new kernel connection. Waits for it to be idle."""
        before = self.page.evaluate(_KERNEL_ID, self.path)
        self.page.get_by_role("menuitem", name="Kernel", exact=True).click()
        self.page.get_by_role("menuitem", name=re.compile(r"^Change Kernel…")).first.click()
        # The dialog preselects the running kernel; its options' values are JSON.
        self.page.get_by_role("dialog").locator("select").select_option(
            value=json.dumps({"name": kernel_name}, separators=(",", ":"))
        )
        self.page.get_by_role("button", name="Select Kernel").click()
        self.page.wait_for_function(
            f"([path, before]) => ({_KERNEL_ID})(path) !== before",
            arg=[self.path, before],
            timeout=KERNEL_TIMEOUT,
        )
        self.wait_for_kernel_idle()

    @staticmethod
    def _output_text(cell: Any) -> str:
        return "\n".join(cell.locator(".jp-OutputArea-output").all_inner_texts()).strip()


@pytest.fixture
def open_another(page: Any, lab: LabServer) -> Callable[..., NotebookUI]:
    """``open_another(path, sources=None, mode="tab-after")``: open one more notebook in the
    same page (``mode``: where it goes, e.g. ``tab-after`` or ``split-right``) and wait for
    its kernel."""

    def open_(path: str, sources: list[str] | None = None, mode: str = "tab-after") -> NotebookUI:
        return _open_in_page(page, lab, path, sources, mode)

    return open_


def _open_in_page(
    page: Any, lab: LabServer, path: str, sources: list[str] | None, mode: str
) -> NotebookUI:
    lab.write_notebook(path, sources)
    return _open_in_loaded_lab(page, path, mode)


def _open_in_loaded_lab(page: Any, path: str, mode: str = "tab-after") -> NotebookUI:
    """Open the notebook at ``path`` in the JupyterLab ``page`` shows, as File → Open does,
    and wait for its kernel."""
    # The command's result is the widget: returned, Playwright would copy its whole object
    # graph out of the page (minutes on a loaded machine), so nothing is returned.
    page.evaluate(
        "([path, mode]) => window.jupyterapp.commands.execute('docmanager:open', "
        "{path, options: {mode}}).then(() => null)",
        [path, mode],
    )
    handle = page.wait_for_function(_PANEL_ID, arg=path, timeout=PAGE_TIMEOUT)
    notebook = NotebookUI(page=page, path=path, panel_id=str(handle.json_value()))
    notebook.cells.first.wait_for()
    notebook.wait_for_kernel_idle()
    return notebook


def _shows_lab(page: Any, lab: LabServer) -> bool:
    """Whether ``page`` shows a started JupyterLab of ``lab`` (not Notebook 7, not blank)."""
    if not page.url.startswith(f"{lab.url}/lab"):
        return False
    return bool(
        page.evaluate(
            "async () => window.jupyterapp?.name === 'JupyterLab'"
            " && (await window.jupyterapp.restored, true)"
        )
    )


def _open_notebook(
    page: Any,
    lab: LabServer,
    path: str,
    sources: list[str] | None = None,
    *,
    ui: str = "lab",
    write: bool = True,
) -> NotebookUI:
    """``open_notebook`` in ``page`` on ``lab``."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    if write:
        lab.write_notebook(path, sources)
    if ui == "lab" and _shows_lab(page, lab):
        return _open_in_loaded_lab(page, path)
    if ui == "notebook":  # Jupyter Notebook 7's page for one notebook
        page.goto(f"{lab.url}/notebooks/{quote(path)}")
    else:
        page.goto(f"{lab.url}/lab/tree/{quote(path)}?reset")
    try:
        handle = page.wait_for_function(_PANEL_ID, arg=path, timeout=PAGE_TIMEOUT)
    except PlaywrightTimeout:
        raise AssertionError(
            f"JupyterLab did not open {path} within {PAGE_TIMEOUT / 1000:.0f} s"
        ) from None
    notebook = NotebookUI(page=page, path=path, panel_id=str(handle.json_value()))
    notebook.cells.first.wait_for()
    notebook.wait_for_kernel_idle()
    return notebook


@pytest.fixture
def open_notebook(page: Any, lab: LabServer) -> Callable[..., NotebookUI]:
    """``open_notebook(path, sources=None, ui="lab", write=True)``: write the notebook under
    the server root (``write=False``: open the one there), open it in JupyterLab (a fresh
    workspace) or, with ``ui="notebook"``, in Jupyter Notebook 7, and wait for its kernel
    to be idle."""

    def open_(
        path: str, sources: list[str] | None = None, *, ui: str = "lab", write: bool = True
    ) -> NotebookUI:
        return _open_notebook(page, lab, path, sources, ui=ui, write=write)

    return open_
