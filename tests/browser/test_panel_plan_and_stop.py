"""The agent panel's plans and its Stop button in a real JupyterLab in headless Chromium,
with scripted models: a plan shown as a table and executed step by step with live step
status, Stop while the model streams, waits for an answer, runs a command or runs a cell,
and a stopped plan carried on (also from a resumed or searched-for past session).

Each test writes a script of model turns next to its notebook, loads the extension,
defines ``m = ScriptedModel(...)`` in the kernel and starts the agent with
``%agent … --model $m``; then it uses the panel as a person does: by buttons' and
inputs' accessible names. Screenshots of the main states land in
``test-artifacts/screenshots/`` (for the README).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from panel_ui import (
    LONG_TEXT,
    PLAN,
    STOP_LIMIT_MS,
    agent_notebook,
    call,
    in_every_place,
    plan_button,
    send,
    shoot,
    start,
    status,
    step,
    stop_and_time,
)
from playwright.sync_api import expect

# --- the plan ------------------------------------------------------------------------------


def test_a_plan_shows_as_a_table_and_execute_plan_runs_it_step_by_step(open_notebook, lab):
    notebook = agent_notebook(
        open_notebook,
        lab,
        "plan",
        [
            call("submit_plan", "I looked at the notebook. Here is my **plan**.", **PLAN),
            {"text": "Starting with the first step.", "tool_calls": [step(1, "in_progress")]},
            {"tool_calls": [step(1, "done"), step(2, "in_progress")]},
            {"tool_calls": [step(2, "done")]},
            call("task_complete", summary="Both steps are done."),
        ],
        delay=0.01,
    )
    panel = start(notebook, "h = %agent plan --model $m Clean the sales data")
    table = panel.get_by_role("table").last
    # Planning did nothing yet: the plan awaits review (never "completed").
    expect(status(panel)).to_have_text("plan ready for review")
    expect(panel.locator(".ja-completed").last).to_have_text(
        "✔ Plan ready for review: Clean the sales data"
    )
    header = table.get_by_role("row").first
    expect(header).to_have_text(re.compile(r"#\s*Action\s*Reason\s*Tools\s*Time\s*Status"))
    rows = table.locator("tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.nth(0).locator("td")).to_have_text(
        ["1", "Load sales.csv", "See what is there", "read_file", "~1 s", "pending"]
    )
    expect(rows.nth(1).locator("td")).to_have_text(
        [
            "2",
            "Drop duplicate rows",
            "Duplicates skew totals",
            "update_cell, run_cell",
            "~5 s",
            "pending",
        ]
    )
    plan = panel.get_by_role("region", name=re.compile(r"^Plan: "))
    expect(plan).to_contain_text("Rows that look duplicated may be legitimate")
    expect(plan).to_contain_text("sales.csv in the notebook's folder")
    expect(panel.locator(".ja-text strong", has_text="plan")).to_be_visible()
    expect(panel.locator(".ja-replay")).to_have_text("Scripted replay — no real model is called")
    shoot(panel, "plan-table.png")

    plan_button(panel).click()
    expect(panel.get_by_role("combobox", name="Role")).to_have_value("actor")
    expect(panel.locator(".ja-completed").last).to_have_text("✔ Completed: Both steps are done.")
    expect(status(panel)).to_have_text("completed")
    expect(rows.nth(0).locator(".ja-step-status")).to_have_text("done")
    expect(rows.nth(1).locator(".ja-step-status")).to_have_text("done")
    expect(plan_button(panel)).to_be_disabled()
    # The click shows as what the user did; the prompt the Actor got (with the approved
    # plan) is there on demand, never as a message the user wrote.
    expect(panel.locator(".ja-user")).to_have_text(["Clean the sales data"])
    action = panel.locator(".ja-action").last
    expect(action.locator(".ja-action-label")).to_have_text("▶ Executing the plan")
    told = action.locator("details")
    expect(told.get_by_text("Execute the approved plan.")).to_be_hidden()
    told.locator("summary", has_text="What the agent was told").click()
    expect(told.get_by_text("Execute the approved plan.")).to_be_visible()
    out = notebook.run_cell("print(h.agent.role, h.agent.handle.summary)")
    assert out == "actor Both steps are done."
    # The kernel never re-sent the panel's display for the text fallback (that would
    # have re-created the view): one view said hello, once.
    out = notebook.run_cell(
        "from jupyter_agent.jupyter.kernel.agent import kernel_agent\n"
        "print(kernel_agent().panel.views_seen)"
    )
    assert out == "1"


def held_at_a_question(summary: str) -> list[dict[str, Any]]:
    """A plan, then an execution that marks step 1 done and asks before step 2."""
    ask = call(
        "ask_user", question="Go on with step 2?", options=[{"label": "Yes", "value": "yes"}]
    )
    return [
        call("submit_plan", **PLAN),
        {"tool_calls": [step(1, "done"), step(2, "in_progress")]},
        ask,
        {"tool_calls": [step(2, "done")]},
        call("task_complete", summary=summary),
    ]


def test_step_status_updates_live_while_the_actor_works(open_notebook, lab):
    notebook = agent_notebook(open_notebook, lab, "steps", held_at_a_question("Done."))
    panel = start(notebook, "%agent plan --model $m Clean the sales data")
    plan_button(panel).click()
    rows = panel.locator(".ja-plan-table tbody tr")
    # Held at the question: step 1 done, step 2 in progress, shown as such.
    expect(panel.get_by_role("button", name="Yes")).to_be_visible()
    expect(rows.nth(0).locator(".ja-step-status")).to_have_text("done")
    expect(rows.nth(1).locator(".ja-step-status")).to_have_text("in progress")
    panel.get_by_role("button", name="Yes").click()
    expect(rows.nth(1).locator(".ja-step-status")).to_have_text("done")


def stop_the_execution_at_its_question(open_notebook: Any, lab: Any, name: str, summary: str):
    """A notebook whose panel executed the plan and was stopped at the question;
    the scripted model then finishes with ``summary``."""
    notebook = agent_notebook(open_notebook, lab, name, held_at_a_question(summary))
    panel = start(notebook, "%agent plan --model $m Clean the sales data")
    plan_button(panel).click()
    expect(panel.get_by_role("button", name="Yes")).to_be_visible()
    panel.get_by_role("button", name="Stop").click()
    expect(panel.locator(".ja-stopped")).to_have_text("■ Stopped by the user.")
    return notebook, panel


def test_a_stopped_execution_carries_on_from_the_plan(open_notebook, lab):
    notebook, panel = stop_the_execution_at_its_question(
        open_notebook, lab, "carry_on", "Carried on to the end."
    )
    # The plan was cut short: its button offers to carry on, as execute_plan() would.
    carry_on = plan_button(panel, "Continue plan")
    expect(carry_on).to_be_enabled()
    rows = panel.locator(".ja-plan-table tbody tr")
    expect(rows.nth(0).locator(".ja-step-status")).to_have_text("done")
    expect(rows.nth(1).locator(".ja-step-status")).to_have_text("stopped")  # not in progress
    shoot(panel.get_by_role("region", name=re.compile(r"^Plan: ")), "continue-plan.png")
    carry_on.click()
    expect(panel.locator(".ja-completed").last).to_have_text("✔ Completed: Carried on to the end.")
    expect(rows.nth(0).locator(".ja-step-status")).to_have_text("done")
    expect(rows.nth(1).locator(".ja-step-status")).to_have_text("done")
    expect(carry_on).to_be_disabled()  # executed to the end: once is enough
    out = notebook.run_cell(
        "from jupyter_agent.jupyter.kernel.agent import kernel_agent\n"
        "a = kernel_agent().agent\n"
        "print(a.handle.summary, a.role, sum('Execute the approved plan' in m.text\n"
        "      for m in a.history if m.role == 'user'))"
    )
    assert out == "Carried on to the end. actor 2"  # the first execution, then its sequel


def test_a_resumed_session_offers_to_continue_its_stopped_plan(open_notebook, lab):
    notebook, _ = stop_the_execution_at_its_question(
        open_notebook, lab, "resume_plan", "Finished after resuming."
    )
    session_id = notebook.run_cell(
        "from jupyter_agent.jupyter.kernel.agent import kernel_agent\n"
        "print(kernel_agent().agent.session.id)"
    )
    # The panel rebuilt from the saved session shows where the plan's execution stopped.
    panel = start(notebook, f"%agent --resume {session_id} --model $m")
    expect(panel.get_by_text(f"Resumed session {session_id}.")).to_be_visible()
    rows = panel.locator(".ja-plan-table tbody tr")
    expect(rows.nth(0).locator(".ja-step-status")).to_have_text("done")
    expect(rows.nth(1).locator(".ja-step-status")).to_have_text("stopped")
    carry_on = plan_button(panel, "Continue plan")
    expect(carry_on).to_be_enabled()
    carry_on.click()
    expect(panel.locator(".ja-completed").last).to_have_text(
        "✔ Completed: Finished after resuming."
    )
    expect(rows.nth(1).locator(".ja-step-status")).to_have_text("done")
    expect(carry_on).to_be_disabled()


def test_the_session_search_finds_a_past_session_by_its_words_and_resumes_it(open_notebook, lab):
    notebook = agent_notebook(open_notebook, lab, "search_sessions", [{"text": "Hello."}])
    past_id = notebook.run_cell(
        "from jupyter_agent import Agent\n"
        "past = Agent('planner', ScriptedModel([{'text': 'Churn is 4 % in the March cohort.'}]))\n"
        "await past.run('measure the churn by cohort')\n"
        "print(past.session.id)",
    )
    panel = start(notebook, "%agent --model $m")
    panel.get_by_role("searchbox", name="Search sessions").fill("march cohort")
    hit = panel.get_by_role("group", name="Matching sessions").get_by_role(
        "button", name=re.compile(r"^measure the churn by cohort — ")
    )
    expect(hit).to_be_visible()
    expect(hit.locator("mark")).to_have_text(["March", "cohort"])
    hit.click()
    expect(panel.get_by_text(f"Resumed session {past_id}.")).to_be_visible()
    expect(panel.locator(".ja-transcript")).to_contain_text("Churn is 4 % in the March cohort.")


# --- Stop ------------------------------------------------------------------------------------


def test_stop_while_streaming_then_the_next_message_continues(open_notebook, lab, page):
    notebook = agent_notebook(
        open_notebook,
        lab,
        "stream",
        [{"text": LONG_TEXT}, {"text": "Picking up where I stopped."}],
        delay=0.01,
    )
    panel = start(notebook, "%agent plan --model $m Write a long report")
    expect(panel.locator(".ja-text strong").first).to_have_text("writing")
    expect(status(panel)).to_have_text("thinking…")
    took = stop_and_time(page, panel)
    assert took < STOP_LIMIT_MS, f"stopped after {took:.0f} ms"
    expect(status(panel)).to_have_text("stopped")
    expect(panel.locator(".ja-interrupted")).to_have_text(" [interrupted]")
    expect(panel.get_by_role("button", name="Stop")).to_be_disabled()
    shoot(panel, "stopped.png")

    # Typed key by key and sent with Enter: the notebook's command-mode shortcuts
    # (a, b, d d, Enter…) stay out of the panel's text box.
    cells = notebook.cells.count()
    message = panel.get_by_role("textbox", name="Message")
    message.press_sequentially("abd dm Please continue")
    expect(message).to_have_value("abd dm Please continue")
    message.press("Enter")
    expect(panel.locator(".ja-text").last).to_have_text("Picking up where I stopped.")
    expect(panel.locator(".ja-user").last).to_have_text("abd dm Please continue")
    assert notebook.cells.count() == cells
    expect(status(panel)).to_have_text("completed")
    expect(panel.get_by_role("textbox", name="Message")).to_have_value("")


def test_stop_while_a_30_second_command_runs_kills_it(open_notebook, lab, page):
    notebook = agent_notebook(
        open_notebook,
        lab,
        "slow",
        [
            call("execute_command", command="sleep 30 && echo ja-panel-marker", timeout=60),
            {"text": "Fine, I will not wait for it."},
        ],
    )
    panel = start(notebook, "%agent act --model $m Run the slow job")
    panel.get_by_role("button", name="Allow", exact=True).click()
    expect(status(panel)).to_have_text("running tool execute_command")
    took = stop_and_time(page, panel)
    assert took < STOP_LIMIT_MS, f"stopped after {took:.0f} ms"
    tool = panel.locator('.ja-tool[data-tool="execute_command"]')
    expect(tool).to_have_attribute("data-state", "stopped")  # stopped by the user, not failed
    out = notebook.run_cell(
        "import subprocess\nprint(subprocess.run(['pgrep', '-f', 'ja-panel-marker']).returncode)"
    )
    assert out == "1"  # no such process left
    send(panel, "Go on")
    expect(status(panel)).to_have_text("completed")


def test_stop_while_waiting_for_an_answer(open_notebook, lab, page):
    notebook = agent_notebook(
        open_notebook,
        lab,
        "waiting",
        [
            call("ask_user", question="Which file should I read?"),
            {"text": "Understood, no file then."},
        ],
    )
    panel = start(notebook, "%agent plan --model $m Read the data")
    card = panel.get_by_role("region", name=re.compile(r"^Question: "))
    expect(card.get_by_role("textbox", name="Your answer")).to_be_visible()
    took = stop_and_time(page, panel)
    assert took < STOP_LIMIT_MS, f"stopped after {took:.0f} ms"
    expect(card.locator(".ja-answered")).to_have_text("Not answered: the run stopped.")
    expect(card.get_by_role("button", name="Answer")).to_be_disabled()
    send(panel, "Never mind")
    expect(panel.locator(".ja-text").last).to_have_text("Understood, no file then.")


@pytest.mark.parametrize("frontend", ["lab extension", "without the extension"])
def test_stop_while_the_agent_runs_a_cell_interrupts_the_kernel(open_notebook, lab, page, frontend):
    """With the lab extension, Stop reaches the kernel over its subshell while the cell
    runs, and the stopped run interrupts its own cell through the bridge. Where our
    extension is absent, the kernel reads no click while the cell runs: the panel calls
    the server's interrupt endpoint itself. Either way the kernel is interrupted once."""
    notebook = agent_notebook(
        open_notebook,
        lab,
        "runcell",
        [call("run_cell", cell_id="cell-0", timeout=120), {"text": "OK, stopped it."}],
        sources=["import time\ntime.sleep(60)", ""],
    )
    interrupts: list[str] = []

    def seen(request: Any) -> None:
        if request.method == "POST" and "/interrupt" in request.url:
            interrupts.append(request.url)

    page.on("request", seen)
    # A frontend without our extension is made here by hiding the panel's events from it
    # (its messages then go through the widget's comm, its interrupt to the server);
    # whether anyone took an interrupt event is noted. The listeners go when the test
    # ends: the window serves the next test.
    page.evaluate(
        """withoutExtension => {
          window.__jaTaken = null;
          const hide = event => { if (withoutExtension) event.stopImmediatePropagation(); };
          const note = event => { window.__jaTaken = event.defaultPrevented; };
          const names = ['jupyter-agent:interrupt', 'jupyter-agent:control'];
          for (const name of names) document.addEventListener(name, hide, { capture: true });
          document.addEventListener('jupyter-agent:interrupt', note);
          window.__jaUnlisten = () => {
            for (const name of names)
              document.removeEventListener(name, hide, { capture: true });
            document.removeEventListener('jupyter-agent:interrupt', note);
            delete window.__jaTaken;
          };
        }""",
        frontend == "without the extension",
    )
    try:
        _stop_the_running_cell(page, lab, notebook, interrupts)
    finally:
        page.remove_listener("request", seen)
        page.evaluate("() => window.__jaUnlisten()")


def _stop_the_running_cell(page: Any, lab: Any, notebook: Any, interrupts: list[str]) -> None:
    panel = start(notebook, "%agent act --model $m Run the first cell")
    panel.get_by_role("button", name="Allow", exact=True).click()
    expect(status(panel)).to_have_text("running tool run_cell")
    # The cell really runs: the kernel cannot read a click until it ends.
    expect(notebook.cells.first.locator(".jp-InputPrompt")).to_have_text("[*]:")
    took = stop_and_time(page, panel)
    assert took < STOP_LIMIT_MS, f"stopped after {took:.0f} ms"
    kernel_id = page.evaluate(
        "() => window.jupyterapp.serviceManager.sessions.running().next().value?.kernel?.id"
    )
    expect(notebook.cells.first.locator(".jp-OutputArea-output")).to_contain_text(
        "KeyboardInterrupt"
    )
    # Nobody took an interrupt event: over a subshell the panel sends none, and without
    # the extension it went unheard (the panel then called the endpoint).
    assert page.evaluate("() => window.__jaTaken") is None
    assert [url.split("?")[0] for url in interrupts] == [
        f"{lab.url}/api/kernels/{kernel_id}/interrupt"
    ]
    assert notebook.run_cell("print(1 + 1)") == "2"


def test_pause_waits_before_the_next_step_and_resume_goes_on(open_notebook, lab, page):
    """Pause beside Stop: the run finishes the text it streams, waits before its tool
    call (the status says so), and Resume goes on to the end."""
    notebook = agent_notebook(
        open_notebook,
        lab,
        "pause",
        [
            {"text": LONG_TEXT, "tool_calls": [call("list_files")["tool_calls"][0]]},
            {"text": "Done after the pause."},
        ],
        delay=0.005,
    )
    panel = start(notebook, "%agent plan --model $m Look around")
    expect(status(panel)).to_have_text("thinking…")
    pause = panel.get_by_role("button", name="Pause the run")
    pause.click()
    expect(status(panel)).to_have_text("paused before list_files", timeout=60_000)
    resume = panel.get_by_role("button", name="Resume the run")
    expect(resume).to_be_enabled()
    shoot(panel, "paused.png")
    assert in_every_place(page, notebook, "paused") == []
    resume.click()
    expect(panel.locator(".ja-text").last).to_have_text("Done after the pause.")
    expect(status(panel)).to_have_text("completed")
    expect(panel.get_by_role("button", name="Pause the run")).to_be_disabled()
