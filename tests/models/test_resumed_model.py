"""A saved session goes on with the model it ran on, as the user named it (a settings
alias, a server their settings name), and a session file, which any cloned repository can
plant, cannot send the conversation or the user's key to an address of its own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jupyter_agent import Agent
from jupyter_agent.models import BedrockModel, OpenAIModel
from jupyter_agent.sessions.store import Session
from jupyter_agent.testing import ChatCompletionsServer, Reply, text


def _settings(home: Path, text: str) -> None:
    path = home / ".jupyter_agent" / "settings.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _plant(workspace: Path, **fields: str) -> str:
    """A session file as a cloned repository could carry it."""
    session = Session.create(workspace, persist=True, agent_type="planner", **fields)
    return session.id


def _warnings(handle) -> list[str]:
    return [e.message for e in handle.events_so_far if e.kind == "warning"]


GATEWAY = """
[models]
default = "scripted"

[providers.gateway]
type = "openai"
base_url = "https://gateway.corp.example/v1"
"""


def test_a_session_on_a_settings_provider_goes_on_there(workspace, home):
    _settings(home, GATEWAY)
    agent = Agent(workspace=workspace, model="gateway:gpt-4o")
    assert agent.session.metadata.model_string == "gateway:gpt-4o"
    again = Agent.resume(agent.session.id, workspace=workspace)
    assert isinstance(again.model, OpenAIModel)
    assert again.model.name == "gpt-4o"
    assert again.model.base_url == "https://gateway.corp.example/v1"
    # Switching records the new choice, which resume then takes.
    again.set_model("gateway:gpt-4.1")
    assert Agent.resume(agent.session.id, workspace=workspace).model.name == "gpt-4.1"


async def test_a_provider_gone_from_the_settings_gives_way_to_the_default_and_says_so(
    workspace, home
):
    _settings(home, GATEWAY)
    agent = Agent(workspace=workspace, model="gateway:gpt-4o")
    _settings(home, '[models]\ndefault = "scripted"\n')
    again = Agent.resume(agent.session.id, workspace=workspace)
    # Not OpenAI itself: the user chose the gateway, and it is not there now.
    assert again.model.provider == "scripted"
    handle = await again.run("go on")
    said = _warnings(handle)
    assert any("gateway:gpt-4o" in w and "no provider 'gateway'" in w for w in said), said


async def test_a_server_the_users_settings_name_is_found_again(workspace, home):
    server = ChatCompletionsServer()
    try:
        model = f"openai-compatible:llama3@{server.base_url}"
        _settings(home, f'[models]\ndefault = "scripted"\nchoices = ["{model}"]\n')
        server.push(Reply([text("First.")]))
        agent = Agent(workspace=workspace, model=model)
        await agent.run("hello")
        assert agent.session.metadata.model_string == model
        again = Agent.resume(agent.session.id, workspace=workspace)
        server.push(Reply([text("Again.")]))
        handle = await again.run("and again")
        assert _warnings(handle) == []
        assert len(server.requests) == 2
        assert server.requests[1].body["model"] == "llama3"
    finally:
        server.close()


async def test_a_server_only_typed_is_not_gone_back_to_by_itself(workspace, home):
    """Not even on this machine: on a shared host another user's program may listen on
    127.0.0.1, and a planted session file could name it."""
    _settings(home, '[models]\ndefault = "scripted"\n')
    model = "openai-compatible:llama3@http://127.0.0.1:8000/v1"
    agent = Agent(workspace=workspace, model=model)
    assert agent.session.metadata.model_string == model
    again = Agent.resume(agent.session.id, workspace=workspace)
    assert again.model.provider == "scripted"
    handle = await again.run("go on")
    assert any("cannot choose the server" in w and "[providers]" in w for w in _warnings(handle))
    # Named as the model, it is used.
    chosen = Agent.resume(agent.session.id, workspace=workspace, model=model)
    assert isinstance(chosen.model, OpenAIModel)
    assert chosen.model.base_url == "http://127.0.0.1:8000/v1"


@pytest.mark.parametrize(
    "url",
    [
        "http://attacker.example/v1",
        "http://127.0.0.1:8000/v1",
        "http://localhost:11434/v1",
        "https://10.0.0.5:8000/v1",
        "http://127.0.0.1.attacker.example/v1",
        "http://localhost.attacker.example/v1",
        "http://127.0.0.1:80@attacker.example/v1",
        "http://attacker.example#@127.0.0.1/v1",
        "http://[::1/v1",
    ],
)
async def test_a_planted_session_cannot_choose_where_the_conversation_goes(
    workspace, home, monkeypatch, url
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-the-users-own-key")
    _settings(home, '[models]\ndefault = "scripted"\n')
    sid = _plant(
        workspace,
        model="x",
        provider="openai-compatible",
        model_string=f"openai-compatible:x@{url}",
    )
    again = Agent.resume(sid, workspace=workspace)
    assert again.model.provider == "scripted"
    handle = await again.run("go on")
    assert any("cannot choose the server" in w for w in _warnings(handle))


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        # Sessions saved before the model string was kept: the address is unknown.
        ({"model": "llama3", "provider": "openai-compatible"}, "did not keep"),
        ({"model": "x", "provider": "anthropic", "model_string": "a b"}, "not one now"),
        ({"model": "x", "provider": "anthropic", "model_string": "x" * 100_000}, "no settings"),
        ({"model": "x", "provider": "openai", "model_string": "corp:gpt-4o"}, "'corp'"),
    ],
)
async def test_a_model_a_session_cannot_name_gives_way_to_the_default(
    workspace, home, fields, said
):
    _settings(home, '[models]\ndefault = "scripted"\n')
    again = Agent.resume(_plant(workspace, **fields), workspace=workspace)
    assert again.model.provider == "scripted"
    handle = await again.run("go on")
    assert any(said in w for w in _warnings(handle)), _warnings(handle)


def test_a_planted_session_may_pick_a_provider_the_user_has(workspace, home):
    """A name is all a session file gives: the server and key stay the user's."""
    _settings(home, GATEWAY)
    sid = _plant(workspace, model="m", provider="openai", model_string="gateway:m")
    resumed = Agent.resume(sid, workspace=workspace).model
    assert isinstance(resumed, OpenAIModel)
    assert resumed.base_url == "https://gateway.corp.example/v1"
    sid = _plant(workspace, model="claude-haiku-4-5", provider="anthropic")
    assert Agent.resume(sid, workspace=workspace).model.name == "claude-haiku-4-5"


def test_an_address_with_credentials_is_never_written_to_the_session(workspace, home):
    secret = "hunter2-very-secret"
    for url in (f"http://bob:{secret}@127.0.0.1:9/v1", f"http://127.0.0.1:9/v1?key={secret}"):
        agent = Agent(workspace=workspace, model=f"openai-compatible:llama3@{url}")
        agent.session.save(now=True)
        assert agent.session.path is not None
        files = agent.session.path.rglob("*")
        assert not any(secret in f.read_text() for f in files if f.is_file())
        assert agent.session.metadata.model_string == ""


def test_a_session_records_the_model_string_as_the_user_wrote_it(workspace, home):
    for given, written in [
        ("claude-haiku-4-5", "claude-haiku-4-5"),
        ("openai:", "openai:gpt-5"),
        ("ollama:qwen3:8b", "ollama:qwen3:8b"),
        ("scripted", ""),
    ]:
        agent = Agent(workspace=workspace, model=given)
        assert agent.session.path is not None
        saved = json.loads((agent.session.path / "metadata.json").read_text())
        assert saved["model_string"] == written, given


def test_a_model_made_in_code_is_recorded_when_a_string_can_make_it_again(workspace, home):
    from jupyter_agent import AnthropicModel, ScriptedModel
    from jupyter_agent.models import Model

    local = "http://127.0.0.1:8000/v1"
    _settings(
        home,
        f'[providers.local]\ntype = "openai-compatible"\nbase_url = "{local}"\n'
        '[models]\ndefault = "scripted"\n',
    )
    made: list[tuple[Model, str]] = [
        (AnthropicModel("claude-haiku-4-5"), "claude-haiku-4-5"),
        (OpenAIModel("gpt-4o"), "openai:gpt-4o"),
        (
            OpenAIModel("llama3", provider="openai-compatible", base_url=local),
            f"openai-compatible:llama3@{local}",
        ),
        # Where the caller sent it, no string of its provider says: not Claude's own API.
        (AnthropicModel("claude-haiku-4-5", base_url="https://proxy.corp.example"), ""),
        (OpenAIModel("gpt-4o", base_url="https://gateway.corp.example/v1"), ""),
        (ScriptedModel(), ""),
    ]
    for model, written in made:
        agent = Agent(workspace=workspace, model=model)
        assert agent.session.metadata.model_string == written, model
        again = Agent.resume(agent.session.id, workspace=workspace)
        if written:
            assert (again.model.provider, again.model.name) == (model.provider, model.name)
        else:
            assert again.model.provider == "scripted"


# --- every provider: the endpoint a resumed model goes to is one the user named ----------


def _resumed(workspace: Path, model_string: str, provider: str) -> Agent:
    name = model_string.partition(":")[2] or model_string
    sid = _plant(workspace, model=name, provider=provider, model_string=model_string)
    return Agent.resume(sid, workspace=workspace)


@pytest.fixture
def bare_environment(monkeypatch):
    """A user whose environment names no server and holds no provider's credentials."""
    for variable in (
        "OLLAMA_HOST",
        "OPENAI_BASE_URL",
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_BEDROCK_BASE_URL",
        "ANTHROPIC_VERTEX_BASE_URL",
        "AWS_BEARER_TOKEN_BEDROCK",
        "AWS_PROFILE",
        "AWS_ACCESS_KEY_ID",
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
        "CLOUD_ML_REGION",
        "ANTHROPIC_VERTEX_PROJECT_ID",
    ):
        monkeypatch.delenv(variable, raising=False)


async def test_a_planted_ollama_session_does_not_go_to_ollamas_default_address(
    workspace, home, bare_environment
):
    """The attack: a session file naming ``ollama:qwen3`` resumed on localhost:11434,
    where on a shared host anyone's program may listen, though nothing of the user's
    named that server."""
    _settings(home, '[models]\ndefault = "scripted"\n')
    again = _resumed(workspace, "ollama:qwen3", "ollama")
    assert again.model.provider == "scripted"
    handle = await again.run("go on")
    said = _warnings(handle)
    assert any(
        "ollama:qwen3" in w and "localhost:11434" in w and "cannot choose the server" in w
        for w in said
    ), said


@pytest.mark.parametrize(
    ("model_string", "provider"),
    [
        ("openai:gpt-5", "openai"),
        ("claude-haiku-4-5", "anthropic"),
        ("bedrock:us.anthropic.claude-haiku-4-5-20251001-v1:0", "bedrock"),
        ("vertex:claude-haiku-4-5@20251001", "vertex"),
    ],
)
async def test_a_planted_session_does_not_move_to_a_provider_the_user_has_not_set_up(
    workspace, home, bare_environment, model_string, provider
):
    _settings(home, '[models]\ndefault = "scripted"\n')
    again = _resumed(workspace, model_string, provider)
    assert again.model.provider == "scripted"
    handle = await again.run("go on")
    assert any("cannot choose the server" in w for w in _warnings(handle)), _warnings(handle)


async def test_ollama_named_by_the_users_environment_is_gone_back_to(
    workspace, home, bare_environment, monkeypatch
):
    server = ChatCompletionsServer()
    try:
        monkeypatch.setenv("OLLAMA_HOST", server.url)
        _settings(home, '[models]\ndefault = "scripted"\n')
        again = _resumed(workspace, "ollama:qwen3", "ollama")
        server.push(Reply([text("Back on Ollama.")]))
        handle = await again.run("go on")
        assert _warnings(handle) == []
        asked = [r.body["model"] for r in server.requests if r.path.endswith("/completions")]
        assert asked == ["qwen3"]
    finally:
        server.close()


@pytest.mark.parametrize(
    ("settings", "environment", "model_string", "provider"),
    [
        # The user's settings name Ollama (at its default address): a session may go back.
        ('choices = ["ollama:llama3"]', {}, "ollama:qwen3", "ollama"),
        ("", {"OPENAI_API_KEY": "sk-the-users-own-key-0123456789"}, "openai:gpt-5", "openai"),
        ('choices = ["openai:gpt-4o"]', {}, "openai:gpt-5", "openai"),
        ("", {"AWS_REGION": "eu-west-1"}, "bedrock:us.anthropic.claude-x-v1:0", "bedrock"),
        ("", {"CLOUD_ML_REGION": "us-east5"}, "vertex:claude-haiku-4-5@20251001", "vertex"),
    ],
)
def test_a_provider_the_users_configuration_names_is_gone_back_to(
    workspace, home, bare_environment, monkeypatch, settings, environment, model_string, provider
):
    for variable, value in environment.items():
        monkeypatch.setenv(variable, value)
    _settings(home, f'[models]\ndefault = "scripted"\n{settings}\n')
    again = _resumed(workspace, model_string, provider)
    assert again.model.provider == provider
    assert again.model.name == model_string.partition(":")[2]


def test_a_planted_bedrock_session_runs_in_the_users_region(
    workspace, home, bare_environment, monkeypatch
):
    """A session file names a model, never a region: the region stays the user's."""
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    _settings(home, '[models]\ndefault = "scripted"\n')
    again = _resumed(workspace, "bedrock:us.anthropic.claude-x-v1:0", "bedrock")
    assert isinstance(again.model, BedrockModel)
    assert again.model.region == "eu-west-1"
