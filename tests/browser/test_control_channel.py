"""The panel's clicks reach the kernel while the user's cell runs, in real JupyterLab.

The lab extension sends what the panel sends over a kernel subshell of its own
(``js/src/control.ts``), which ipykernel reads on a thread of its own while the main shell
runs a cell. A probe in the kernel records, for each message the panel widget receives,
the receiving thread and the time; a click during ``time.sleep(8)`` must arrive during the
sleep and off the main thread, and the panel must show its effect before the cell ends.
A view whose kernel the extension does not know sends through its widget comm as before
and says, in one accessible line, that its buttons wait for a running cell.
"""

from __future__ import annotations

import json
import re
from typing import Any

from axe_audit import AXE, violation_lines
from panel_ui import agent_notebook, call, open_from_palette, sidebar, start
from playwright.sync_api import expect

SLEEP = 8  # s: long enough to click and see the answer well inside it

PROBE = """\
import threading, time
from jupyter_agent.jupyter.kernel.agent import kernel_agent
RECORD = []
p = kernel_agent().ensure_panel()
p.on_msg(lambda w, content, buffers: RECORD.append(
    (threading.current_thread().name, time.monotonic(), content.get('type'), content.get('name'))))
print(p.widget_id)"""

SLEEPER = f"""\
import time
t0 = time.monotonic()
print('sleeping', flush=True)
time.sleep({SLEEP})
t1 = time.monotonic()"""

RECORDED = """\
import json
import re
print(json.dumps({'main': threading.main_thread().name, 'record': RECORD,
                  't0': globals().get('t0'), 't1': globals().get('t1')}))"""

# The click's time and the time the role badge shows its effect, by the page's clock.
WATCH_ROLE = """panel => {
  const badge = panel.querySelector('.ja-role-badge');
  const clock = window.__jaRole = { clicked: performance.now(), shown: 0 };
  new MutationObserver((_, observer) => {
    if (badge.textContent === 'actor') {
      clock.shown = performance.now();
      observer.disconnect();
    }
  }).observe(badge, { childList: true, characterData: true, subtree: true });
}"""


def start_cell(notebook: Any, code: str) -> Any:
    """Type ``code`` into a new last cell and run it (Shift+Enter) without waiting for it;
    return the cell."""
    notebook.wait_for_kernel_idle()
    index = notebook.cells.count() - 1
    editor = notebook.cells.nth(index).locator(".cm-content")
    editor.click()
    if editor.inner_text().strip():
        notebook.page.keyboard.press("Escape")
        notebook.page.keyboard.press("b")  # command mode: insert a cell below
        index += 1
        notebook.cells.nth(index).locator(".cm-content").click()
    notebook.page.keyboard.insert_text(code)
    notebook.page.keyboard.press("Shift+Enter")
    return notebook.cells.nth(index)  # not `.last`: Shift+Enter adds a cell below


def recorded(notebook: Any) -> dict[str, Any]:
    shown: dict[str, Any] = json.loads(notebook.run_cell(RECORDED))
    return shown


def click_during_a_sleep(notebook: Any, panel: Any, page: Any) -> tuple[str, float, float]:
    """Choose the Actor role while a cell sleeps; once the panel shows it, check the cell
    still runs. Returns the thread that read ``set_role``, how far into the sleep (s) and
    the milliseconds from the click to the role badge showing it."""
    notebook.run_cell("RECORD.clear()")
    cell = start_cell(notebook, SLEEPER)
    expect(cell.locator(".jp-OutputArea-output")).to_have_text("sleeping")
    panel.evaluate(WATCH_ROLE)
    panel.get_by_role("combobox", name="Role").select_option("actor")
    page.wait_for_function("() => window.__jaRole.shown > 0", timeout=2 * SLEEP * 1000)
    answered_ms = float(page.evaluate("() => window.__jaRole.shown - window.__jaRole.clicked"))
    expect(cell.locator(".jp-InputPrompt")).to_have_text("[*]:", timeout=1)  # still asleep

    shown = recorded(notebook)
    t0, t1 = shown["t0"], shown["t1"]
    commands = [r for r in shown["record"] if r[2] == "command" and r[3] == "set_role"]
    assert len(commands) == 1, shown["record"]
    thread, received, _, _ = commands[0]
    assert t0 < received < t1, (
        f"set_role reached the kernel {received - t0:.2f} s after the sleep began "
        f"(it lasted {t1 - t0:.2f} s)"
    )
    assert thread != shown["main"], f"set_role was read on the main thread ({thread})"
    return thread, received - t0, answered_ms


def test_a_click_during_a_busy_cell_reaches_the_kernel_on_the_agents_subshell(
    open_notebook: Any, lab: Any, page: Any
) -> None:
    notebook = agent_notebook(open_notebook, lab, "control", [])
    panel = start(notebook, "%agent --model $m")
    role = panel.get_by_role("combobox", name="Role")
    expect(role).to_have_value("planner")
    assert notebook.run_cell(PROBE), "the panel has no widget id"
    # The kernel has subshells (ipykernel 7): no line says otherwise.
    expect(panel.locator(".ja-no-subshell")).to_be_hidden()
    thread, into, answered_ms = click_during_a_sleep(notebook, panel, page)
    print(
        f"set_role read on {thread!r} {into:.2f} s into the {SLEEP} s sleep; "
        f"the badge showed it {answered_ms:.0f} ms after the click"
    )
    # A cell changes the panel (a message from the main shell on its comm; ipykernel 7.4
    # would route the comm's next messages there): clicks still go over the subshell.
    assert notebook.run_cell("%agent role planner") == "Role: planner"
    expect(role).to_have_value("planner")
    click_during_a_sleep(notebook, panel, page)


def test_a_view_the_extension_cannot_route_says_its_buttons_wait_and_is_accessible(
    open_notebook: Any, lab: Any, page: Any
) -> None:
    assert AXE.is_file(), "axe-core is a dev dependency of js/: run npm install in js/"
    notebook = agent_notebook(open_notebook, lab, "nosubshell", [])
    panel = start(notebook, "%agent --model $m")
    notebook.run_cell(PROBE)
    # A kernel id the extension knows no notebook of (as in a frontend without it).
    notebook.run_cell("p.kernel_id = 'not-a-kernel-of-this-page'")
    note = panel.locator(".ja-no-subshell")
    expect(note).to_be_hidden()
    panel.get_by_role("combobox", name="Role").select_option("actor")
    expect(note).to_be_visible()
    expect(note).to_have_text(
        "This kernel or frontend has no subshells: "
        "Stop and the panel's buttons take effect when a running cell ends."
    )
    expect(panel.locator(".ja-role-badge")).to_have_text("actor")
    # Through the widget's comm (JupyterLab's own, which may use a subshell of its own).
    shown = recorded(notebook)
    commands = [r for r in shown["record"] if r[2] == "command" and r[3] == "set_role"]
    assert len(commands) == 1, shown["record"]
    assert violation_lines(page, panel, "JupyterLab Light") == []


def test_the_sidebar_shows_the_agent_at_once_while_a_cell_runs(
    open_notebook: Any, lab: Any, page: Any
) -> None:
    """A view of the panel has spoken through the control channel, so the extension knows
    the kernel's panel: "Agent: Open panel" docks it without asking the busy kernel."""
    notebook = agent_notebook(open_notebook, lab, "sidebar-busy", [])
    panel = start(notebook, "%agent --model $m")
    expect(panel.get_by_role("combobox", name="Role")).to_have_value("planner")
    cell = start_cell(notebook, SLEEPER)
    expect(cell.locator(".jp-OutputArea-output")).to_have_text("sleeping")
    open_from_palette(page)
    side = sidebar(page).locator(".ja-panel")
    # At the sidebar's width the role picker is in the ⋯ menu.
    side.get_by_role("button", name="Settings and sessions").click(timeout=3_000)
    expect(side.get_by_role("combobox", name="Role")).to_have_value("planner", timeout=3_000)
    expect(cell.locator(".jp-InputPrompt")).to_have_text("[*]:", timeout=1)  # still asleep
    # The docked view works during the cell too: its click reaches the agent.
    side.get_by_role("combobox", name="Role").select_option("actor")
    expect(panel.locator(".ja-role-badge")).to_have_text("actor", timeout=3_000)
    expect(cell.locator(".jp-InputPrompt")).to_have_text("[*]:", timeout=1)
    notebook.wait_for_kernel_idle()


def test_a_long_cell_the_agent_runs_is_background_work(
    open_notebook: Any, lab: Any, page: Any
) -> None:
    """In JupyterLab: the agent runs a synchronous 8-second cell with a 1-second window;
    run_cell says "still running", the agent reads the notebook through the frontend while
    the cell runs, then waits for the cell."""
    notebook = agent_notebook(
        open_notebook,
        lab,
        "long-cell",
        [
            call("run_cell", cell_id="cell-0", wait=1),
            call("read_notebook"),
            call("wait_for_cell", cell_id="cell-0"),
            call("task_complete", summary="It ran."),
        ],
        sources=["import time\nprint('started', flush=True)\ntime.sleep(8)\nprint('slept')", ""],
    )
    panel = start(notebook, "h = %agent act --model $m Run the slow cell")
    cards = panel.get_by_role("region", name=re.compile(r"^Approval: "))
    # run_cell asks; wait_for_cell does not (waiting for the agent's own cell runs no code)
    cards.first.get_by_role("button", name="Allow", exact=True).click()
    expect(panel.get_by_role("status")).to_have_text("completed", timeout=60_000)
    results = json.loads(
        notebook.run_cell(
            "import json\nprint(json.dumps([r.text for m in h.history for r in m.tool_results]))"
        )
    )
    ran, read, waited = results[0], results[1], results[2]
    assert ran.startswith("Cell cell-0 is still running ("), ran
    assert "started" in ran
    assert re.search(r"── 1 · cell-0 · code \[[ *]\] · running", read), read
    assert waited.startswith("Cell cell-0 ran [") and "slept" in waited, waited
