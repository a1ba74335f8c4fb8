"""Sessions of two notebooks in one folder, in a real JupyterLab in headless Chromium: the
panel of ``b.ipynb`` lists its own session first and ``a.ipynb``'s by name, asks before
resuming ``a.ipynb``'s (continue here, or open ``a.ipynb``: the lab extension opens it in
this window), continues it here without links into this notebook for ``a.ipynb``'s cells
(the two notebooks share cell ids, as copies do), and a search hit shows the session's
outcome under the passage that matched. The choice passes axe; screenshots land in
``test-artifacts/screenshots/``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from axe_audit import violation_lines
from panel_ui import call, in_both_themes, in_every_place, shoot, sidebar, sidebar_width, start
from playwright.sync_api import expect

FOLDER = "two_notebooks"


def notebook_with_model(
    open_notebook: Any, lab: Any, name: str, turns: list[Any], folder: str = FOLDER, **ui: str
) -> Any:
    """Open ``folder/name.ipynb`` (its first cell ``x = 1``, id ``cell-0`` in both), the
    extension loaded and ``m`` a scripted model replaying ``turns``."""
    (lab.root / folder).mkdir(exist_ok=True)
    (lab.root / folder / f"{name}.json").write_text(json.dumps(turns))
    notebook = open_notebook(f"{folder}/{name}.ipynb", ["x = 1"], **ui)
    notebook.run_cell(
        "%load_ext jupyter_agent\nfrom jupyter_agent import ScriptedModel\n"
        f"m = ScriptedModel('{name}.json', chunk_size=4)"
    )
    return notebook


def current_path(page: Any) -> str:
    return str(page.evaluate("() => window.jupyterapp.shell.currentWidget?.context?.path ?? ''"))


def test_a_session_of_another_notebook_is_named_asks_before_resuming_and_drops_its_cell_links(
    open_notebook, lab, page
):
    a = notebook_with_model(
        open_notebook,
        lab,
        "a",
        [call("read_cell", cell_id="cell-0"), {"text": "The first cell sets x to one."}],
    )
    a_panel = start(a, "%agent plan --model $m Read the first cell")
    expect(a_panel.locator(".ja-text").last).to_have_text("The first cell sets x to one.")
    # In its own notebook the card links to the cell it read.
    expect(a_panel.locator(".ja-transcript a.ja-reveal-cell").first).to_be_attached()

    b = notebook_with_model(open_notebook, lab, "b", [{"text": "Hello from b."}])
    panel = start(b, "%agent plan --model $m Say hello")
    expect(panel.locator(".ja-text").last).to_have_text("Hello from b.")
    # Live: the frontend has named the notebook as the server does, so the kernel knows
    # where the other notebook is (until then it cannot offer to open it).
    expect(panel.locator(".ja-notebook")).to_contain_text("live in JupyterLab")

    # The picker: this notebook's session first, then a.ipynb's, named.
    picker = panel.get_by_role("combobox", name="Session")
    groups = picker.locator("optgroup")
    expect(groups).to_have_count(2)
    assert groups.evaluate_all("gs => gs.map(g => g.label)") == ["This notebook", "Other notebooks"]
    expect(groups.nth(0).locator("option")).to_have_count(1)
    assert groups.nth(0).locator("option").text_content().startswith("Say hello — ")
    other = groups.nth(1).locator("option")
    expect(other).to_have_count(1)
    assert re.match(r"^Read the first cell — a\.ipynb — ", other.text_content() or "")
    a_id = other.get_attribute("value")

    # Resuming it asks first; Esc takes the question back.
    picker.select_option(a_id)
    resume = panel.get_by_role("button", name="Resume", exact=True)
    resume.click()
    choice = panel.get_by_role("group", name="Resume a session of another notebook")
    expect(choice).to_contain_text("“Read the first cell” worked on a.ipynb, not on this notebook.")
    go_on = choice.get_by_role("button", name="Continue here (its cell references are dropped)")
    expect(go_on).to_be_focused()
    open_a = choice.get_by_role("link", name="Open a.ipynb")
    expect(open_a).to_have_attribute("href", re.compile(rf"/lab/tree/{FOLDER}/a\.ipynb$"))
    found = violation_lines(page, choice, "JupyterLab Light")
    assert not found, "\n".join(found)
    shoot(panel, "session-of-another-notebook.png")
    page.keyboard.press("Escape")
    expect(choice).to_be_hidden()
    expect(resume).to_be_focused()

    # Open: the lab extension opens a.ipynb in this window.
    resume.click()
    choice.get_by_role("link", name="Open a.ipynb").click()
    expect(choice).to_be_hidden()
    page.wait_for_function(
        "path => window.jupyterapp.shell.currentWidget?.context?.path === path",
        arg=f"{FOLDER}/a.ipynb",
    )
    assert len(page.context.pages) == 1  # not a new browser tab
    page.evaluate("id => window.jupyterapp.shell.activateById(id)", b.panel_id)
    assert current_path(page) == f"{FOLDER}/b.ipynb"

    # The search finds a.ipynb's session by its words and shows what it came to.
    panel.get_by_role("searchbox", name="Search sessions").fill("first cell")
    results = panel.get_by_role("group", name="Matching sessions")
    hit = results.get_by_role("button", name=re.compile(r"^Read the first cell — .* · a\.ipynb"))
    expect(hit).to_be_visible()
    expect(results.locator(".ja-search-outcome")).to_have_text(
        "Outcome (answer): The first cell sets x to one."
    )
    shoot(panel, "session-search-outcome.png")

    # Continue here: the conversation, without links to cells of this notebook.
    hit.click()
    expect(go_on).to_be_focused()
    go_on.click()
    transcript = panel.locator(".ja-transcript")
    expect(panel.get_by_text(f"Resumed session {a_id}.")).to_be_visible()
    expect(transcript).to_contain_text(
        "The conversation above was held in a.ipynb; it goes on in this notebook."
    )
    expect(transcript).to_contain_text("The first cell sets x to one.")
    expect(transcript.locator(".ja-dropped-cell").first).to_be_attached()
    expect(transcript.locator("a.ja-reveal-cell")).to_have_count(0)
    expect(panel.get_by_role("searchbox", name="Search sessions")).to_have_value("")
    expect(results.get_by_role("button")).to_have_count(0)
    # It is this notebook's session now: both are, so the picker needs no groups.
    expect(picker.locator("optgroup")).to_have_count(0)
    expect(picker.locator("option").first).to_have_attribute("value", a_id or "")
    shoot(panel, "session-continued-here.png")
    assert in_every_place(page, b, "session-continued-here") == []


def test_in_notebook_7_open_shows_the_other_notebook_in_a_page_of_its_own(open_notebook, lab, page):
    folder = "two_notebooks_nb7"
    lab.write_notebook(f"{folder}/a.ipynb", ["x = 1"])
    b = notebook_with_model(
        open_notebook, lab, "b", [{"text": "Hello from b."}], folder=folder, ui="notebook"
    )
    b.run_cell(
        "from jupyter_agent import Agent\n"
        "past = Agent('planner', ScriptedModel([{'text': 'Done in a.'}]))\n"
        "past.session.work_on('a.ipynb')\n"
        "await past.run('Tidy a')"
    )
    panel = start(b, "%agent plan --model $m Say hello")
    expect(panel.locator(".ja-text").last).to_have_text("Hello from b.")
    picker = panel.get_by_role("combobox", name="Session")
    option = picker.locator("optgroup[label='Other notebooks'] option").first
    expect(option).to_have_text(re.compile(r"^Tidy a — a\.ipynb — "))
    picker.select_option(option.get_attribute("value"))
    panel.get_by_role("button", name="Resume", exact=True).click()
    open_a = panel.get_by_role("link", name="Open a.ipynb")
    expect(open_a).to_have_attribute("href", re.compile(rf"/notebooks/{folder}/a\.ipynb$"))
    with page.context.expect_page() as opened:
        open_a.click()
    other = opened.value
    try:
        other.wait_for_url(re.compile(rf"/notebooks/{folder}/a\.ipynb"))
    finally:
        other.close()
    expect(panel.get_by_role("group", name="Resume a session of another notebook")).to_be_hidden()


def test_in_the_sidebar_at_300_px_the_choice_opens_from_the_menu(open_notebook, lab, page):
    folder = "two_notebooks_side"
    lab.write_notebook(f"{folder}/a.ipynb", ["x = 1"])
    b = notebook_with_model(open_notebook, lab, "b", [{"text": "Hello from b."}], folder=folder)
    b.run_cell(
        "from jupyter_agent import Agent\n"
        "past = Agent('planner', ScriptedModel([{'text': 'Done in a.'}]))\n"
        "past.session.work_on('a.ipynb')\n"
        "await past.run('Tidy a')"
    )
    b.run_cell("%agent plan --side --model $m Say hello")
    side = sidebar(page)
    sidebar_width(page, 300)
    panel = side.locator(".ja-panel")
    expect(panel.locator(".ja-text").last).to_have_text("Hello from b.", timeout=30_000)
    # At 300 px the session picker is in the ⋯ menu; the choice opens there, in view.
    panel.get_by_role("button", name="Settings and sessions").click()
    picker = panel.get_by_role("combobox", name="Session")
    option = picker.locator("optgroup[label='Other notebooks'] option").first
    expect(option).to_have_text(re.compile(r"^Tidy a — a\.ipynb — "))
    picker.select_option(option.get_attribute("value"))
    panel.get_by_role("button", name="Resume", exact=True).click()
    choice = panel.get_by_role("group", name="Resume a session of another notebook")
    go_on = choice.get_by_role("button", name="Continue here (its cell references are dropped)")
    expect(go_on).to_be_focused()
    box = side.bounding_box()
    for part in (go_on, choice.get_by_role("link", name="Open a.ipynb")):
        where = part.bounding_box()
        assert (
            box and where and box["y"] <= where["y"] <= box["y"] + box["height"] - where["height"]
        )
    assert in_both_themes(page, side, "session-choice-sidebar-300") == []
    go_on.click()
    expect(panel.locator(".ja-transcript")).to_contain_text(
        "The conversation above was held in a.ipynb; it goes on in this notebook."
    )
