"""The administrator's policy (jupyter_agent/admin_policy.py): what a hub fixes for every
agent and no user setting, workspace file, model string or Model object widens. Each
test writes a policy file and names it with $JUPYTER_AGENT_POLICY (the extra file a user
may add, which only narrows, as a second system file does)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from jupyter_agent import Agent, ScriptedModel
from jupyter_agent.admin_policy import EXTRA, PolicyError, current_policy, policy_files
from jupyter_agent.mcp.config import McpServerConfig
from jupyter_agent.mcp.servers import McpServers
from jupyter_agent.models import AnthropicModel, OpenAIModel, resolve_model
from jupyter_agent.permissions import ACTOR
from jupyter_agent.secrets import credentials


@pytest.fixture
def policy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    def write(text: str, name: str = "policy.toml") -> Path:
        path = tmp_path / name
        path.write_text(text)
        monkeypatch.setenv(EXTRA, str(path))
        return path

    return write


def test_without_a_policy_nothing_is_fixed(monkeypatch):
    monkeypatch.delenv(EXTRA, raising=False)
    assert all(not p.exists() for p in policy_files())  # none on this machine
    assert current_policy().sources == ()
    assert resolve_model("openai:gpt-5").provider == "openai"


def test_providers_and_models_outside_the_policy_are_refused_by_string_and_object(policy):
    path = policy('providers = ["anthropic"]\nmodels = ["claude-sonnet-*"]\n')
    assert resolve_model("claude-sonnet-4-6").name == "claude-sonnet-4-6"
    for refused, why in [
        ("openai:gpt-5", "the provider openai is not allowed (allowed: anthropic)"),
        ("claude-opus-4-1", "the model claude-opus-4-1 is not allowed (allowed: claude-sonnet-*)"),
        ("ollama:qwen3", "the provider ollama is not allowed"),
    ]:
        with pytest.raises(PolicyError, match=re.escape(f"policy ({path}): {why}")):
            resolve_model(refused)
    # A Model made in a cell is held to it too; a replay reaches no network.
    with pytest.raises(PolicyError, match="claude-opus-4-1 is not allowed"):
        resolve_model(AnthropicModel("claude-opus-4-1"))
    with pytest.raises(PolicyError, match="provider openai"):
        resolve_model(OpenAIModel("gpt-5"))
    assert resolve_model(ScriptedModel([])).provider == "scripted"


def test_an_agent_whose_settings_choose_a_refused_model_does_not_start(policy, workspace, home):
    policy('providers = ["anthropic"]\n')
    (workspace / ".jupyter_agent").mkdir()
    (workspace / ".jupyter_agent" / "settings.toml").write_text(
        '[models]\ndefault = "openai:gpt-5"\n'
    )
    (home / ".jupyter_agent").mkdir()
    (home / ".jupyter_agent" / "settings.toml").write_text('[models]\ndefault = "openai:gpt-5"\n')
    with pytest.raises(PolicyError, match="the provider openai is not allowed"):
        Agent("planner", workspace=workspace)


def test_the_locked_address_is_used_whatever_the_environment_or_settings_say(policy, monkeypatch):
    policy('[base_urls]\nanthropic = "http://127.0.0.1:9/gateway/"\n')
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/elsewhere")
    model = resolve_model("claude-sonnet-4-6")
    assert isinstance(model, AnthropicModel)
    assert model.reached_at() == "http://127.0.0.1:9/gateway"
    # An address of the user's own, in a Model or a provider of theirs, is refused.
    with pytest.raises(
        PolicyError, match=re.escape("anthropic is reached only at http://127.0.0.1:9/gateway")
    ):
        resolve_model(AnthropicModel("claude-sonnet-4-6", base_url="http://127.0.0.1:9/mine"))
    with pytest.raises(PolicyError, match="reached only at"):
        resolve_model(AnthropicModel("claude-sonnet-4-6"))  # the environment's address


def test_disabled_tools_are_never_offered_to_any_run(policy, workspace):
    policy('disabled_tools = ["execute_command", "mcp__*"]\n')
    agent = Agent("actor", ScriptedModel([]), workspace=workspace)
    offered = [t.name for t in agent.tools.allowed(ACTOR.permissions)]
    assert "execute_command" not in offered
    assert "read_file" in offered
    child = agent.child(role="actor")
    assert "execute_command" not in [t.name for t in child.tools.allowed(ACTOR.permissions)]


async def test_a_disabled_tool_the_model_calls_anyway_does_not_run(policy, workspace):
    policy('disabled_tools = ["execute_command"]\n')
    model = ScriptedModel(
        [
            {"tool_calls": [{"name": "execute_command", "input": {"command": "touch x"}}]},
            {"text": "ok"},
        ]
    )
    agent = Agent("actor", model, workspace=workspace)
    await agent.run("go")
    assert not (workspace / "x").exists()
    results = [r.text for m in agent.history for r in m.tool_results]
    assert results[0].startswith("execute_command is disabled by the administrator's policy")
    assert "execute_command" not in [t["name"] for t in model.requests[0].tools]


def test_only_allowed_mcp_servers_start_and_the_others_say_why(policy):
    path = policy('mcp_servers = ["docs"]\n')
    servers = McpServers(
        {
            "docs": McpServerConfig(command="docs-server"),
            "shell": McpServerConfig(command="anything-goes"),
        }
    )
    assert servers.connections["docs"].config.enabled
    shell = servers.connections["shell"].config
    assert not shell.enabled
    assert shell.problem == (
        f"not among the MCP servers your administrator's policy allows ({path})"
    )
    servers.configure({"late": McpServerConfig(command="late-server")})
    assert not servers.connections["late"].config.enabled


def test_the_sandbox_stays_on_and_offline_whatever_the_user_says(policy, workspace, home):
    policy("[sandbox]\nrequired = true\nnetwork = false\n")
    (home / ".jupyter_agent").mkdir()
    (home / ".jupyter_agent" / "settings.toml").write_text(
        "[sandbox]\nenabled = false\nnetwork = true\n"
    )
    chosen = Agent("actor", ScriptedModel([]), workspace=workspace).config.settings
    assert chosen.command_sandbox().enabled is True
    assert chosen.command_sandbox().network is False


def test_keys_from_the_environment_only(policy, monkeypatch):
    credentials.save_key("sk-ant-api03-" + "a" * 40)  # saved before the policy came
    policy('keys = "environment"\n')
    assert credentials.stored_key() is None  # the saved one is not read
    with pytest.raises(credentials.CredentialsError, match="only from the environment"):
        credentials.use_for_session("sk-ant-api03-" + "b" * 40)
    with pytest.raises(credentials.CredentialsError, match="only from the environment"):
        credentials.save_key("sk-ant-api03-" + "b" * 40)


def test_a_second_file_only_narrows(policy, tmp_path, monkeypatch):
    first = tmp_path / "first.toml"
    first.write_text('providers = ["anthropic"]\ndisabled_tools = ["delete_file"]\n')
    second = policy('providers = ["anthropic", "openai"]\ndisabled_tools = ["execute_command"]\n')
    monkeypatch.setattr("jupyter_agent.admin_policy.policy_files", lambda: [first, second])
    merged = current_policy()
    assert merged.providers == frozenset({"anthropic"})
    assert merged.tool_disabled("delete_file") and merged.tool_disabled("execute_command")
    with pytest.raises(PolicyError, match="provider openai"):
        resolve_model("openai:gpt-5")


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("providers = [", "is not valid TOML"),
        ('providers = ["carrier-pigeon"]', "providers.0"),
        ("unknown_key = 1", "unknown_key"),
        ("x" * 300_000, "is over 256,000 bytes"),
    ],
)
def test_a_policy_that_cannot_be_read_stops_the_agent_naming_it(policy, workspace, text, said):
    path = policy(text)
    with pytest.raises(PolicyError, match=said) as refused:
        Agent("planner", ScriptedModel([]), workspace=workspace)
    assert str(path) in str(refused.value)


def test_what_the_policy_fixes_is_said_in_a_line_each(policy):
    policy(
        'providers = ["anthropic"]\nmodels = ["claude-*"]\ndisabled_tools = ["execute_command"]\n'
        'mcp_servers = []\nkeys = "environment"\n[base_urls]\nanthropic = "http://gw/"\n'
        "[sandbox]\nrequired = true\nnetwork = false\n"
    )
    assert current_policy().fixed() == [
        "Providers: anthropic",
        "Models: claude-*",
        "anthropic is reached at http://gw",
        "Tools never offered: execute_command",
        "MCP servers allowed: none",
        "Commands always run in the sandbox",
        "Commands get no network",
        "API keys come only from the environment (no key typed or saved)",
    ]


def test_the_trust_prompt_says_what_the_policy_fixes(policy, workspace, home):
    path = policy('providers = ["anthropic"]\ndisabled_tools = ["execute_command"]\n')
    (workspace / ".jupyter_agent").mkdir()
    (workspace / ".jupyter_agent" / "settings.toml").write_text(
        '[[rules]]\ndecision = "allow"\nmatcher = { kind = "command", prefix = "make" }\n'
    )
    prompt = Agent("actor", ScriptedModel([]), workspace=workspace).config.settings.trust_prompt
    assert prompt is not None
    assert prompt.policy == ["Providers: anthropic", "Tools never offered: execute_command"]
    assert prompt.policy_source == str(path)
    assert prompt.text().endswith(
        f"Whatever these settings say, your administrator's policy ({path}) fixes:\n"
        "- Providers: anthropic\n- Tools never offered: execute_command"
    )


def test_agent_model_lists_what_the_policy_fixes(policy, workspace, capsys):
    from jupyter_agent.jupyter.magic import _show_models

    path = policy('providers = ["anthropic"]\n')
    _show_models(Agent("planner", ScriptedModel([]), workspace=workspace))
    said = capsys.readouterr().out
    assert said.endswith(f"Your administrator's policy ({path}) fixes:\n- Providers: anthropic\n")


def test_a_required_sandbox_that_is_missing_runs_no_command(policy, workspace):
    from jupyter_agent.os_sandbox.launch import OsSandbox, SandboxSettings

    policy("[sandbox]\nrequired = true\n")
    missing = OsSandbox(workspace, SandboxSettings(), bwrap=workspace / "no-bwrap-here")
    assert not missing.status().active
    with pytest.raises(PermissionError, match="runs commands only in the sandbox"):
        missing.launch(["echo", "hi"], workspace)
