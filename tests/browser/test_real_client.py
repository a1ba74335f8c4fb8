"""The panel on the real ``anthropic`` client, in a real JupyterLab in headless Chromium.

The kernel's agent talks to the loopback Messages API server of this test process through
``ANTHROPIC_BASE_URL``, as it would talk to Claude: the plan, its execution, a Stop in the
middle of a streamed reply, and the plan carried on from the panel.
"""

from __future__ import annotations

from typing import Any

from helpers import sent_key
from panel_ui import PLAN, STOP_LIMIT_MS, plan_button, shoot, start, status, stop_and_time
from playwright.sync_api import expect

from jupyter_agent.testing import MessagesServer, Reply, text, tool_use

REPORT = "The agent keeps **writing** so there is time to stop it. " * 40


def step(number: int, state: str) -> dict[str, Any]:
    return tool_use("update_plan_step", {"step_number": number, "status": state})


def test_a_plan_executed_and_stopped_mid_stream_on_the_real_client(open_notebook, lab, page):
    with MessagesServer() as server:
        server.script(
            [
                # the Planner
                Reply(
                    [text("I looked around. Here is my **plan**."), tool_use("submit_plan", PLAN)],
                    "tool_use",
                ),
                # the Actor: a step begins, then a long reply held open half-way
                Reply([text("Starting with the first step."), step(1, "in_progress")], "tool_use"),
                Reply([text(REPORT)], chunk_size=8, hold_after=30),
                # carried on after the Stop
                Reply([step(1, "done"), step(2, "in_progress")], "tool_use"),
                Reply([step(2, "done")], "tool_use"),
                Reply([tool_use("task_complete", {"summary": "Both steps are done."})], "tool_use"),
            ]
        )
        notebook = open_notebook("real_client.ipynb")
        notebook.run_cell(
            "%env ANTHROPIC_API_KEY=sk-ant-browser-test\n"
            f"%env ANTHROPIC_BASE_URL={server.url}\n"
            "%env JUPYTER_AGENT_MODEL=claude-sonnet-4-6\n"
            "%load_ext jupyter_agent"
        )
        panel = start(notebook, "%agent plan Clean the sales data")
        expect(status(panel)).to_have_text("plan ready for review")
        rows = panel.get_by_role("table").last.locator("tbody tr")
        expect(rows).to_have_count(2)
        expect(panel.locator(".ja-text strong", has_text="plan")).to_be_visible()
        expect(panel.locator(".ja-replay")).to_be_hidden()  # a real model: no replay caption

        plan_button(panel).click()
        expect(rows.nth(0).locator(".ja-step-status")).to_have_text("in progress")
        expect(panel.locator(".ja-text strong", has_text="writing").first).to_be_visible()
        expect(status(panel)).to_have_text("thinking…")
        took = stop_and_time(page, panel)
        assert took < STOP_LIMIT_MS, f"stopped after {took:.0f} ms"
        expect(status(panel)).to_have_text("stopped")
        expect(panel.locator(".ja-interrupted")).to_have_text(" [interrupted]")
        server.wait_idle()
        held = server.requests[2]
        assert held.outcome == "disconnected"  # Stop closed the stream's connection
        shoot(panel, "real-client-stopped.png")

        plan_button(panel, "Continue plan").click()
        expect(panel.locator(".ja-completed").last).to_have_text(
            "✔ Completed: Both steps are done."
        )
        expect(rows.nth(0).locator(".ja-step-status")).to_have_text("done")
        expect(rows.nth(1).locator(".ja-step-status")).to_have_text("done")
        server.wait_idle()
        requests = list(server.requests)
        assert not server.errors
    assert len(requests) == 6
    assert all(r.body["model"] == "claude-sonnet-4-6" for r in requests)
    assert all(sent_key(r) == "sk-ant-browser-test" for r in requests)  # set with %env
    # What was streamed before the Stop is sent back, marked as cut off, and every
    # tool use of the conversation is answered: a valid conversation to carry on from.
    carried = requests[3].body["messages"]
    interrupted = [
        block["text"]
        for turn in carried
        if turn["role"] == "assistant"
        for block in turn["content"]
        if block["type"] == "text" and "writing" in block["text"]
    ]
    assert len(interrupted) == 1 and len(interrupted[0]) < len(REPORT)
    uses = {b["id"] for t in carried for b in t["content"] if b["type"] == "tool_use"}
    answered = {
        b["tool_use_id"] for t in carried for b in t["content"] if b["type"] == "tool_result"
    }
    assert uses == answered
