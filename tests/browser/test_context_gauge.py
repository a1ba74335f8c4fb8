"""The context gauge and Compact now in a real JupyterLab in headless Chromium: after a run
the panel shows how full the model's window is; Compact now summarises the conversation
(a scripted model writes the summary) and the transcript marks where, with the summary
folded: one entry, not a message, a run line, the marker and a "Completed" line. The panel
stays free of serious accessibility violations with both on screen, in every place and
theme."""

from __future__ import annotations

import re

from axe_audit import violations
from panel_ui import agent_notebook, in_every_place, shoot, start, status
from playwright.sync_api import expect

SUMMARY = "The user asked for the answer; it is 42."


def test_the_gauge_shows_after_a_run_and_compact_now_marks_the_transcript(open_notebook, lab, page):
    notebook = agent_notebook(
        open_notebook, lab, "context", [{"text": "The answer is 42."}], summaries=[SUMMARY]
    )
    panel = start(notebook, "%agent act --model $m What is the answer?")
    expect(status(panel)).to_have_text("completed")
    meter = panel.get_by_role("meter", name="Context window used")
    expect(meter).to_be_visible()
    expect(panel.locator(".ja-context-text")).to_have_text(re.compile(r"^Context \d+% · .+ / 200k"))

    entries = panel.locator(".ja-transcript > *")
    before = entries.count()
    panel.get_by_role("button", name="Compact now").click()
    marker = panel.locator(".ja-compaction")
    expect(marker).to_contain_text("Compacted the conversation (you asked): summarised 1")
    expect(status(panel)).to_have_text("completed")
    expect(entries).to_have_count(before + 1)  # the marker, and nothing else
    expect(entries.last).to_have_class(re.compile(r"\bja-compaction\b"))
    expect(panel.locator(".ja-context-text")).to_contain_text("(estimated)")
    expect(panel.get_by_role("button", name="Compact now")).to_be_enabled()
    summary = marker.get_by_text(SUMMARY)
    expect(summary).to_be_hidden()
    marker.get_by_text("Summary", exact=True).click()
    expect(summary).to_be_visible()
    shoot(panel, "context-compacted.png")

    found = violations(page, panel)
    assert not found, "\n".join(
        f"{v['impact']} {v['rule']}: {v['help']} at {v['where']}" for v in found
    )
    assert in_every_place(page, notebook, "compaction-one-marker") == []
