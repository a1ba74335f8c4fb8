"""Setting up the model from the panel, in a real JupyterLab in headless Chromium.

The kernel starts with no key anywhere (no ``ANTHROPIC_API_KEY``, no saved credentials) and
``ANTHROPIC_BASE_URL`` pointing at a loopback Messages API server run by the test, so the
real ``anthropic`` client answers offline. The panel must say that a key is needed before
anything is typed, take one from its masked field, answer a message with it, show an API
failure as a sentence with a Retry button that works, and never put the key in the page or
the notebook.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from helpers import sent_key
from panel_ui import in_every_place, send, shoot, start, status
from playwright.sync_api import expect

from jupyter_agent.testing import Fault, MessagesServer, Reply, text

KEY = "sk-ant-api03-BROWSERBROWSER-0123456789abcdef"


def without_a_key(notebook: Any, api: MessagesServer, tmp_path: Path) -> Any:
    """``notebook`` with the extension loaded in a kernel that finds no key anywhere, its
    Messages API the test's loopback ``api``."""
    notebook.run_cell(
        "import os\n"
        "for name in ('ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'JUPYTER_AGENT_MODEL'):\n"
        "    os.environ.pop(name, None)\n"
        f"os.environ['ANTHROPIC_BASE_URL'] = {api.url!r}\n"
        f"os.environ['JUPYTER_AGENT_CREDENTIALS'] = {str(tmp_path / 'credentials.json')!r}\n"
        "%load_ext jupyter_agent"
    )
    return notebook


def test_a_key_from_the_panel_gets_answers_and_a_failure_can_be_retried(
    open_notebook: Any, lab: Any, tmp_path: Path
) -> None:
    with MessagesServer() as api:
        api.script(
            [
                Reply([text("Hello from the loopback API.")]),
                *[Fault.status(529)] * 3,  # the first try and the SDK's two retries
                Reply([text("Second answer, after Retry.")]),
            ]
        )
        notebook = without_a_key(open_notebook("setup.ipynb"), api, tmp_path)
        panel = start(notebook, "%agent")

        # Before anything is typed: not "ready", but the set-up box.
        setup = panel.locator("form.ja-setup")
        expect(setup).to_be_visible()
        expect(status(panel)).to_have_text("set-up needed")
        expect(setup).to_contain_text("No Anthropic API key found")
        key_field = panel.get_by_label("API key")
        expect(key_field).to_have_attribute("type", "password")
        expect(key_field).to_have_attribute("autocomplete", "off")
        shoot(panel, "setup.png")

        key_field.fill(KEY)
        panel.get_by_role("button", name="Use for this session").click()
        expect(setup).to_be_hidden()
        expect(status(panel)).to_have_text("ready")
        expect(key_field).to_have_value("")

        message = panel.get_by_label("Message")
        send = panel.get_by_role("button", name="Send", exact=True)
        send.click()  # an empty box
        expect(panel.locator(".ja-errors")).to_contain_text("Type a message first.")

        message.fill("Say hello")
        send.click()
        transcript = panel.locator(".ja-transcript")
        expect(transcript).to_contain_text("Hello from the loopback API.")
        assert sent_key(api.requests[0]) == KEY

        # The API is overloaded: a sentence saying what was retried, and Retry.
        message.fill("And again")
        send.click()
        error = transcript.locator(".ja-error").last
        expect(error).to_contain_text("The Anthropic API was overloaded; retried 2 times over")
        expect(error).not_to_contain_text("ModelError")
        expect(status(panel)).to_contain_text("error")
        error.get_by_role("button", name="Retry").click()
        expect(transcript).to_contain_text("Second answer, after Retry.")
        assert len(api.requests) == 5
        assert "And again" in str(api.requests[-1].body["messages"][-1])

        # The key is in no part of the page, nor in the saved notebook.
        assert KEY not in panel.evaluate("panel => panel.outerHTML")
        notebook.save()
        assert KEY not in (lab.root / "setup.ipynb").read_text()
        assert not (tmp_path / "credentials.json").exists()  # not saved: not asked to


def test_without_any_key_the_model_picker_switches_to_a_local_server(
    open_notebook: Any, lab: Any, tmp_path: Path
) -> None:
    """No key anywhere: the set-up box names the other ways, the picker lists the model of
    the user's settings (an OpenAI-compatible server, here a loopback one played by the
    real openai client), choosing it makes the agent ready, and it answers; its price is
    unknown and the panel says so rather than $0."""
    from jupyter_agent.testing import ChatCompletionsServer

    home = tmp_path / "home"
    (home / ".jupyter_agent").mkdir(parents=True)
    with ChatCompletionsServer() as local:
        local.push(Reply([text("Hello from the local model.")]))
        model = f"openai-compatible:local-llm@{local.url}/v1"
        (home / ".jupyter_agent" / "settings.toml").write_text(f'[models]\nchoices = ["{model}"]\n')
        notebook = open_notebook("picker.ipynb")
        notebook.run_cell(
            "import os\n"
            "for name in ('ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'JUPYTER_AGENT_MODEL',"
            " 'OPENAI_API_KEY', 'OPENAI_BASE_URL'):\n"
            "    os.environ.pop(name, None)\n"
            f"os.environ['HOME'] = {str(home)!r}\n"
            "os.environ['OLLAMA_HOST'] = '127.0.0.1:9'\n"
            f"os.environ['JUPYTER_AGENT_CREDENTIALS'] = {str(tmp_path / 'credentials.json')!r}\n"
            "%load_ext jupyter_agent"
        )
        panel = start(notebook, "%agent")
        setup = panel.locator("form.ja-setup")
        expect(setup).to_be_visible()
        expect(setup).to_contain_text("ollama:qwen3")
        picker = panel.get_by_label("Model", exact=True)
        expect(picker).to_be_visible()
        expect(picker.locator("option")).to_have_text(["claude-sonnet-4-6 (set-up needed)", model])
        picker.select_option(model)
        expect(setup).to_be_hidden()
        expect(status(panel)).to_have_text("ready")
        expect(panel.locator(".ja-model")).to_have_text("local-llm")
        expect(panel.locator(".ja-model-notes")).to_contain_text("price is unknown")

        panel.get_by_label("Message").fill("Say hello")
        panel.get_by_role("button", name="Send", exact=True).click()
        expect(panel.locator(".ja-transcript")).to_contain_text("Hello from the local model.")
        expect(panel.locator(".ja-usage")).to_contain_text("cost unknown")
        assert local.requests[0].body["model"] == "local-llm"


def test_a_first_plan_before_any_key_waits_in_the_set_up_box_and_then_runs(
    open_notebook: Any, lab: Any, tmp_path: Path
) -> None:
    """The README's first step with no key yet: the panel shows, its set-up box says why
    and shows the task, nothing is red; the key given, that very task is planned."""
    with MessagesServer() as api:
        api.script([Reply([text("Here is how I would clean it.")])])
        notebook = without_a_key(open_notebook("first.ipynb"), api, tmp_path)
        panel = start(notebook, "%agent plan Clean the sales data")
        setup = panel.locator("form.ja-setup")
        expect(setup).to_be_visible()
        expect(setup.locator(".ja-setup-task")).to_have_text(
            "Your task waits here and starts once the model can be called: “Clean the sales data”"
        )
        expect(status(panel)).to_have_text("set-up needed")
        stderr = "[data-mime-type='application/vnd.jupyter.stderr']"
        expect(notebook.cells.last.locator(stderr)).to_have_count(0)  # nothing red
        shoot(panel, "setup-waiting-task.png")

        panel.get_by_label("API key").fill(KEY)
        panel.get_by_role("button", name="Use for this session").click()
        expect(setup).to_be_hidden()
        expect(panel.locator(".ja-transcript")).to_contain_text("Here is how I would clean it.")
        assert "Clean the sales data" in str(api.requests[0].body["messages"][0])


def test_set_up_says_no_key_once_keeps_a_message_and_says_a_wrong_key_at_once(
    open_notebook: Any, lab: Any, page: Any, tmp_path: Path
) -> None:
    """No key: the set-up box says so once (not again in the transcript and the status
    line), names only ways to get going that are on screen, and says "Enter an API key
    first." next to the key field, which names it; a message sent meanwhile waits in the
    box. A wrong key: the API's 401 is said at once, after one request, no retry."""
    with MessagesServer() as api:
        api.script([Fault.status(401), Reply([text("A retried key is never sent.")])])
        notebook = without_a_key(open_notebook("no_key.ipynb"), api, tmp_path)
        panel = start(notebook, "%agent")
        notebook.run_cell(  # as long as a person takes to find a key: the SDK is imported
            "from jupyter_agent.models import _preload\n_preload.preload('anthropic').result(60)"
        )
        setup = panel.locator("form.ja-setup")
        expect(setup).to_be_visible()
        expect(setup.locator(".ja-setup-why")).to_have_text("No Anthropic API key found.")
        more = setup.locator("details.ja-setup-more")
        expect(panel.get_by_label("Model", exact=True)).to_be_hidden()
        expect(more).not_to_contain_text("in Model")  # a picker that is not on screen
        expect(more).to_contain_text("%agent model openai:gpt-5")

        # An empty key: said by the field, which names it; not in the line far below.
        panel.get_by_role("button", name="Use for this session").click()
        key_field = panel.get_by_label("API key")
        problem = setup.locator(".ja-key-problem")
        expect(problem).to_have_text("Enter an API key first.")
        expect(key_field).to_have_attribute("aria-invalid", "true")
        expect(key_field).to_be_focused()
        assert key_field.get_attribute("aria-describedby") == problem.get_attribute("id")
        expect(key_field).to_have_accessible_description("Enter an API key first.")
        expect(panel.locator(".ja-errors")).not_to_contain_text("Enter an API key")

        # A message before any key: it waits in the box; no run fails saying it again.
        send(panel, "Say hello")
        expect(setup.locator(".ja-setup-task")).to_contain_text("“Say hello”")
        expect(status(panel)).to_have_text("set-up needed")
        expect(panel.locator(".ja-transcript .ja-error")).to_have_count(0)
        expect(panel.get_by_text("No Anthropic API key found")).to_have_count(1)
        assert in_every_place(page, notebook, "setup-no-key") == []

        # A wrong key: the waiting message is sent, and the 401 comes back at once.
        key_field.fill(KEY)
        started = time.monotonic()
        panel.get_by_role("button", name="Use for this session").click()
        expect(setup.locator(".ja-setup-why")).to_contain_text("rejected the API key (401)")
        took = time.monotonic() - started
        expect(key_field).not_to_have_attribute("aria-invalid", "true")
        assert len(api.requests) == 1  # not retried
        assert took < 10, f"the 401 took {took:.1f} s"
        print(f"\n401 shown {took:.2f} s after the key was given")
        assert in_every_place(page, notebook, "setup-key-rejected") == []
