"""Secrets by value: what the agent knows is secret never reaches the model, the events or
the session files, by any tool, however it is written out."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path

import nbformat
import pytest

from jupyter_agent import Agent, AnthropicModel
from jupyter_agent.permissions import AllowAll
from jupyter_agent.secrets.redaction import Secrets, environment_secrets
from jupyter_agent.testing import Reply, text, tool_use

KEY = "sk-ant-api03-Zq8xKf3LmN0pR7sT2vW9yB4cD6eG1hJ5kQ0uX3zA8nE2"
PAT = "github_pat_11ABCDEFG0123456789_abcdefghijKLMNOPQRSTUVWXYZ012345"
DB_PASS = "correct horse battery staple"
DSN_PASSWORD = "Sup3r-S3cret-DB"

ENV = {
    "ANTHROPIC_API_KEY": KEY,
    "GH_PAT": PAT,
    "DB_PASS": DB_PASS,
    "DATABASE_URL": f"postgresql://analyst:{DSN_PASSWORD}@db.internal:5432/sales",
    "HOME": "/home/user",
    "MAX_TOKENS": "4096",
    "TOKENIZERS_PARALLELISM": "false",
}


def secrets() -> Secrets:
    return Secrets(lambda: environment_secrets(ENV))


def test_the_environments_secrets_are_found_by_name_and_inside_urls():
    found = environment_secrets(ENV)
    assert found == {
        "ANTHROPIC_API_KEY": KEY,
        "GH_PAT": PAT,
        "DB_PASS": DB_PASS,
        "DATABASE_URL password": DSN_PASSWORD,
    }


@pytest.mark.parametrize(
    ("written", "shown"),
    [
        (f"key={KEY}", "key=‹secret:ANTHROPIC_API_KEY›"),
        (f"GH_PAT={PAT}\nDB_PASS={DB_PASS}", "GH_PAT=‹secret:GH_PAT›\nDB_PASS=‹secret:DB_PASS›"),
        (f"url: postgresql://analyst:{DSN_PASSWORD}@db", "‹secret:DATABASE_URL password›"),
        (f"{KEY[:30]}\n{KEY[30:]}", "‹secret:ANTHROPIC_API_KEY›"),  # over two lines
        (f'k = ("{KEY[:20]}"\n     "{KEY[20:]}")', "‹secret:ANTHROPIC_API_KEY›"),  # in pieces
        (f"[('password', '{DB_PASS}')]", "‹secret:DB_PASS›"),  # a pair a model may print
    ],
)
def test_a_known_value_is_hidden_however_it_is_written(written, shown):
    hidden = secrets().redact(written)
    assert shown in hidden
    for value in (KEY, PAT, DB_PASS, DSN_PASSWORD):
        assert value not in hidden


@pytest.mark.parametrize("prefix", ["", "x", "xy", "export GH_PAT=", "header: Basic "])
def test_a_base64_encoded_secret_is_hidden_at_any_offset(prefix):
    encoded = base64.b64encode(f"{prefix}{PAT}!".encode()).decode()
    hidden = secrets().redact(f"blob: {encoded}")
    assert "‹secret:GH_PAT›" in hidden


def test_registered_values_and_credential_shapes_are_hidden_too():
    s = secrets()
    s.add("my-own-warehouse-password", "warehouse")
    hidden = s.redact("pw my-own-warehouse-password; stripe sk_live_51HABCDEFGHIJKLMNOPQRSTUV")
    assert "‹secret:warehouse›" in hidden
    assert "sk_live_51HABCDEFGHIJKLMNOPQRSTUV" not in hidden


def test_harmless_text_is_left_alone():
    s = secrets()
    for harmless in ("max tokens 4096", "TOKENIZERS_PARALLELISM=false", "/home/user/data"):
        assert s.redact(harmless) == harmless


def test_a_changed_environment_is_seen_at_the_next_pass():
    env = dict(ENV)
    s = Secrets(lambda: environment_secrets(env))
    env["NEW_API_KEY"] = "brand-new-secret-value-123"
    assert s.redact("brand-new-secret-value-123") == "‹secret:NEW_API_KEY›"


# --- the model's own key, through every tool ---------------------------------------------------


def _notebook_with_the_key(path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("import os; print(os.environ['ANTHROPIC_API_KEY'])")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=KEY + "\n")]
    nb.cells = [cell]
    nbformat.write(nb, path)


async def test_the_models_key_reaches_neither_the_model_nor_any_file_by_any_tool(
    workspace, messages_server, monkeypatch
):
    """A model that tries every way to read the key it runs on: from the environment (a
    command's env, the kernel's /proc, a file the user left), a notebook's outputs, a
    search, base64. The loopback Messages API records every request body; none holds it,
    and neither does any file of the session."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    (workspace / "config.py").write_text(f'ANTHROPIC_KEY = "{KEY}"\n')
    (workspace / "key.b64").write_text(base64.b64encode(KEY.encode()).decode() + "\n")
    _notebook_with_the_key(workspace / "analysis.ipynb")
    attempts = [
        ("execute_command", {"command": "env; echo $ANTHROPIC_API_KEY"}),
        ("execute_command", {"command": "cat /proc/$PPID/environ | tr '\\0' '\\n'"}),
        ("execute_command", {"command": "cat config.py; base64 -d key.b64"}),
        ("execute_command", {"command": "python3 -c \"print(open('config.py').read()[:40])\""}),
        ("read_file", {"path": "config.py"}),
        ("read_file", {"path": "analysis.ipynb"}),
        ("read_file", {"path": "key.b64"}),
        ("grep", {"pattern": "sk-ant", "path": "."}),
        ("read_notebook", {}),
    ]
    replies = [Reply([tool_use(name, args)], stop_reason="tool_use") for name, args in attempts]
    messages_server.script([*replies, Reply([text("done")])])
    model = AnthropicModel(base_url=messages_server.url, retry_delay=0.001)
    agent = Agent(
        "actor",
        model,
        workspace=workspace,
        notebook=workspace / "analysis.ipynb",
        policy=AllowAll(),
    )
    # Even allowed everything, a command that may reach a sensitive location (the kernel's
    # /proc/PID/environ) asks: the user here says yes to each.
    handle = agent.start("find the API key")
    while not handle.done:
        if handle.pending_approval is not None:
            handle.approve(True)
        await asyncio.sleep(0.01)
    assert len(messages_server.requests) == len(attempts) + 1
    for request in messages_server.requests:
        assert KEY not in request.raw.decode("utf-8", "replace")
        assert KEY[10:40] not in request.raw.decode("utf-8", "replace")
    results = [r.text for m in agent.history for r in m.tool_results]
    assert any("‹secret:ANTHROPIC_API_KEY›" in r for r in results)  # it was there, hidden
    for path in (workspace / ".jupyter_agent").rglob("*"):
        if path.is_file():
            assert KEY not in path.read_text(errors="replace"), path
    events = json.dumps([repr(e) for h in [agent.handle] if h for e in h.events_so_far])
    assert KEY not in events


async def test_a_settings_file_names_more_secret_variables(workspace, monkeypatch, tmp_path):
    """[secrets] environment hides variables whose names do not say secret; it only ever
    hides more, so even an untrusted folder's settings may set it."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MYCO_SERVICE", "myco-service-value-3141")
    monkeypatch.setenv("REGION_NAME", "eu-west-3-region")
    folder = workspace / ".jupyter_agent"
    folder.mkdir()
    (folder / "settings.toml").write_text('[secrets]\nenvironment = ["MYCO_*"]\n')
    agent = Agent("actor", "scripted-never-called", workspace=workspace, policy=AllowAll())
    assert not agent.trusted
    shown = agent.secrets.redact("myco-service-value-3141 in eu-west-3-region")
    assert shown == "‹secret:MYCO_SERVICE› in eu-west-3-region"
