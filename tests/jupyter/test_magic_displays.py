"""What a %agent cell leaves in the notebook: the live panel's display, which becomes a
static record of its own runs once a later cell shows the panel (HTML that escapes all
the model wrote, and text), the transcript as text where widgets cannot show (nbclient),
a replay's usage without a cost, and terminal IPython printing the run as it goes and
asking its questions at the prompt.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import nbformat
import pytest
from helpers import PLAN
from kernels import Kernel, Result
from magic_kernel import plan_turns, scripted

pytestmark = pytest.mark.slow  # real kernels


# --- frontends without widgets ---------------------------------------------------------------


def test_nbclient_output_shows_the_transcript(tmp_path: Path) -> None:
    from nbclient import NotebookClient

    (tmp_path / "turns.json").write_text(json.dumps(plan_turns()))
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("%load_ext jupyter_agent"),
        nbformat.v4.new_code_cell(
            "h = %agent plan --model scripted:turns.json Clean the sales data"
        ),
        nbformat.v4.new_code_cell("await h.wait();"),
    ]
    client = NotebookClient(
        nb, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    outputs = nb.cells[1].outputs
    assert len(outputs) == 1
    text = outputs[0]["data"]["text/plain"]
    assert "Scripted replay" in text
    assert "I read the notebook. Here is the plan." in text
    assert "| 2 | Drop duplicate rows |" in text
    assert "✔ completed" in text


def test_nbclient_an_approval_nobody_can_give_ends_the_run_and_the_notebook_says_so(
    tmp_path: Path,
) -> None:
    from nbclient import NotebookClient

    turns = [
        {"tool_calls": [{"name": "execute_command", "input": {"command": "rm scratch.tmp"}}]},
        {"tool_calls": [{"name": "task_complete", "input": {"summary": "Done."}}]},
    ]
    (tmp_path / "turns.json").write_text(json.dumps(turns))
    (tmp_path / "scratch.tmp").write_text("keep me")
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("%load_ext jupyter_agent"),
        nbformat.v4.new_code_cell("h = %agent act --model scripted:turns.json Tidy up"),
        nbformat.v4.new_code_cell("await h.wait()\nprint(h.stop_reason)"),
    ]
    # No timeout of the runner's: before, the wait for the approval never ended.
    client = NotebookClient(
        nb, timeout=None, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    assert nb.cells[2].outputs[0]["text"].strip() == "unattended"
    assert (tmp_path / "scratch.tmp").read_text() == "keep me"
    # The stored notebook says what waited and why the run stopped.
    text = nb.cells[1].outputs[0]["data"]["text/plain"]
    assert "execute_command (Run: rm scratch.tmp) needs approval and nobody can give it" in text
    assert "no view of the agent's panel opened in this kernel" in text


def _updates(kernel: Kernel, display_id: str, since: int = 0) -> list[dict[str, Any]]:
    return [
        m["content"]["data"]
        for m in kernel.seen[since:]
        if m["msg_type"] == "update_display_data"
        and m["content"]["transient"]["display_id"] == display_id
    ]


def _slot_records(kernel: Kernel, since: int = 0) -> list[dict[str, Any]]:
    """What the displays' slots (ipywidgets.Output) were set to show."""
    return [
        output["data"]
        for m in kernel.seen[since:]
        if m["msg_type"] == "comm_msg" and m["content"]["data"].get("method") == "update"
        for output in m["content"]["data"].get("state", {}).get("outputs", [])
    ]


def _display_id(result: Result) -> str:
    (display,) = result.displays
    return str(display["transient"]["display_id"])


def test_a_later_cell_turns_the_earlier_display_into_a_record_of_its_own_runs(
    kernel: Kernel,
) -> None:
    scripted(kernel, "m", [*plan_turns(), {"text": "Second answer."}, {"text": "Third."}])
    first = kernel.ok("h = %agent plan --model $m Clean the sales data")
    one = _display_id(first)
    kernel.ok("await h.wait()")
    mark = len(kernel.seen)
    second = kernel.ok("h = %agent act Say the second thing")
    two = _display_id(second)
    assert two != one
    # The new display is the live panel (a widget); the first one is now a record.
    assert "application/vnd.jupyter.widget-view+json" in second.displays[0]["data"]
    (record,) = _updates(kernel, one, mark)
    assert "application/vnd.jupyter.widget-view+json" not in record
    text, html = record["text/plain"], record["text/html"]
    assert "Clean the sales data" in text
    assert "| 2 | Drop duplicate rows |" in text
    assert "Second answer" not in text
    assert 'class="ja-record"' in html
    assert ">Drop duplicate rows</td>" in html
    assert html.count("<table>") == 1
    assert "Second answer" not in html
    # A widget frontend sees it in the display's slot (it gets no update of another cell).
    assert record in _slot_records(kernel, mark)

    # Without a widget frontend, the live display's text is its own run only.
    kernel.ok("await h.wait()")
    kernel.ok("pass")  # a cell's start and end publish the text
    live = _updates(kernel, two)[-1]["text/plain"]
    assert "Second answer." in live
    assert "Clean the sales data" not in live

    # The first cell run again: its new display is the live one; the second is frozen.
    mark = len(kernel.seen)
    again = kernel.ok("h = %agent act Say the third thing")
    three = _display_id(again)
    (frozen,) = _updates(kernel, two, mark)
    assert "Second answer." in frozen["text/plain"]
    assert "Second answer." in frozen["text/html"]
    assert "Third" not in frozen["text/plain"]
    assert "Clean the sales data" not in frozen["text/html"]
    assert _updates(kernel, one, mark) == []  # a record stays as it was
    assert three not in (one, two)


def test_the_record_escapes_everything_the_model_wrote(kernel: Kernel) -> None:
    from html.parser import HTMLParser

    hostile = '<img src=x onerror="alert(1)"> <script>alert(2)</script> **bold** [a](javascript:x)'
    plan = {**PLAN, "goal": hostile, "risks": ["<b onmouseover=alert(3)>risk</b>"]}
    turns = [{"text": hostile, "tool_calls": [{"name": "submit_plan", "input": plan}]}]
    scripted(kernel, "m", turns)
    kernel.ok(f"h = %agent plan --model $m {hostile}\nawait h.wait()")
    mark = len(kernel.seen)
    kernel.ok("%agent")
    html = _slot_records(kernel, mark)[0]["text/html"]
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in html
    assert "&lt;script&gt;" in html

    class Tags(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.found: set[str] = set()
            self.attributes: list[tuple[str, str | None]] = []

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            self.found.add(tag)
            self.attributes.extend(attrs)

    tags = Tags()
    tags.feed(html)
    allowed = {"div", "p", "small", "strong", "em", "ul", "li", "br"}
    assert tags.found <= allowed | {"table", "thead", "tbody", "tr", "th", "td"}
    assert set(tags.attributes) == {("class", "ja-record"), ("style", "text-align: left")}


def test_a_replay_shows_tokens_but_no_cost(kernel: Kernel) -> None:
    scripted(kernel, "m", plan_turns())
    kernel.ok("h = %agent plan --model $m Clean the sales data\nawait h.wait()")
    out = kernel.ok(
        "from jupyter_agent.jupyter.kernel.agent import kernel_agent\n"
        "panel = kernel_agent().panel\n"
        "print(sorted(panel.usage))\nprint(panel.text())"
    )
    assert "'run_input_tokens'" in out.stdout
    assert "cost" not in out.stdout
    assert "tokens: " in out.stdout
    assert "$" not in out.stdout


def test_nbclient_stores_each_display_with_its_own_runs(tmp_path: Path) -> None:
    from nbclient import NotebookClient

    turns = [*plan_turns(), {"text": "The second run's answer."}]
    (tmp_path / "turns.json").write_text(json.dumps(turns))
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("%load_ext jupyter_agent"),
        nbformat.v4.new_code_cell(
            "h = %agent plan --model scripted:turns.json Clean the sales data"
        ),
        nbformat.v4.new_code_cell("await h.wait();"),
        nbformat.v4.new_code_cell("h = %agent act Now the second thing"),
        nbformat.v4.new_code_cell("await h.wait();"),
    ]
    client = NotebookClient(
        nb, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    (first,) = nb.cells[1].outputs
    (second,) = nb.cells[3].outputs
    assert "application/vnd.jupyter.widget-view+json" not in first["data"]
    assert "| 2 | Drop duplicate rows |" in first["data"]["text/plain"]
    assert "second" not in first["data"]["text/plain"]
    assert ">Drop duplicate rows</td>" in first["data"]["text/html"]
    text = second["data"]["text/plain"]
    assert "The second run's answer." in text
    assert "Drop duplicate rows" not in text
    assert "<td" not in second["data"]["text/html"]


def test_terminal_ipython_prints_the_run_and_asks_at_the_prompt(tmp_path: Path) -> None:
    ask = {
        "tool_calls": [
            {
                "name": "ask_user",
                "input": {
                    "question": "Which column?",
                    "options": [{"label": "Price", "value": "price"}],
                },
            }
        ]
    }
    done = {"tool_calls": [{"name": "task_complete", "input": {"summary": "Used price."}}]}
    (tmp_path / "turns.json").write_text(json.dumps([ask, done]))
    code = textwrap.dedent(
        """\
        %load_ext jupyter_agent
        h = %agent act --model scripted:turns.json Pick a column
        print("STATE", h.state.value, h.summary)
        """
    )
    script = tmp_path / "run.ipy"
    script.write_text(code)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "IPython",
            "--quick",
            "--no-banner",
            "--colors=nocolor",
            str(script),
        ],
        cwd=tmp_path,
        input="price\n",
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"},
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "▶ actor on scripted" in out and "Scripted replay" in out
    assert "? Which column?" in out
    assert "→ Price" in out
    assert "STATE completed Used price." in out
