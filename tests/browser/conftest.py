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
- ``browser`` (session or module, see ``browser_pages.browser_scope``): Debian's chromium through
  Python Playwright.
- ``page`` (function): the process's JupyterLab window (``lab_window``, as long-lived as
  ``browser``): JupyterLab stays loaded while each test opens its notebooks in it (a test
  on another server loads that one's), and after the test they are closed,
  their kernels shut down and the side panels put back, as a user's window lives (a test
  that changes the page otherwise undoes it). On failure a screenshot, the test's browser
  console and the server log tail land in ``test-artifacts/``.
- ``open_notebook`` (function): writes a notebook into the server root, opens it and
  waits for its kernel; the returned ``NotebookUI`` runs cells the way a person does
  (type into the cell editor, Shift+Enter) and reads what the page shows.
- ``collaborator`` (function): ``collaborator(name, path)``: another user (a browser
  context of their own) opens the notebook on ``collaborative_lab``, as ``open_notebook``.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import pytest
from browser_pages import (
    CHROMIUM,
    CHROMIUM_ARGS,
    EXPECT_TIMEOUT,
    REPORTS,
    LabWindow,
    browser_page,
    browser_scope,
    clear_window,
    failed,
    new_page,
    poll_on_a_timer,
    save_artifacts,
)
from lab_server import ROOT, LabServer, start_lab_server, stop_lab_server
from notebook_ui import NotebookUI, open_in_page, open_notebook_in

# --- the server ------------------------------------------------------------------------


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


@pytest.fixture(scope=browser_scope)
def browser() -> Iterator[Any]:
    """Debian's Chromium, for the session or for one module (``browser_scope``)."""
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=EXPECT_TIMEOUT)
    poll_on_a_timer()
    if not CHROMIUM.exists():
        subprocess.run([str(ROOT / "scripts" / "ensure-system-packages")], check=True)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


# A hook works only here: it keeps each phase's report on the test, for ``failed``.
@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    item.stash.setdefault(REPORTS, {})[report.when] = report
    return report


@pytest.fixture(scope=browser_scope)
def lab_window(browser: Any) -> Iterator[LabWindow]:
    """One browser page for the tests of ``browser``'s lifetime. Loading JupyterLab costs
    Chromium about 10 CPU-seconds and the server 2; opening a notebook in a loaded
    JupyterLab, about 2 and 1 (measured on this 2-core machine)."""
    context, page, console = new_page(browser)
    try:
        yield LabWindow(page, console)
    finally:
        context.close()


@pytest.fixture
def page(
    browser: Any, lab: LabServer, lab_window: LabWindow, request: pytest.FixtureRequest
) -> Iterator[Any]:
    window, start = lab_window, len(lab_window.console)
    try:
        yield window.page
    finally:
        if failed(request.node):
            save_artifacts(window.page, window.console[start:], lab, request, "")
        clear_window(window.page)


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
            page = pages.enter_context(browser_page(browser, collaborative_lab, request, name))
            return open_notebook_in(page, collaborative_lab, path, sources, write=write)

        yield open_


# --- a notebook in the page --------------------------------------------------------------


@pytest.fixture
def open_another(page: Any, lab: LabServer) -> Callable[..., NotebookUI]:
    """``open_another(path, sources=None, mode="tab-after")``: open one more notebook in the
    same page (``mode``: where it goes, e.g. ``tab-after`` or ``split-right``) and wait for
    its kernel."""

    def open_(path: str, sources: list[str] | None = None, mode: str = "tab-after") -> NotebookUI:
        return open_in_page(page, lab, path, sources, mode)

    return open_


@pytest.fixture
def open_notebook(page: Any, lab: LabServer) -> Callable[..., NotebookUI]:
    """``open_notebook(path, sources=None, ui="lab", write=True)``: write the notebook under
    the server root (``write=False``: open the one there), open it in JupyterLab (a fresh
    workspace) or, with ``ui="notebook"``, in Jupyter Notebook 7, and wait for its kernel
    to be idle."""

    def open_(
        path: str, sources: list[str] | None = None, *, ui: str = "lab", write: bool = True
    ) -> NotebookUI:
        return open_notebook_in(page, lab, path, sources, ui=ui, write=write)

    return open_
