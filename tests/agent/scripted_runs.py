"""What the end-to-end run tests (test_control_tools, test_tools_and_limits,
test_steering_and_events) share: an agent on a scripted model, what its runs left (tool
results, event kinds), a note-writing tool and a policy that asks before writing a note."""

from __future__ import annotations

from jupyter_agent import Agent, ScriptedModel, tool
from jupyter_agent.permissions import Allow, Ask, Deny, ToolCall


def agent_for(workspace, *turns, role="actor", **options) -> Agent:
    return Agent(role, ScriptedModel(list(turns)), workspace=workspace, **options)


def scripted(agent: Agent) -> ScriptedModel:
    """The scripted model ``agent`` runs on (what ``agent_for`` gives it)."""
    assert isinstance(agent.model, ScriptedModel)
    return agent.model


def tool_results(agent: Agent) -> list[tuple[str, bool]]:
    return [(r.text, r.is_error) for m in agent.history for r in m.tool_results]


def kinds(handle) -> list[str]:
    return [e.kind for e in handle.events_so_far]


@tool(category="files", permissions={"write_files"})
def write_note(text: str) -> str:
    """Write a note."""
    return f"wrote {text}"


class AskForWrites:
    def __init__(self) -> None:
        self.remembered: list[str] = []

    def decide(self, call: ToolCall):
        if call.name == "write_note" and "secret" in call.input.get("text", ""):
            return Deny("notes about secrets are not allowed")
        if call.name in self.remembered:
            return Allow("remembered")
        return Ask("writes need approval") if call.name == "write_note" else Allow()

    def remember(self, call: ToolCall) -> str:
        self.remembered.append(call.name)
        return f"allow {call.name} for this session"
