"""Calling a workspace file tool as the model calls it (validation included), for the file
tool tests (``test_file_reading.py``, ``test_file_editing.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_agent.errors import ToolError
from jupyter_agent.tools import Tool, ToolContext, ToolOutput


async def run(tool: Tool, ws: Path, **args) -> ToolOutput:
    return await tool.call(ToolContext(workspace=ws), args)


async def refused(tool: Tool, ws: Path, **args) -> str:
    with pytest.raises(ToolError) as info:
        await run(tool, ws, **args)
    return str(info.value)


def only_files(folder: Path) -> list[str]:
    return sorted(
        str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() or p.is_symlink()
    )
