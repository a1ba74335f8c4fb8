"""Headless Chromium and its pages for the browser tests: how it is launched and how long it
lives (``browser_scope``), Playwright's waits polling on a timer, fresh pages with their
console recorded, the shared JupyterLab window cleared between tests, and a failed test's
screenshot, console and server log in ``test-artifacts/``.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal

import pytest
from lab_server import ROOT, LabServer

ARTIFACTS = ROOT / "test-artifacts"
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
PAGE_TIMEOUT = 60_000  # ms: the page loading and showing a notebook
EXPECT_TIMEOUT = 30_000  # ms: the page showing what an expect() waits for (Playwright: 5 s)

BROWSER_TESTS = Path(__file__).resolve().parent
"""tests/browser: the folder of the browser tests (and of this module)."""


def browser_scope(fixture_name: str, config: pytest.Config) -> Literal["session", "module"]:
    """How long Chromium and its window live: the whole session where it runs browser tests
    alone (``scripts/run-tests`` runs them so), else one test module. While Playwright's
    sync API is up, its event loop is the thread's running loop (asyncio's marker is per
    thread, and Playwright switches greenlets inside ``run_until_complete``), so an async
    test run meanwhile fails with "cannot be called from a running event loop": browser
    test modules hold none, other modules do. Loading JupyterLab once per process rather
    than per module saves the browser job about 15 CPU-seconds a module."""
    start = config.invocation_params.dir
    chosen = [Path(start, arg.split("::")[0]).resolve() for arg in config.args]
    return (
        "session" if chosen and all(p.is_relative_to(BROWSER_TESTS) for p in chosen) else "module"
    )


POLL_MS = 100
"""How often ``page.wait_for_function`` checks its condition."""


def poll_on_a_timer() -> None:
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


REPORTS = pytest.StashKey[dict[str, pytest.TestReport]]()
"""A test's reports by phase (setup, call, teardown), as conftest's
``pytest_runtest_makereport`` hook stores them on the test item."""


def failed(node: pytest.Item) -> bool:
    return any(report.failed for report in node.stash.get(REPORTS, {}).values())


VIEWPORT = {"width": 1400, "height": 900}

# The editors' caret does not blink: blinking, it is a CSS animation that keeps Chromium
# painting about 8 % of a core for as long as an editor has the focus (measured on this
# 2-core machine), which is most of a test that typed into a cell.
STEADY_CARET = """document.addEventListener('DOMContentLoaded', () => {
  const style = document.createElement('style');
  style.textContent = '.cm-cursorLayer { animation: none !important; }';
  document.head.append(style);
});"""


def new_page(browser: Any) -> tuple[Any, Any, list[str]]:
    """A page in a fresh browser context (a user of its own), and the list its console
    messages and uncaught errors are appended to."""
    context = browser.new_context(viewport=VIEWPORT)
    context.add_init_script(STEADY_CARET)
    context.set_default_timeout(PAGE_TIMEOUT)
    page = context.new_page()
    console: list[str] = []
    page.on("console", lambda message: console.append(f"[{message.type}] {message.text}"))
    page.on("pageerror", lambda error: console.append(f"[pageerror] {error}"))
    return context, page, console


# What every thread of each kernel of the page is doing, and where its agent and panel
# stand (the run's state, the panel's status, a flush pending or not, entries not sent),
# into the kernel's stderr (the server log, saved beside): a kernel whose agent thread
# hangs still runs this on its main thread. Bounded: a kernel that answers nothing is left
# after two seconds.
_KERNEL_STATE = """\
import faulthandler, sys, time
faulthandler.dump_traceback(sys.__stderr__, all_threads=True)
try:
    from jupyter_agent.jupyter.kernel.agent import _AGENTS
    for ka in list(_AGENTS.values()):
        a, p = ka.agent, ka.panel
        h = a.handle if a is not None else None
        print('agent:', a and a.state, h and (h.done, h.stop_reason),
              'subscriber failures', a and list(a.bus.failures), file=sys.__stderr__)
        if p is not None:
            t = p.transcript
            print('panel:', p.status, p.busy, p.detail, 'flush', p._flush_handle,
                  'pending', len(t.pending), 'for', time.monotonic() - t.pending_since,
                  'views', p.views_seen, file=sys.__stderr__)
            print('panel received:', [(round(time.monotonic() - at, 1), what)
                  for at, what in p.received], file=sys.__stderr__)
except Exception as error:
    print('no agent state:', repr(error), file=sys.__stderr__)
"""
_DUMP_KERNEL_THREADS = (
    """async () => {
  const code = """
    + json.dumps(_KERNEL_STATE)
    + """;
  const kernels = Array.from(window.jupyterapp?.serviceManager.sessions.running() ?? [])
    .map(session => window.jupyterapp.serviceManager.kernels.connectTo({ model: session.kernel }));
  await Promise.race([
    Promise.all(kernels.map(k => k.requestExecute({ code, silent: true }).done)),
    new Promise(resolve => setTimeout(resolve, 2000)),
  ]);
  for (const kernel of kernels) kernel.dispose();
}"""
)


def save_artifacts(
    page: Any, console: list[str], lab: LabServer, request: pytest.FixtureRequest, name: str
) -> None:
    """A failed test's screenshot, browser console and server log (with each kernel's
    thread stacks), in test-artifacts/ (``name`` tells a test's pages apart)."""
    ARTIFACTS.mkdir(exist_ok=True)
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.nodeid + (name and f"-{name}"))
    with contextlib.suppress(Exception):
        page.evaluate(_DUMP_KERNEL_THREADS)
    try:
        page.screenshot(path=str(ARTIFACTS / f"{stem}.png"), full_page=True)
    except Exception as error:
        console = [*console, f"(no screenshot: {error})"]
    (ARTIFACTS / f"{stem}.console.txt").write_text("\n".join(console))
    log = lab.log_tail(200)
    (ARTIFACTS / f"{stem}.server.txt").write_text(log)
    # Where only the test report survives (CI), the log's end is in it too: pytest shows
    # a failed test's teardown output, and this runs in its page fixture's teardown.
    print("--- server log, last 60 lines (kernel threads and agent state) ---")
    print("\n".join(log.splitlines()[-60:]))


@contextmanager
def browser_page(
    browser: Any, lab: LabServer, request: pytest.FixtureRequest, name: str = ""
) -> Iterator[Any]:
    """A page in a fresh browser context, closed after the test; on failure its
    screenshot, console and the server log land in test-artifacts/."""
    context, page, console = new_page(browser)
    try:
        yield page
    finally:
        if failed(request.node):
            save_artifacts(page, console, lab, request, name)
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


# Closes what a test opened, as a user closing every tab without saving: the notebooks
# (disposed: closing asks about unsaved changes) and their kernels; then puts the side
# panels as a fresh JupyterLab shows them (the file browser open on the left, the right
# closed). The main area, emptied, shows JupyterLab's Launcher, which the next notebook
# opened closes (``notebook_ui.open_in_loaded_lab``). False where the page is not a
# JupyterLab the tests loaded (a test reloaded it, and it may still be reopening the
# notebooks of its URL and its last layout: the next test loads it), or a dialog stays open.
_CLEAR_WINDOW = """async () => {
  const app = window.jupyterapp;
  if (!app || app.name !== 'JupyterLab' || !window.__jaLoadedForTests) return false;
  for (const widget of Array.from(app.shell.widgets('main'))) widget.dispose();
  await app.serviceManager.sessions.shutdownAll();
  app.shell.activateById('filebrowser');
  app.shell.collapseRight();
  return document.querySelector('.jp-Dialog') === null;
}"""


def clear_window(page: Any) -> None:
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
