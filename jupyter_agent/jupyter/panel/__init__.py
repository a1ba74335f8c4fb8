"""The agent panel: the anywidget UI, its wire protocol, its transcript, its static record
in the saved notebook, and the set-up card that gets it a model.
"""

# ``jupyter_agent.jupyter.panel`` was one module: its names are still imported from here.
from .widget import (
    FLUSH_INTERVAL,
    STATIC,
    TEXT_BATCH,
    TEXT_HOLD,
    TEXT_REFRESH,
    URGENT,
    AgentPanel,
    log,
)

__all__ = [
    "FLUSH_INTERVAL",
    "STATIC",
    "TEXT_BATCH",
    "TEXT_HOLD",
    "TEXT_REFRESH",
    "URGENT",
    "AgentPanel",
    "log",
]
