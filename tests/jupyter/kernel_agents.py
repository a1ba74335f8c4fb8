"""What the real-kernel tests run first: an agent in file mode on the kernel's own executor
(``SETUP``, then a cell that builds ``agent``), and the notebook it works on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat

SETUP = """
import asyncio, sys
from IPython import get_ipython
from jupyter_agent import Agent, ScriptedModel
from jupyter_agent.notebook.file import FileBridge
from jupyter_agent.config.rules import Everything, Rule, Rules
from jupyter_agent.jupyter.kernel.runner import KernelExecutor, attach_kernel
from jupyter_agent.notebook.view import ExecutionHistory

def call(tool, /, **arguments):
    return {"text": "", "tool_calls": [{"name": tool, "input": arguments}]}

def results():
    return [(r.is_error, r.text) for m in agent.history for r in m.tool_results]
"""
"""The imports and helpers every such kernel defines: ``call`` (a scripted turn) and
``results`` (the agent's tool results as ``(is_error, text)``)."""


def make_notebook(path: Path, cells: list[Any]) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = cells
    nbformat.write(nb, path)
    return path
