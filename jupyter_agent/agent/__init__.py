"""The agent: runs, their handles, loops, sessions and the runtime."""

from ..sessions.store import Session, SessionMetadata
from ._agent import Agent
from ._attendance import Attendance, Unattended
from ._config import AgentConfig, AgentOptions, resolve_config
from ._context import Context, ContextPolicy
from ._handle import RunHandle
from ._limits import Limits, StopRun
from ._loops import LOOPS, parse_control, roa_loop, tool_use_loop
from ._model_call import Turn
from ._run import Run
from ._runtime import AgentRuntime, runtime

__all__ = [
    "LOOPS",
    "Agent",
    "AgentConfig",
    "AgentOptions",
    "AgentRuntime",
    "Attendance",
    "Context",
    "ContextPolicy",
    "Limits",
    "Run",
    "RunHandle",
    "Session",
    "SessionMetadata",
    "StopRun",
    "Turn",
    "Unattended",
    "parse_control",
    "resolve_config",
    "roa_loop",
    "runtime",
    "tool_use_loop",
]
