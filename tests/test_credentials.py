"""The API key the user gives: where it goes, and everywhere it must never reach.

Invariants (see ``jupyter_agent/secrets/credentials.py``): a key given for the session lives in the
kernel's memory and the model's client only, never in ``os.environ`` (the agent's commands
inherit it), an event, a trait, a reply, a log record, ``history.jsonl`` or a notebook; a
saved key is in an owner-only file created so atomically, which is refused when others may
read it or when it is a symbolic link. A model looks for its key in code, then the
environment, then the session, then the saved file.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import stat
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from helpers import sent_key
from inline_snapshot import snapshot

from jupyter_agent import Agent, AnthropicModel, ScriptedModel
from jupyter_agent.config.rules import Rule, Rules
from jupyter_agent.errors import MissingAPIKey
from jupyter_agent.jupyter.panel.widget import AgentPanel
from jupyter_agent.secrets import credentials
from jupyter_agent.states import AgentState
from jupyter_agent.testing import Fault, Reply, text, tool_use

KEY = "sk-ant-api03-SECRETSECRETSECRET-0123456789abcdef"


def test_a_saved_key_is_owner_only_from_its_creation_and_written_atomically(monkeypatch) -> None:
    modes: list[int] = []
    real_open = os.open

    def watching_open(path: Any, flags: int, mode: int = 0o777, **kw: Any) -> int:
        if flags & os.O_CREAT:
            modes.append(mode)
        return real_open(path, flags, mode, **kw)

    monkeypatch.setattr(os, "open", watching_open)
    path = credentials.save_key(KEY)
    assert path == credentials.credentials_file()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert modes == [0o600]  # the temporary file was never readable by others
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary file left
    assert credentials.saved_key() == KEY
    # Saved again over a file someone loosened: owner-only again.
    path.chmod(0o644)
    credentials.save_key(KEY + "x")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_the_default_location_is_the_users_settings_folder_never_the_workspace(
    monkeypatch, tmp_path
) -> None:
    monkeypatch.delenv(credentials.LOCATION_VARIABLE)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert credentials.credentials_file() == tmp_path / ".jupyter_agent" / "credentials.json"


def test_a_key_file_others_may_read_is_refused_without_showing_the_key() -> None:
    path = credentials.save_key(KEY)
    path.chmod(0o640)
    with pytest.raises(credentials.CredentialsError, match="may be read by other users") as err:
        credentials.saved_key()
    assert KEY not in str(err.value) and "chmod 600" in str(err.value)
    # A model says so instead of starting, in words.
    with pytest.raises(MissingAPIKey, match="may be read by other users"):
        AnthropicModel().check()


def test_a_key_file_that_is_a_symlink_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps({credentials.FIELD: KEY}))
    elsewhere.chmod(0o600)
    path = credentials.credentials_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(elsewhere)
    with pytest.raises(credentials.CredentialsError, match="symbolic link") as err:
        credentials.saved_key()
    assert KEY not in str(err.value)


def test_logout_removes_the_saved_file() -> None:
    path = credentials.save_key(KEY)
    assert credentials.remove_saved_key() == path
    assert not path.exists()
    assert credentials.remove_saved_key() is None
    assert credentials.saved_key() is None


async def test_keys_are_looked_for_in_code_then_environment_then_session_then_file(
    monkeypatch, messages_server
) -> None:
    async def key_sent(model: AnthropicModel) -> str:
        messages_server.push(Reply([text("ok")]))
        async for _ in model.stream(_request()):
            pass
        return sent_key(messages_server.requests[-1])

    credentials.save_key("file-key-0123456789")
    url = messages_server.url
    assert await key_sent(AnthropicModel(base_url=url)) == "file-key-0123456789"
    credentials.use_for_session("session-key-0123456789")
    assert await key_sent(AnthropicModel(base_url=url)) == "session-key-0123456789"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "env-key-0123456789")
    assert await key_sent(AnthropicModel(base_url=url)) == "env-key-0123456789"
    given = AnthropicModel(base_url=url, api_key="code-key-0123456789")
    assert await key_sent(given) == "code-key-0123456789"
    assert "session-key-0123456789" not in os.environ.values()


def _request() -> Any:
    from jupyter_agent.models import ModelRequest

    return ModelRequest(system="", messages=[{"role": "user", "content": "hi"}], tools=[])


async def test_a_key_from_the_panel_reaches_the_api_and_nothing_else(
    workspace: Path, messages_server, caplog
) -> None:
    """The attack test: the key typed in the panel, then a run whose model asks for the
    environment and the credentials file with shell commands. The key must reach the API
    (as its header) and nothing else: not os.environ, a child process, the tool results
    sent to the model, an event, a trait, a reply, a log record or the session files."""
    caplog.set_level(logging.DEBUG)
    (workspace / "leak.txt").write_text(f"found it: {KEY}\n")  # as if the agent dug it up
    messages_server.script(
        [
            Reply([tool_use("execute_command", {"command": "env; cat leak.txt"})]),
            Reply([text("Done.")]),
        ]
    )
    agent = Agent(
        "actor",
        AnthropicModel(base_url=messages_server.url),
        workspace=workspace,
        policy=Rules([Rule.allow("execute_command")]),
    )
    panel = AgentPanel(agent)
    sent: list[Mapping[str, Any]] = []
    panel.outbox = sent.append
    traits: list[Any] = []
    panel.observe(lambda change: traits.append(change["new"]))

    assert panel.model_ready is False
    assert "No Anthropic API key" in panel.model_setup
    panel.receive({"type": "command", "id": "k", "name": "set_key", "key": KEY, "save": True})
    assert panel.model_ready is True and panel.model_setup == ""
    panel.receive({"type": "command", "id": "s", "name": "send", "text": "show me your env"})
    handle = agent.handle
    assert handle is not None
    await handle.wait()
    panel.receive({"type": "hello", "view": "v"})
    panel.close()

    assert handle.state is AgentState.completed, handle.stop_message
    assert [r["ok"] for r in sent if r["type"] == "reply"] == [True, True]
    assert all(sent_key(r) == KEY for r in messages_server.requests)
    assert KEY not in os.environ.values()
    child = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-c", "import os; print(os.environ)"],
        capture_output=True,
        text=True,
    )
    assert KEY not in child.stdout
    # What the model read back: the command ran, the key was hidden from its output.
    result = json.dumps(messages_server.requests[1].body["messages"], ensure_ascii=False)
    assert "found it: ‹secret:" in result and KEY not in result
    assert "PATH=" in result  # env ran
    everywhere = {
        "events": json.dumps([repr(e) for e in handle.events_so_far]),
        "messages to the view": json.dumps(sent),
        "traits": json.dumps([repr(t) for t in traits]),
        "panel state": json.dumps({k: repr(v) for k, v in panel.get_state().items()}),
        "log": "\n".join(r.getMessage() for r in caplog.records),
        "session files": "".join(
            p.read_text(errors="replace")
            for p in workspace.rglob("*")
            if p.is_file() and p.name != "leak.txt"
        ),
    }
    for where, text_ in everywhere.items():
        assert KEY not in text_, where
        assert KEY[8:30] not in text_, where
    # Saved owner-only, outside the workspace.
    assert credentials.saved_key() == KEY
    assert workspace not in credentials.credentials_file().parents


async def test_a_message_sent_before_any_key_waits_and_the_set_up_box_says_why_once(
    workspace: Path, messages_server
) -> None:
    """No key: the set-up box says so in one sentence (its key field and its list show the
    ways); a message sent meanwhile starts no run that would fail saying it again (an error
    line, the status line), it waits in the box and starts once a key is given."""
    messages_server.script([Reply([text("Hello with a key.")])])
    agent = Agent("actor", AnthropicModel(base_url=messages_server.url), workspace=workspace)
    panel = AgentPanel(agent)
    sent: list[Mapping[str, Any]] = []
    panel.outbox = sent.append
    assert panel.model_setup == "No Anthropic API key found."
    panel.receive({"type": "command", "id": "s", "name": "send", "text": "Say hello"})
    assert agent.handle is None  # no run, so no error repeating the box
    assert panel.waiting_task == "Say hello"
    assert [r["ok"] for r in sent if r["type"] == "reply"] == [True]
    with pytest.raises(MissingAPIKey) as raised:  # a program or %agent hears every way
        agent.model.check()
    assert "ANTHROPIC_API_KEY" in str(raised.value) and "ollama" in str(raised.value)
    panel.receive({"type": "command", "id": "k", "name": "set_key", "key": KEY})
    handle = agent.handle
    assert handle is not None and handle.task == "Say hello"
    await handle.wait()
    panel.close()
    assert handle.state is AgentState.completed and panel.waiting_task == ""


def test_a_key_is_refused_when_it_cannot_be_one_without_echoing_it(workspace: Path) -> None:
    async def scenario() -> list[Mapping[str, Any]]:
        agent = Agent("planner", AnthropicModel(), workspace=workspace)
        panel = AgentPanel(agent)
        sent: list[Mapping[str, Any]] = []
        panel.outbox = sent.append
        panel.receive({"type": "command", "id": "k", "name": "set_key", "key": "two words-secret"})
        panel.receive({"type": "command", "id": "e", "name": "set_key", "key": "   "})
        panel.close()
        return sent

    replies = asyncio.run(scenario())
    assert [r["ok"] for r in replies] == [False, False]
    assert "does not look like an API key" in replies[0]["error"]
    assert "secret" not in replies[0]["error"]
    assert replies[1]["error"] == "Enter an API key first."
    assert credentials.session_key() is None


def test_a_scripted_model_is_ready_without_a_key(workspace: Path) -> None:
    async def scenario() -> tuple[bool, str]:
        panel = AgentPanel(Agent("planner", ScriptedModel([]), workspace=workspace))
        try:
            return panel.model_ready, panel.model_setup
        finally:
            panel.close()

    assert asyncio.run(scenario()) == (True, "")


# --- what the user reads when the API fails ------------------------------------------------


async def test_a_rejected_key_says_so_and_the_panel_asks_for_another(
    workspace: Path, messages_server
) -> None:
    credentials.use_for_session("wrong-key-0123456789")
    messages_server.push(Fault.status(401))
    agent = Agent("actor", AnthropicModel(base_url=messages_server.url), workspace=workspace)
    panel = AgentPanel(agent)
    panel.outbox = lambda _: None
    assert panel.model_ready
    handle = await agent.run("go")
    assert handle.stop_message == snapshot(
        "The Anthropic API rejected the API key (401). Check the key in the panel's key "
        "field, or enter it again with %agent login."
    )
    error = next(e for e in handle.events_so_far if e.kind == "error")
    assert error.message == handle.stop_message
    assert panel.model_ready is False
    assert "rejected the API key" in panel.model_setup
    panel.receive({"type": "command", "id": "k", "name": "set_key", "key": "right-key-0123456789"})
    assert panel.model_ready is True
    panel.close()


async def test_an_overloaded_api_says_how_often_it_was_retried(
    workspace: Path, messages_server, monkeypatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    model = AnthropicModel(base_url=messages_server.url, sdk_options={"max_retries": 2})
    messages_server.script([Fault.status(529)] * 3)
    handle = await Agent("actor", model, workspace=workspace).run("go")
    assert handle.state is AgentState.error
    assert len(messages_server.requests) == 3
    message = handle.stop_message
    assert message.startswith("The Anthropic API was overloaded; retried 2 times over ")
    assert message.endswith(" s. Try again in a minute.")
    assert "Error" not in message


async def test_an_unreachable_api_names_the_address_and_the_variable(
    workspace: Path, monkeypatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    model = AnthropicModel(sdk_options={"max_retries": 1})
    handle = await Agent("actor", model, workspace=workspace).run("go")
    assert handle.state is AgentState.error
    message = handle.stop_message
    assert message.startswith("Could not reach the Anthropic API at http://127.0.0.1:9")
    assert "retried 1 time over" in message
    assert message.endswith("Check the network, or ANTHROPIC_BASE_URL (now http://127.0.0.1:9).")


async def test_through_a_callers_client_retries_are_not_counted_but_said(
    workspace: Path, messages_server, monkeypatch
) -> None:
    import anthropic

    client = anthropic.AsyncAnthropic(
        base_url=messages_server.url, api_key="test-key", max_retries=1
    )
    messages_server.script([Fault.status(529)] * 2)
    handle = await Agent("actor", AnthropicModel(client=client), workspace=workspace).run("go")
    assert handle.stop_message == snapshot(
        "The Anthropic API was overloaded; after the SDK's retries. Try again in a minute."
    )


# --- Retry ------------------------------------------------------------------------------------


async def test_retry_sends_the_last_message_again(workspace: Path, messages_server) -> None:
    credentials.use_for_session("a-key-0123456789")
    messages_server.script([Fault.status(400, message="bad luck"), Reply([text("Now it works.")])])
    agent = Agent("actor", AnthropicModel(base_url=messages_server.url), workspace=workspace)
    panel = AgentPanel(agent)
    sent: list[Mapping[str, Any]] = []
    panel.outbox = sent.append
    first = await agent.run("Sum the column")
    assert first.state is AgentState.error
    panel.receive({"type": "command", "id": "r", "name": "retry"})
    assert agent.handle is not None
    again = await agent.handle.wait()
    panel.close()
    assert again.summary == "Now it works."
    assert [r["ok"] for r in sent if r["type"] == "reply"] == [True]
    last_user = messages_server.requests[1].body["messages"][-1]
    assert "Sum the column" in json.dumps(last_user)


def test_retry_with_nothing_sent_yet_says_so(workspace: Path) -> None:
    async def scenario() -> list[Mapping[str, Any]]:
        panel = AgentPanel(Agent("planner", ScriptedModel([]), workspace=workspace))
        sent: list[Mapping[str, Any]] = []
        panel.outbox = sent.append
        panel.receive({"type": "command", "id": "r", "name": "retry"})
        panel.close()
        return sent

    (reply,) = asyncio.run(scenario())
    assert reply["ok"] is False
    assert reply["error"] == "There is no message to retry yet: type one and send it."
