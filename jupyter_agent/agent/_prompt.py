"""The system prompt of a run.

Invariant: it is the same text for every call of one run (nothing in it changes while the
run goes on), so the model's prompt cache keeps it.
"""

from __future__ import annotations

from pathlib import Path

from ..config.instructions import ProjectInstructions
from ..notebook.bridge import NotebookBridge
from ..permissions import Role
from ._prompts import load_prompt

NO_NOTEBOOK = (
    "No notebook is attached to this run (its kernel does not know which notebook it runs, "
    "as under papermill or a remote kernel), so no notebook tools are offered: work with "
    "files and commands, and do not say you edited or ran cells. The user can attach one "
    "(%agent --notebook PATH)."
)


def system_prompt(
    role: Role,
    workspace: Path,
    project: ProjectInstructions,
    instructions: str,
    notebook: NotebookBridge | None,
) -> str:
    """The house prompt, the role's, the project's instruction files, the program's
    ``instructions`` for this agent, then where the agent works."""
    parts = [load_prompt("system")]
    role_text = role.prompt or (load_prompt(role.prompt_file) if role.prompt_file else "")
    if role_text:
        parts.append(role_text)
    if text := project.prompt():
        parts.append(text)
    if instructions:
        parts.append("# Instructions for this agent\n\n" + instructions)
    environment = f"# Environment\n\nWorkspace folder: {workspace}"
    if notebook is not None:
        environment += f"\nYour notebook: {notebook.describe()}"
    else:
        environment += f"\n{NO_NOTEBOOK}"
    parts.append(environment)
    return "\n\n".join(parts)
