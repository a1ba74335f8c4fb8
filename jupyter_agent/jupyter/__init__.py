"""The Jupyter side: the ``%agent`` magics, the agent panel, the notebook bridge.

The only part of the package that imports IPython, ipywidgets, anywidget or comm.
"""

from __future__ import annotations

from typing import Any


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext jupyter_agent``: register ``%agent`` and ``%%agent``."""
    from .magic import AgentMagics

    ipython.register_magics(AgentMagics)
