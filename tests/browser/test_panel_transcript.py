"""The agent panel's transcript in a real JupyterLab in headless Chromium, with scripted
models: Markdown rendered safely, tool cards and their diffs, a transcript that follows
new output until the reader scrolls up, questions and approvals answered by clicks (also
while a cell runs), and a transcript that survives a page reload (the panel's contrast in
the light and dark themes is checked in test_accessibility.py).

Each test writes a script of model turns next to its notebook, loads the extension,
defines ``m = ScriptedModel(...)`` in the kernel and starts the agent with
``%agent … --model $m``; then it uses the panel as a person does: by buttons' and
inputs' accessible names. Screenshots of the main states land in
``test-artifacts/screenshots/`` (for the README).
"""

from __future__ import annotations

import re
from typing import Any

from panel_ui import PLAN, agent_notebook, call, shoot, start, status
from playwright.sync_api import expect

# --- the transcript ------------------------------------------------------------------------

MARKDOWN = """## Findings

The data has **12 duplicates** and *a few* gaps in `price`.

1. Load the file
2. Drop the duplicates
   - keep the first row

| column | missing |
|:-------|--------:|
| price  | 3 |

See [the docs](https://pandas.pydata.org/docs/) and [this](javascript:alert(1)).

<img src=x onerror="window.__jaPwned = 1"> <script>window.__jaPwned = 2</script>

```python
df.drop_duplicates()
```
"""


def test_markdown_is_rendered_as_sanitised_html(open_notebook, lab, page):
    notebook = agent_notebook(
        open_notebook, lab, "markdown", [call("task_complete", MARKDOWN, summary="Reported.")]
    )
    panel = start(notebook, "%agent plan --model $m Describe the data")
    expect(status(panel)).to_have_text("completed")
    text = panel.locator(".ja-text").first
    expect(text.locator("h4")).to_have_text("Findings")
    expect(text.locator("strong")).to_have_text("12 duplicates")
    expect(text.locator("em")).to_have_text("a few")
    expect(text.locator("p code")).to_have_text("price")
    expect(text.locator("ol > li")).to_have_count(2)
    expect(text.locator("ol li ul li")).to_have_text("keep the first row")
    expect(text.get_by_role("table").locator("td")).to_have_text(["price", "3"])
    expect(text.get_by_role("table").locator("td").nth(1)).to_have_attribute(
        "style", "text-align:right"
    )
    link = text.get_by_role("link", name="the docs")
    expect(link).to_have_attribute("href", "https://pandas.pydata.org/docs/")
    expect(link).to_have_attribute("rel", "noopener noreferrer")
    expect(text.get_by_role("link")).to_have_count(1)  # no javascript: link
    expect(text).to_contain_text("this")
    expect(text.locator("pre code.language-python")).to_have_text("df.drop_duplicates()")
    # Markup the model writes is shown as text, never run.
    expect(text).to_contain_text('<img src=x onerror="window.__jaPwned = 1">')
    expect(text.locator("img, script")).to_have_count(0)
    assert page.evaluate("() => window.__jaPwned") is None


def test_a_tool_card_shows_its_result_a_coloured_diff_and_its_input(open_notebook, lab):
    notebook = agent_notebook(
        open_notebook,
        lab,
        "diff",
        [
            call("update_cell", "I will fix the rate.", cell_id="cell-0", source="rate = 0.2"),
            call("task_complete", summary="Fixed."),
        ],
        sources=["rate = 0.02", ""],
    )
    panel = start(notebook, "%agent act --model $m Fix the rate")
    card = panel.locator('.ja-tool[data-tool="update_cell"]')
    expect(card).to_have_attribute("data-state", "done")
    # The cell is named by its place, its id on hover; the row is folded until clicked.
    expect(card.locator("summary").first).to_contain_text("Edit cell 1")
    expect(card).not_to_have_attribute("open", "")
    card.locator("summary").first.click()
    link = card.locator(".ja-tool-result").get_by_role("link", name="cell 1").first
    expect(link).to_have_attribute("title", "Show cell cell-0 in the notebook")
    expect(card.locator(".ja-diff-del")).to_have_text(["-rate = 0.02\n"])
    expect(card.locator(".ja-diff-add")).to_have_text(["+rate = 0.2\n"])
    # The result says what was done; the diff shows once, coloured, under the cell's name.
    expect(card.locator(".ja-tool-result pre").first).to_have_text("Updated the source of cell 1.")
    expect(card.locator(".ja-tool-result .ja-label").nth(1)).to_have_text("Diff of cell 1")
    expect(card.get_by_text("+++ b/cell cell-0")).to_have_count(0)
    # The input as the model sent it, behind "Details".
    card.locator("details.ja-raw-input > summary").click()
    expect(card.locator("details.ja-raw-input pre")).to_contain_text('"source": "rate = 0.2"')
    # The edit reached the open notebook.
    expect(notebook.cells.first.locator(".cm-content")).to_have_text("rate = 0.2")


def test_the_transcript_follows_output_that_grows_in_place_until_the_reader_scrolls_up(
    open_notebook, lab, page
):
    # Each call is said at length (streamed text), then fails: its row opens on its error
    # after it was added (rows that succeed stay folded).
    edits = [
        call(
            "update_cell",
            f"Attempt {i}.\n\n" + "- checking\n" * 12,
            cell_id=f"gone-{i}",
            source="x",
        )
        for i in range(1, 4)
    ]
    notebook = agent_notebook(
        open_notebook,
        lab,
        "follow",
        [*edits, call("task_complete", summary="Edited three times.")],
        sources=["rate = 0.02", ""],
    )
    panel = start(notebook, "%agent act --model $m Edit it")
    expect(status(panel)).to_have_text("completed")
    log = panel.locator(".ja-transcript")
    gap = "t => t.scrollHeight - t.scrollTop - t.clientHeight"
    # Each failed row opens on its error after it was added: still at the bottom.
    assert log.evaluate("t => t.scrollHeight > 2 * t.clientHeight")
    assert log.evaluate(gap) < 2
    # A reader who scrolled up is left where they are while more comes in.
    log.evaluate("t => { t.scrollTop = 0; }")
    page.wait_for_timeout(100)
    notebook.run_cell("h = _.send('Once more')")
    expect(status(panel)).to_have_text("completed")
    assert log.evaluate("t => t.scrollTop") == 0


# --- questions and approvals -----------------------------------------------------------------


def test_a_questions_option_buttons_answer_it(open_notebook, lab):
    question = call(
        "ask_user",
        "I found 12 duplicated rows.",
        question="Drop the duplicated rows?",
        context="They have the same order id and timestamp.",
        severity="major",
        options=[
            {"label": "Drop them", "value": "drop", "description": "Remove the 12 rows"},
            {"label": "Keep them", "value": "keep", "description": "Leave the data as it is"},
        ],
        default="drop",
    )
    notebook = agent_notebook(
        open_notebook, lab, "question", [question, call("task_complete", summary="Kept them.")]
    )
    panel = start(notebook, "h = %agent act --model $m Clean the sales data")
    card = panel.get_by_role("region", name=re.compile(r"^Question: "))
    expect(card).to_contain_text("Drop the duplicated rows?")
    expect(card).to_contain_text("They have the same order id and timestamp.")
    expect(status(panel)).to_have_text(re.compile(r"^waiting for you"))
    drop = card.get_by_role("button", name="Drop them")
    keep = card.get_by_role("button", name="Keep them")
    expect(drop).to_have_class(re.compile(r"\bja-default\b"))
    # Each option's description is visible under its label, and is its description.
    expect(drop.locator(".ja-option-description")).to_have_text("Remove the 12 rows")
    expect(drop.locator(".ja-option-description")).to_be_visible()
    expect(drop).to_have_accessible_description("Remove the 12 rows")
    expect(drop).to_have_accessible_name("Drop them")
    expect(keep).not_to_have_class(re.compile(r"\bja-default\b"))
    expect(card).to_have_class(re.compile(r"\bja-flash\b"))
    expect(card.get_by_role("textbox")).to_have_count(0)  # no free text for this one
    expect(card).not_to_contain_text("null")
    shoot(panel, "question.png")

    keep.click()
    expect(card.locator(".ja-answered")).to_have_text("Answered: Keep them")
    expect(drop).to_be_disabled()
    expect(status(panel)).to_have_text("completed")
    out = notebook.run_cell("print([b.text for m in h.history for b in m.tool_results][0])")
    assert out == "The user chose “Keep them” (value: keep)."


def test_the_free_text_box_answers_an_allow_custom_question(open_notebook, lab):
    question = call(
        "ask_user",
        question="Which column holds the price?",
        options=[{"label": "price", "value": "price"}],
        allow_custom=True,
    )
    notebook = agent_notebook(
        open_notebook, lab, "freetext", [question, call("task_complete", summary="Noted.")]
    )
    panel = start(notebook, "h = %agent act --model $m Find the price column")
    card = panel.get_by_role("region", name=re.compile(r"^Question: "))
    card.get_by_role("textbox", name="Your answer").fill("unit_price_eur")
    card.get_by_role("button", name="Answer").click()
    expect(card.locator(".ja-answered")).to_have_text("Answered: unit_price_eur")
    expect(status(panel)).to_have_text("completed")
    out = notebook.run_cell("print([b.text for m in h.history for b in m.tool_results][0])")
    assert out == "The user answered: unit_price_eur"


def test_an_approval_cards_allow_and_deny(open_notebook, lab):
    notebook = agent_notebook(
        open_notebook,
        lab,
        "approval",
        [
            call("execute_command", "Let me count the files.", command="echo approved-run"),
            call("execute_command", command="echo denied-run"),
            call("task_complete", summary="Done."),
        ],
    )
    panel = start(notebook, "h = %agent act --model $m Look around")
    card = panel.get_by_role("region", name=re.compile(r"^Approval: ")).first
    expect(card.locator("code.ja-code")).to_have_text("echo approved-run")
    expect(card).to_contain_text("shell commands need your approval")
    expect(card.get_by_role("button", name="Always allow")).to_be_visible()
    expect(status(panel)).to_have_text("waiting for you (approval of execute_command)")
    shoot(panel, "approval.png")

    card.get_by_role("button", name="Allow", exact=True).click()
    expect(card.locator(".ja-answered")).to_have_text("Allowed")
    tool = panel.locator('.ja-tool[data-tool="execute_command"]').first
    expect(tool).to_have_attribute("data-state", "done")
    tool.locator("summary").first.click()
    expect(tool.locator(".ja-tool-result")).to_contain_text("approved-run")

    second = panel.get_by_role("region", name=re.compile(r"^Approval: ")).nth(1)
    second.get_by_role("button", name="Deny").click()
    expect(second.locator(".ja-answered")).to_have_text("Denied")
    expect(status(panel)).to_have_text("completed")
    out = notebook.run_cell("print([b.text for m in h.history for b in m.tool_results][1])")
    assert out.startswith("The user declined this call.")


def test_an_approval_says_what_always_allow_remembers_and_warns_before_the_click(
    open_notebook, lab
):
    notebook = agent_notebook(
        open_notebook,
        lab,
        "remember",
        [
            call("execute_command", command="echo first"),
            call("execute_command", command="echo second"),
            call("execute_command", command="rm *.tmp"),
            call("create_file", path=".pre-commit-config.yaml", content="repos: []\n"),
            call("task_complete", summary="Done."),
        ],
    )
    panel = start(notebook, "h = %agent act --model $m Look around")
    expect(panel.locator(".ja-sandbox")).to_have_text("commands sandboxed to this folder")
    expect(panel.locator(".ja-sandbox")).to_have_attribute("data-active", "true")

    card = panel.get_by_role("region", name=re.compile(r"^Approval: ")).first
    expect(card.locator(".ja-remember")).to_have_text(
        "“Always allow” remembers: allow echo (no file effects)."
    )
    card.get_by_role("button", name="Always allow").click()
    expect(card.locator(".ja-answered")).to_have_text(
        "Always allowed (allow echo (no file effects))"
    )

    # `echo second` runs unasked; `rm *.tmp` names its files only when it runs
    globbed = panel.get_by_role("region", name=re.compile(r"^Approval: ")).nth(1)
    expect(globbed.locator("code.ja-code")).to_have_text("rm *.tmp")
    expect(globbed.get_by_role("button", name="Always allow")).to_be_hidden()
    expect(globbed.locator(".ja-remember")).to_contain_text("“Always allow” is not offered")
    globbed.get_by_role("button", name="Deny").click()

    # a file that runs later warns, prominently, whatever the rules say
    warned = panel.get_by_role("region", name=re.compile(r"^Approval: ")).nth(2)
    expect(warned.get_by_role("alert", name="Warnings")).to_contain_text(
        ".pre-commit-config.yaml: pre-commit runs the commands it lists at your next commit."
    )
    expect(warned.get_by_role("button", name="Always allow")).to_be_hidden()  # asks each time
    shoot(panel, "approval-warning.png")
    warned.get_by_role("button", name="Deny").click()
    expect(status(panel)).to_have_text("completed")
    out = notebook.run_cell("print(sum(e.kind == 'permission_request' for e in h.events_so_far))")
    assert out == "3"


_KERNEL_OF = """path => Array.from(window.jupyterapp.shell.widgets('main'))
  .find(w => w.context?.path === path && w.content?.widgets !== undefined)
  .sessionContext.session.kernel"""


def _sleep_in_a_cell(page: Any, notebook: Any, seconds: int) -> None:
    """Run ``time.sleep(seconds)`` in the notebook's kernel (not waited for: see
    ``_sleeping``). Its execute request's end is noted, not the kernel's status: while a
    cell runs, a message handled on a subshell makes JupyterLab say the kernel is idle."""
    page.evaluate(
        f"""path => {{
          const future = ({_KERNEL_OF})(path).requestExecute({{
            code: 'import time; time.sleep({seconds})'
          }});
          window.__jaSleeping = true;
          void future.done.then(() => {{ window.__jaSleeping = false; }});
        }}""",
        notebook.path,
    )
    page.wait_for_function(f"path => ({_KERNEL_OF})(path).status === 'busy'", arg=notebook.path)


def _sleeping(page: Any) -> bool:
    return bool(page.evaluate("() => window.__jaSleeping"))


def _slept(page: Any) -> None:
    page.wait_for_function("() => window.__jaSleeping === false")


def test_a_click_while_a_cell_runs_takes_effect_at_once_or_waits_and_says_so(
    open_notebook, lab, page
):
    notebook = agent_notebook(
        open_notebook,
        lab,
        "busy",
        [
            call("execute_command", command="echo now"),
            call("execute_command", command="echo later"),
            call("task_complete", summary="Done."),
        ],
    )
    panel = start(notebook, "h = %agent act --model $m Look around")
    cards = panel.get_by_role("region", name=re.compile(r"^Approval: "))
    note = panel.locator(".ja-wait")
    # With the lab extension the click goes over the agent's subshell: Allow is taken
    # while the user's 5-second cell runs, and nothing says it waits.
    expect(cards.first.get_by_role("button", name="Allow", exact=True)).to_be_enabled()
    _sleep_in_a_cell(page, notebook, 5)
    cards.first.get_by_role("button", name="Allow", exact=True).click()
    expect(cards.first.locator(".ja-answered")).to_have_text("Allowed", timeout=3_000)
    expect(note).to_be_hidden()
    assert _sleeping(page), "the cell ended before the click was taken"
    _slept(page)

    # A frontend without subshells (the extension's event unheard, JupyterLab's comms
    # over subshells off): the kernel reads the click only when the cell ends; the panel
    # says so, and the click is not lost.
    page.evaluate(
        f"""path => {{
          window.__jaHide = event => event.stopImmediatePropagation();
          document.addEventListener('jupyter-agent:control', window.__jaHide, {{ capture: true }});
          ({_KERNEL_OF})(path).commsOverSubshells = 'disabled';
        }}""",
        notebook.path,
    )
    try:
        second = cards.nth(1)
        expect(second.get_by_role("button", name="Allow", exact=True)).to_be_enabled()
        _sleep_in_a_cell(page, notebook, 5)
        second.get_by_role("button", name="Allow", exact=True).click()
        expect(note).to_have_text(
            "Sent. The kernel is running a cell; it reads this when the cell ends."
        )
        expect(second.locator(".ja-answered")).to_be_hidden()  # not taken yet, not lost
        # When the cell ends, the kernel reads the click: allowed, and the note goes.
        expect(second.locator(".ja-answered")).to_have_text("Allowed", timeout=15_000)
        expect(note).to_be_hidden()
        expect(status(panel)).to_have_text("completed")
        _slept(page)
    finally:
        page.evaluate(
            f"""path => {{
              document.removeEventListener('jupyter-agent:control', window.__jaHide, {{ capture: true }});
              delete window.__jaHide;
              ({_KERNEL_OF})(path).commsOverSubshells = 'perCommTarget';
            }}""",
            notebook.path,
        )


# --- a reload ----------------------------------------------------------------------------------


def test_a_page_reload_restores_the_transcript(open_notebook, lab, page):
    notebook = agent_notebook(
        open_notebook,
        lab,
        "reload",
        [call("submit_plan", "Here is the plan, with `code`.", **PLAN)],
    )
    panel = start(notebook, "%agent plan --model $m Clean the sales data")
    expect(status(panel)).to_have_text("plan ready for review")
    # Saved, so the reloaded page has the panel's output (with the widget's model id).
    notebook.save()
    page.reload()
    restored = page.locator(".ja-panel")
    expect(restored).to_have_count(1, timeout=30_000)
    expect(restored.locator(".ja-plan-table tbody tr")).to_have_count(2)
    expect(restored.locator(".ja-user")).to_have_text("Clean the sales data")
    expect(restored.locator(".ja-text code")).to_have_text("code")
    expect(restored.get_by_role("status")).to_have_text("plan ready for review")
