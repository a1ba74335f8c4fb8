"""Workspace file tools: read, list, search, describe, edit, create and delete files.

Every path goes through :class:`~jupyter_agent.workspace.access.WorkspaceAccess`; every
write is atomic (a temporary file renamed over the old one). Tool names, argument names
and the shape of their messages are part of the contract with the prompts.

The tools live in three modules: reading (:mod:`._file_read`: read_file, list_directory,
get_file_info), searching (:mod:`._file_search`: grep) and editing (:mod:`._file_edit`:
update_file, create_file, delete_file); :mod:`._file_text` holds what reading shares.
"""

from __future__ import annotations

from ._file_edit import create_file, delete_file, update_file
from ._file_read import get_file_info, list_directory, read_file
from ._file_search import grep

__all__ = [
    "FILE_TOOLS",
    "create_file",
    "delete_file",
    "get_file_info",
    "grep",
    "list_directory",
    "read_file",
    "update_file",
]

FILE_TOOLS = (
    read_file,
    list_directory,
    grep,
    get_file_info,
    update_file,
    create_file,
    delete_file,
)
"""The file tools, in the order the model sees them."""
