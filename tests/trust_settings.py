"""Settings files as the trust tests write them (a folder's, the user's) and a command call
to decide on, for ``test_folder_trust.py`` and ``test_untrusted_settings.py``."""

from __future__ import annotations

from pathlib import Path

from jupyter_agent import Permission
from jupyter_agent.permissions import ToolCall


def folder_settings(workspace: Path, text: str) -> Path:
    """The folder's own settings file, ``.jupyter_agent/settings.toml``, holding ``text``."""
    path = workspace / ".jupyter_agent" / "settings.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    return path


def user_settings(home: Path, text: str) -> Path:
    """The user's settings file, in the home folder, holding ``text``."""
    return folder_settings(home, text)


def shell(command: str, role: str = "actor") -> ToolCall:
    """An ``execute_command`` call of ``command``, for a policy to decide on."""
    return ToolCall(
        name="execute_command",
        category="execute",
        input={"command": command},
        summary=command,
        role=role,
        permissions=frozenset({Permission.EXECUTE_COMMANDS}),
    )
