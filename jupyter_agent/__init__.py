"""jupyter_agent: a planning and acting AI agent that lives inside the Jupyter kernel.

``%load_ext jupyter_agent`` in a notebook; ``from jupyter_agent import Agent`` anywhere.
"""

from __future__ import annotations

from typing import Any

# The one version: the build reads it (pyproject.toml), js/package.json repeats it
# (tests/test_version.py).
from . import _moved
from .agent import Agent, AgentRuntime, ContextPolicy, Run, RunHandle, Session, runtime
from .agent.render import TextRenderer
from .errors import AgentError, MissingAPIKey, ModelError, ToolDenied, ToolError
from .events import Event, EventAdapter
from .messages import Message
from .models import AnthropicModel, BedrockModel, Model, ScriptedModel, Usage, VertexModel
from .notebook.running_cells import CellPolicy
from .permissions import ACTOR, PLANNER, Permission, Role
from .plans import Plan, PlanStep, Question, QuestionOption
from .states import AgentState
from .tools import Tool, ToolContext, ToolOutput, ToolRegistry, tool

_moved.install()

__version__ = "0.1.0"

# Grouped by concept, not sorted: the groups say what each name is for.
__all__ = [  # noqa: RUF022
    # the agent and its runs
    "Agent",
    "AgentRuntime",
    "AgentState",
    "ContextPolicy",
    "Run",
    "RunHandle",
    "Session",
    "runtime",
    "CellPolicy",
    # models
    "AnthropicModel",
    "BedrockModel",
    "VertexModel",
    "Model",
    "ScriptedModel",
    "Usage",
    # tools and permissions
    "ACTOR",
    "PLANNER",
    "Permission",
    "Role",
    "Tool",
    "ToolContext",
    "ToolOutput",
    "ToolRegistry",
    "tool",
    # what agents produce
    "Event",
    "EventAdapter",
    "Message",
    "Plan",
    "PlanStep",
    "Question",
    "QuestionOption",
    # output
    "TextRenderer",
    # errors
    "AgentError",
    "MissingAPIKey",
    "ModelError",
    "ToolDenied",
    "ToolError",
]


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    """Where the prebuilt lab extension lives (for ``jupyter labextension develop``)."""
    return [{"src": "labextension", "dest": "jupyter-agent"}]


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext jupyter_agent``: register the %agent magics."""
    from .jupyter import load_ipython_extension as load

    load(ipython)
