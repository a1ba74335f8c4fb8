"""The tutorials, each run once, top to bottom, where users meet them: in real JupyterLab
(headless Chromium) with our extension, on the real-model path.

With ANTHROPIC_API_KEY set a tutorial uses Claude. No real API is reachable here, so the
lab server's kernels (and any kernel a tutorial starts itself) get a key and the loopback
Messages API server of this module as ``ANTHROPIC_BASE_URL``, which answers with the turns
of the tutorial's own replay script, in order: the real ``anthropic`` client, streaming, a
Stop closing a stream mid-way. The agent panel renders as a widget and ``%agent`` is bound
to the open notebook, live. The cells marked ``# NBVAL_CHECK_OUTPUT`` must print what is
stored (sanitised as ``tests/nbval_sanitize.cfg`` says): the same text on a real client as
on the offline replay the outputs were stored from. The quickstart's panel must show the
plan, its steps done, the stopped run and the live notebook, while the display under each
earlier ``%agent`` cell became the static record of its own step.
"""

from __future__ import annotations

import configparser
import inspect
import json
import os
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from playwright.sync_api import expect

from jupyter_agent.models import scripted
from jupyter_agent.models.scripted import ScriptedModel, turn_content
from jupyter_agent.testing import MessagesServer, Reply

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
SHOTS = ROOT / "test-artifacts" / "screenshots"
TUTORIALS = sorted(p.name for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
CHECK = "# NBVAL_CHECK_OUTPUT"
REPLAY_CHUNK: int = inspect.signature(ScriptedModel).parameters["chunk_size"].default
"""Text streamed in the offline replay's pieces, so a checked cell that counts the stream's
events prints what the replay printed."""
REPLAY_MODEL = f"scripted — {scripted.LABEL}"
"""How a printed run names the offline replay's model (the stored outputs were made so)."""


# --- the model API the kernels talk to -----------------------------------------------------


def replies(script: Path) -> list[Reply]:
    """Every part of a replay script, in file order, as Messages API replies: the same
    content blocks the scripted model would stream."""
    out = []
    data = json.loads(script.read_text(encoding="utf-8"))
    for turn in (t for part in data.values() if isinstance(part, list) for t in part):
        blocks = [block.to_api() for block in turn_content(turn)]
        long = len(turn.get("text", "")) > 500  # streamed slowly, so a Stop lands mid-way
        out.append(
            Reply(
                blocks,
                "tool_use" if turn.get("tool_calls") else "end_turn",
                chunk_size=8 if long else REPLAY_CHUNK,
                delay=0.02 if long else 0.0,
            )
        )
    return out


class TutorialModel:
    """Answers one tutorial's requests with its script's turns in order; a request to
    compact the conversation (a long tutorial's small window) is answered apart with a
    summary, as a model would."""

    def __init__(self, answers: list[Reply]) -> None:
        self.answers = list(answers)
        self.left = list(answers)
        self.summaries = 0

    def __call__(self, body: dict[str, Any]) -> Reply:
        last = body["messages"][-1]["content"][-1]
        if last.get("type") == "text" and last["text"].startswith("[Compaction"):
            self.summaries += 1
            return Reply([{"type": "text", "text": "Summary of the work so far."}])
        return self.left.pop(0)


@pytest.fixture(scope="module")
def model_api() -> Iterator[MessagesServer]:
    with MessagesServer() as server:
        yield server


@pytest.fixture(scope="module")
def lab(lab_with_env: Callable[..., Any], model_api: MessagesServer) -> Any:
    """This module's JupyterLab: its kernels, and any a tutorial starts, have a key and
    talk to ``model_api`` (the real-model path)."""
    env = {k: v for k, v in os.environ.items() if k != "JUPYTER_AGENT_MODEL"}
    env["ANTHROPIC_API_KEY"] = "sk-ant-tutorial-test"
    env["ANTHROPIC_BASE_URL"] = model_api.url
    return lab_with_env(env)


@pytest.fixture
def tutorial_model(model_api: MessagesServer) -> Callable[[str], TutorialModel]:
    """``tutorial_model(name)``: the API answers with tutorial ``name``'s script from now."""

    def use(name: str) -> TutorialModel:
        model = TutorialModel(replies(NOTEBOOKS / name.replace(".ipynb", ".replay.json")))
        model_api.requests.clear()
        model_api.responder = model
        return model

    return use


def served_the_whole_script(server: MessagesServer, model: TutorialModel, stops: int) -> str:
    """Every turn of the script was asked for and no more (the tutorial went all the way
    through), on Claude, and ``stops`` streams were closed mid-way by a Stop; returns the
    model's name."""
    server.wait_idle(timeout=30)
    served = list(server.requests)
    assert not server.errors, server.errors
    assert len(served) - model.summaries == len(model.answers)
    assert [r.outcome for r in served].count("disconnected") == stops
    assert all(r.body["model"].startswith("claude") for r in served)
    return str(served[0].body["model"])


# --- the notebook in the page --------------------------------------------------------------

_CELLS = """path => Array.from(window.jupyterapp.shell.widgets('main'))
  .find(w => w.context?.path === path && w.content?.widgets !== undefined)
  .content.widgets"""

_ALL_RAN = f"""path => {{
  const cells = ({_CELLS})(path);
  const panel = Array.from(window.jupyterapp.shell.widgets('main'))
    .find(w => w.context?.path === path && w.content?.widgets !== undefined);
  return panel.sessionContext.session?.kernel?.status === 'idle' && cells.every(
    cell => cell.model.type !== 'code' || cell.model.executionCount !== null);
}}"""


_RAN_OR_RAISED = f"""path => ({_ALL_RAN})(path) || ({_CELLS})(path).some(
  cell => cell.model.type === 'code'
    && cell.model.toJSON().outputs.some(output => output.output_type === 'error'))"""


def _sanitisers() -> list[tuple[re.Pattern[str], str]]:
    config = configparser.ConfigParser()
    config.read(ROOT / "tests" / "nbval_sanitize.cfg")
    return [
        (re.compile(s["regex"]), s["replace"]) for s in map(config.__getitem__, config.sections())
    ]


SANITISERS = _sanitisers()


def stdout(outputs: list[Any]) -> str:
    text = "".join(o.get("text", "") for o in outputs if o.get("name") == "stdout")
    for pattern, replacement in SANITISERS:
        text = pattern.sub(replacement, text)
    return text


def assert_outputs_as_stored(page: Any, name: str, stored: Any, model: str) -> None:
    """No cell of the open notebook raised, and each checked output is the stored one (which
    names the offline replay where a model is named; here it is ``model``)."""
    ran = page.evaluate(f"path => ({_CELLS})(path).map(cell => cell.model.toJSON())", name)
    assert len(ran) == len(stored.cells)
    errors = [o for cell in ran for o in cell.get("outputs", []) if o["output_type"] == "error"]
    assert not errors, errors
    assert "Scripted replay" not in json.dumps([cell.get("outputs") for cell in ran])
    checked = 0
    for now, before in zip(ran, stored.cells, strict=True):
        if now["cell_type"] == "code" and before.source.startswith(CHECK):
            expected = stdout(before.outputs).replace(REPLAY_MODEL, model)
            assert stdout(now["outputs"]) == expected, before.source
            checked += 1
    assert checked == sum(c.source.startswith(CHECK) for c in stored.cells) >= 3


def open_tutorial(name: str, open_notebook: Any, lab: Any, page: Any) -> tuple[Any, Any]:
    """A fresh copy of tutorial ``name`` open in JupyterLab, its outputs cleared."""
    script = name.replace(".ipynb", ".replay.json")
    for file in (name, script):
        shutil.copy(NOTEBOOKS / file, lab.root / file)
    stored = nbformat.read(NOTEBOOKS / name, as_version=4)
    notebook = open_notebook(name, write=False)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
    return notebook, stored


_NOT_RAN = f"""path => ({{
  kernel: Array.from(window.jupyterapp.shell.widgets('main'))
    .find(w => w.context?.path === path && w.content?.widgets !== undefined)
    .sessionContext.session?.kernel?.status,
  notRun: ({_CELLS})(path).map((cell, i) => [i, cell.model])
    .filter(([i, m]) => m.type === 'code' && m.executionCount === null)
    .map(([i, m]) => i + ': ' + m.sharedModel.getSource().split('\\n')[0].slice(0, 60)),
}})"""


_START_RUN_ALL = """() => {
  window.__testRunAll = 'running';
  window.jupyterapp.commands.execute('notebook:run-all-cells').then(
    ran => (window.__testRunAll = `done: ${ran}`),
    error => (window.__testRunAll = `error: ${error}`));
}"""

# The kernel connection's requests still waiting for their reply or idle status (a private
# map of @jupyterlab/services, read only to explain a failure).
_PENDING_REQUESTS = """path => {
  const kernel = Array.from(window.jupyterapp.shell.widgets('main'))
    .find(w => w.context?.path === path && w.content?.widgets !== undefined)
    .sessionContext.session?.kernel;
  return Array.from(kernel?._futures?.values() ?? []).map(future =>
    `${future.msg.header.msg_type} ${(future.msg.content.code ?? '').slice(0, 60)}`);
}"""


def run_all(page: Any, path: str) -> None:
    """Run → Run All Cells, as a reader would, and wait until every cell ran and Run All
    itself finished (JupyterLab resolves it once every cell's request got its reply); if
    it does not, say which requests the kernel left unanswered."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.evaluate(_START_RUN_ALL)  # not awaited: a page's evaluate has no time bound
    wait_until_all_ran(page, path)
    try:
        page.wait_for_function("() => window.__testRunAll !== 'running'", timeout=60_000)
    except PlaywrightTimeout:
        pending = page.evaluate(_PENDING_REQUESTS, path)
        raise AssertionError(
            f"every cell of {path} ran, but Run All did not finish; unanswered: {pending}"
        ) from None
    assert page.evaluate("() => window.__testRunAll") == "done: true"


def wait_until_all_ran(page: Any, path: str) -> None:
    """Wait for every code cell to have run and the kernel to be idle; if they do not, say
    which cells never ran and what the kernel was doing."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(_ALL_RAN, arg=path, timeout=180_000)
    except PlaywrightTimeout:
        state = page.evaluate(_NOT_RAN, path)
        raise AssertionError(f"{path} did not finish running within 180 s: {state}") from None


# A whole tutorial (the wait for all its cells is 180 s) on a loaded runner; the quickstart,
# often a worker's first test, took 111 s with the lab's first build check in it.
@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", TUTORIALS)
def test_a_tutorial_runs_top_to_bottom_in_jupyterlab(
    name, open_notebook, lab, page, model_api, tutorial_model
):
    model = tutorial_model(name)
    # Edit → Clear Outputs of All Cells, then Run → Run All Cells, as a reader would.
    notebook, stored = open_tutorial(name, open_notebook, lab, page)
    run_all(page, notebook.path)

    # The one run the tutorials stop (the quickstart's) closed its stream mid-way.
    claude = served_the_whole_script(model_api, model, stops=name == "01_quickstart.ipynb")
    assert_outputs_as_stored(page, name, stored, claude)

    if name == "01_quickstart.ipynb":
        # The panel rendered as a widget: the plan as a table, both steps done, the run
        # that was stopped and the one after it; and the agent works on this notebook live.
        panel = notebook.panel.locator(".ja-panel").first
        rows = panel.get_by_role("table").first.locator("tbody tr")
        expect(rows).to_have_count(2)
        expect(rows.nth(0).locator(".ja-step-status")).to_have_text("done")
        expect(rows.nth(1).locator(".ja-step-status")).to_have_text("done")
        # Executed from code: the button says so too (a click would change nothing).
        plan = panel.get_by_role("region", name="Plan").first
        expect(plan.get_by_role("button", name="Execute plan")).to_be_disabled()
        expect(panel).to_contain_text("South leads: 216.00 in revenue.")
        expect(panel.locator(".ja-stopped")).to_have_text(["■ Stopped by the user."])
        expect(panel.locator(".ja-notebook")).to_contain_text("live in JupyterLab")
        # A long transcript scrolls; it never squeezes a card (or any entry) shut.
        squeezed = panel.locator(".ja-transcript").evaluate(
            """log => Array.from(log.children)
                 .filter(entry => entry.scrollHeight > entry.clientHeight + 1)
                 .map(entry => entry.className + ': ' + entry.textContent.slice(0, 40))"""
        )
        assert squeezed == []
        SHOTS.mkdir(parents=True, exist_ok=True)
        panel.screenshot(path=str(SHOTS / "quickstart.png"))

        # Each step's cell shows that step: the display under "1. Plan" became the record
        # of what happened while it was the live panel (the plan, once, and its execution),
        # not a second live copy showing the end of the session. One panel stays live.
        expect(notebook.panel.locator(".ja-panel")).to_have_count(1)
        index = {cell.get("id"): i for i, cell in enumerate(stored.cells)}
        plan_cell = notebook.cells.nth(index["plan"])
        plan_cell.scroll_into_view_if_needed()
        record = plan_cell.locator(".ja-record")
        expect(record).to_have_count(1)
        expect(plan_cell.locator(".ja-panel")).to_have_count(0)
        expect(record.locator("table")).to_have_count(1)
        expect(record.locator("table tbody tr")).to_have_count(2)
        expect(record).to_contain_text("Find which region brings the most revenue")
        expect(record).to_contain_text("South brings the most revenue")
        expect(record).not_to_contain_text("Stopped by the user")
        expect(record).not_to_contain_text("Just the headline")
        stopped = notebook.cells.nth(index["long-run"]).locator(".ja-record")
        expect(stopped).to_contain_text("Stopped by the user.")
        expect(stopped).not_to_contain_text("Find which region")
        # The plan is shown once: the cell after it prints no markdown table.
        after = notebook.cells.nth(index["plan-result"])
        expect(after.locator(".jp-OutputArea-output")).not_to_contain_text("|---|")
        plan_cell.screenshot(path=str(SHOTS / "quickstart-run-all.png"))


@pytest.mark.parametrize("allow_in_panel", [False, True], ids=["running", "completed"])
def test_the_quickstart_follows_a_click_on_execute_plan(
    allow_in_panel, open_notebook, lab, page, model_api, tutorial_model
):
    """A reader who clicks the panel's Execute plan (and perhaps Allow too) and then runs
    the next cells: the cell that executes the plan follows the run the click started,
    and the tutorial ends as stored (one execution of the plan, no "still running")."""
    name = "01_quickstart.ipynb"
    model = tutorial_model(name)
    notebook, stored = open_tutorial(name, open_notebook, lab, page)
    execute = next(i for i, c in enumerate(stored.cells) if "execute_plan()" in c.source)

    notebook.run_from(execute, "notebook:run-all-above")  # up to the plan
    panel = notebook.panel.locator(".ja-panel").first
    rows = panel.get_by_role("table").first.locator("tbody tr")
    expect(rows).to_have_count(2, timeout=60_000)
    notebook.wait_for_kernel_idle()
    # The plan card's button (the strip pinned above the transcript has its twin).
    plan = panel.get_by_role("region", name="Plan").first
    plan.get_by_role("button", name="Execute plan").click()
    # The Actor's run has begun: it asks before its shell command.
    allow = panel.get_by_role("button", name="Allow", exact=True)
    expect(allow).to_be_visible()
    if allow_in_panel:
        allow.click()
        expect(panel.locator(".ja-completed").last).to_contain_text("South brings the most")
        notebook.wait_for_kernel_idle()

    notebook.run_from(execute, "notebook:run-all-below")  # the cell that executes the plan, and on
    page.wait_for_function(_RAN_OR_RAISED, arg=notebook.path, timeout=90_000)
    claude = served_the_whole_script(model_api, model, stops=1)
    assert_outputs_as_stored(page, name, stored, claude)
    expect(panel.locator(".ja-action", has_text="Executing the plan")).to_have_count(1)
