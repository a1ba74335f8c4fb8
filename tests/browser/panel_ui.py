"""The agent panel as a person drives it in the browser tests: a scripted model in the
kernel, an ``%agent`` line, the panel it shows found by roles and accessible names, the
sidebar it docks in, and screenshots of its states for the README.

Test modules import these from here, never from one another.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import helpers
from axe_audit import THEMES, change_theme, lowest_contrast, violation_lines
from playwright.sync_api import expect

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "test-artifacts" / "screenshots"
# A Stop takes effect well within a second (benchmarks/panel.py measures it); 10× that tells
# a Stop from the work it stops, which runs 30 s or more in every Stop test, on any machine.
STOP_LIMIT_MS = 10_000

# The plan the helpers' scripted Planner submits, with a prerequisite for the table to show.
PLAN: dict[str, Any] = {**helpers.PLAN, "prerequisites": ["sales.csv in the notebook's folder"]}
LONG_TEXT = "The agent keeps **writing** so there is time to stop it. " * 300


def call(name: str, text: str = "", **arguments: Any) -> dict[str, Any]:
    return {"text": text, "tool_calls": [{"name": name, "input": arguments}]}


def step(number: int, status: str) -> dict[str, Any]:
    return {"name": "update_plan_step", "input": {"step_number": number, "status": status}}


def agent_notebook(
    open_notebook: Any,
    lab: Any,
    name: str,
    turns: list[dict[str, Any]],
    *,
    delay: float = 0.0,
    sources: list[str] | None = None,
    summaries: list[str] | None = None,
) -> Any:
    """Open ``name.ipynb`` with the extension loaded and ``m``, a scripted model (which
    answers compaction requests with ``summaries``)."""
    (lab.root / f"{name}.json").write_text(json.dumps(turns))
    notebook = open_notebook(f"{name}.ipynb", sources)
    notebook.run_cell(
        "%load_ext jupyter_agent\n"
        "from jupyter_agent import ScriptedModel\n"
        f"m = ScriptedModel('{name}.json', delay={delay}, chunk_size=4, "
        f"summaries={summaries or []!r})"
    )
    return notebook


def start(notebook: Any, line: str) -> Any:
    """Run an ``%agent`` line; return the panel it shows."""
    notebook.run_cell(line)
    panel = notebook.panel.locator(".ja-panel").last
    expect(panel.locator(".ja-transcript")).not_to_contain_text("Connecting to the kernel")
    return panel


def shot_path(name: str) -> Path:
    """Where the screenshot ``name`` goes (the folder made if need be)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    return SHOTS / name


def shoot(panel: Any, name: str) -> None:
    panel.screenshot(path=str(shot_path(name)))


def status(panel: Any) -> Any:
    return panel.get_by_role("status")


def stop_and_time(page: Any, panel: Any) -> float:
    """Click Stop; return the milliseconds until the status line says stopped."""
    panel.evaluate(
        """panel => {
          const status = panel.querySelector('.ja-status');
          const clock = window.__jaStop = { clicked: 0, stopped: 0 };
          panel.querySelector('button.ja-stop').addEventListener(
            'click', () => { clock.clicked = performance.now(); }, { capture: true, once: true });
          new MutationObserver((_, observer) => {
            if (status.textContent.startsWith('stopped')) {
              clock.stopped = performance.now();
              observer.disconnect();
            }
          }).observe(status, { childList: true, characterData: true, subtree: true });
        }"""
    )
    panel.get_by_role("button", name="Stop").click()
    page.wait_for_function("() => window.__jaStop.stopped > 0", timeout=3 * STOP_LIMIT_MS)
    return float(page.evaluate("() => window.__jaStop.stopped - window.__jaStop.clicked"))


def plan_button(panel: Any, name: str = "Execute plan") -> Any:
    """The plan card's button (the strip pinned above the transcript has its twin)."""
    return panel.get_by_role("region", name=re.compile(r"^Plan: ")).last.get_by_role(
        "button", name=name
    )


def send(panel: Any, text: str) -> None:
    panel.get_by_role("textbox", name="Message").fill(text)
    panel.get_by_role("button", name="Send").click()


def sidebar(page: Any) -> Any:
    return page.locator("#jupyter-agent-sidebar")


def open_from_palette(page: Any) -> None:
    page.keyboard.press("Control+Shift+C")
    search = page.locator(".jp-ModalCommandPalette .lm-CommandPalette-input")
    search.fill("Agent: Open panel")
    page.locator(".lm-CommandPalette-item", has_text="Agent: Open panel").first.click()
    expect(sidebar(page)).to_be_visible()


def open_sidebar(page: Any) -> None:
    """Open the agent's sidebar for the active notebook, as Agent: Open panel does (by
    the command itself: where a test is not about the palette, its keys are no concern)."""
    page.evaluate(
        "() => window.jupyterapp.commands.execute('jupyter-agent:open-panel').then(() => null)"
    )
    expect(sidebar(page)).to_be_visible()


def sidebar_width(page: Any, width: int) -> None:
    """Drag the handle between the main area and the right sidebar so the sidebar is
    ``width`` pixels wide (or its narrowest)."""
    handle = page.evaluate(
        """() => {
          const side = document.querySelector('#jp-right-stack').getBoundingClientRect();
          const handles = [...document.querySelectorAll('.lm-SplitPanel-handle')]
            .map(h => h.getBoundingClientRect())
            .filter(r => r.width > 0 && r.height > side.height / 2);
          handles.sort((a, b) => Math.abs(a.right - side.left) - Math.abs(b.right - side.left));
          const r = handles[0];
          return { x: r.left + r.width / 2, y: r.top + r.height / 2, right: side.right };
        }"""
    )
    page.mouse.move(handle["x"], handle["y"])
    page.mouse.down()
    page.mouse.move(handle["right"] - width, handle["y"], steps=8)
    page.mouse.up()


# Where a panel's state is shown for the Done-when screenshots of a change to it: under its
# cell, then in the sidebar at its default width (300 px) and a wider one.
PLACES = ("inline", "sidebar-300", "sidebar-500")


def in_every_place(page: Any, notebook: Any, name: str) -> list[str]:
    """Screenshots of ``notebook``'s agent panel as it is now, in each of :data:`PLACES` and
    both themes (``test-artifacts/screenshots/<name>-<place>-<theme>.png``), with axe-core
    and the contrast check run on each: returns what they found (empty when nothing).

    Each theme is set once (JupyterLab reloads its styles behind a splash at each change),
    then the panel is shown in each place: under its cell with the sidebar closed, then in
    the sidebar (the same panel, opened by its command) at each width. Afterwards the
    sidebar is back at 300 px and closed, the theme Light and the notebook current, so the
    test goes on as before."""
    found: list[str] = []
    try:
        for theme in THEMES:
            change_theme(page, theme)
            short = theme.split()[-1].lower()
            for place in PLACES:
                root, panel = _shown_in(page, notebook, place)
                root.screenshot(path=str(shot_path(f"{name}-{place}-{short}.png")))
                found += [f"{place} {line}" for line in violation_lines(page, root, theme)]
                ratio, where = lowest_contrast(panel)
                if ratio < 3:  # WCAG's floor for large text and controls
                    found.append(f"{place} {theme}: contrast {ratio:.2f} at {where}")
    finally:
        change_theme(page, THEMES[0])
        # Back to the sidebar's default width: wider, the notebook's toolbar folds its
        # kernel indicator away, and a later notebook opened with the sidebar would start
        # squeezed.
        if sidebar(page).is_visible():
            sidebar_width(page, 300)
        _close_sidebar(page, notebook)
    return found


def in_both_themes(page: Any, root: Any, name: str) -> list[str]:
    """``root`` as it is now, shot in each theme (``<name>-<theme>.png``) with axe-core
    run on it: what axe found (empty when nothing); the theme is Light again after."""
    found: list[str] = []
    try:
        for theme in THEMES:
            change_theme(page, theme)
            root.screenshot(path=str(shot_path(f"{name}-{theme.split()[-1].lower()}.png")))
            found += violation_lines(page, root, theme)
    finally:
        change_theme(page, THEMES[0])
    return found


def _shown_in(page: Any, notebook: Any, place: str) -> tuple[Any, Any]:
    """The panel shown in ``place`` of :data:`PLACES`: what to shoot, and the panel in it."""
    if place == "inline":
        _close_sidebar(page, notebook)
        root = notebook.panel.locator(".jp-OutputArea-output .ja-panel").last
        root.scroll_into_view_if_needed()
        return root, root
    root = sidebar(page)
    if not root.is_visible():
        open_sidebar(page)
    sidebar_width(page, int(place.split("-")[1]))
    panel = root.locator(".ja-panel").first
    expect(panel.locator(".ja-transcript")).not_to_contain_text("Connecting to the kernel")
    return root, panel


def _close_sidebar(page: Any, notebook: Any) -> None:
    page.evaluate(
        "id => { window.jupyterapp.shell.collapseRight(); window.jupyterapp.shell.activateById(id); }",
        notebook.panel_id,
    )
