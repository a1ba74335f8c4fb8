"""Where the modules of the flat package went: the old import paths keep working.

``import jupyter_agent.rules`` gives the module now at ``jupyter_agent.config.rules`` (the same
module object, so patching one patches the other). New code imports the new paths.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from types import ModuleType

MOVED: dict[str, str] = {
    "jupyter_agent.autorun": "jupyter_agent.workspace.autorun",
    "jupyter_agent.commands.os_sandbox": "jupyter_agent.os_sandbox.launch",
    "jupyter_agent.context_view": "jupyter_agent.sessions.context_view",
    "jupyter_agent.credentials": "jupyter_agent.secrets.credentials",
    "jupyter_agent.git_redirects": "jupyter_agent.workspace.git_redirects",
    "jupyter_agent.globs": "jupyter_agent.workspace.globs",
    "jupyter_agent.guard": "jupyter_agent.namespace.guard",
    "jupyter_agent.instructions": "jupyter_agent.config.instructions",
    "jupyter_agent.ipynb": "jupyter_agent.notebook.ipynb",
    "jupyter_agent.jupyter.bridge_messages": "jupyter_agent.jupyter.bridge.messages",
    "jupyter_agent.jupyter.kernel_agent": "jupyter_agent.jupyter.kernel.agent",
    "jupyter_agent.jupyter.panel_commands": "jupyter_agent.jupyter.panel.commands",
    "jupyter_agent.jupyter.panel_protocol": "jupyter_agent.jupyter.panel.protocol",
    "jupyter_agent.jupyter.panel_state": "jupyter_agent.jupyter.panel.state",
    "jupyter_agent.jupyter.record": "jupyter_agent.jupyter.panel.record",
    "jupyter_agent.jupyter.transcript": "jupyter_agent.jupyter.panel.transcript",
    "jupyter_agent.notebook_file": "jupyter_agent.notebook.file",
    "jupyter_agent.notebook_view": "jupyter_agent.notebook.view",
    "jupyter_agent.output_view": "jupyter_agent.notebook.outputs",
    "jupyter_agent.path_database": "jupyter_agent.workspace.path_database",
    "jupyter_agent.path_files": "jupyter_agent.workspace.path_files",
    "jupyter_agent.paths": "jupyter_agent.workspace.paths",
    "jupyter_agent.patterns": "jupyter_agent.workspace.patterns",
    "jupyter_agent.provenance": "jupyter_agent.workspace.provenance",
    "jupyter_agent.redacted": "jupyter_agent.secrets.redacted",
    "jupyter_agent.redaction": "jupyter_agent.secrets.redaction",
    "jupyter_agent.render": "jupyter_agent.agent.render",
    "jupyter_agent.rule_matchers": "jupyter_agent.config.rule_matchers",
    "jupyter_agent.rules": "jupyter_agent.config.rules",
    "jupyter_agent.running_cells": "jupyter_agent.notebook.running_cells",
    "jupyter_agent.sandbox": "jupyter_agent.workspace.access",
    "jupyter_agent.session_index": "jupyter_agent.sessions.index",
    "jupyter_agent.session_rows": "jupyter_agent.sessions.index_rows",
    "jupyter_agent.session_store": "jupyter_agent.sessions.index_store",
    "jupyter_agent.session_writer": "jupyter_agent.sessions.index_writer",
    "jupyter_agent.settings": "jupyter_agent.config.settings",
    "jupyter_agent.static": "jupyter_agent.namespace.static",
    "jupyter_agent.trust": "jupyter_agent.config.trust",
    "jupyter_agent.workspace.sandbox": "jupyter_agent.workspace.access",
}


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old path and loads it as the module it moved to."""

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return importlib.import_module(MOVED[spec.name])

    def exec_module(self, module: ModuleType) -> None:
        pass  # the moved module ran when it was imported under its own name


def install() -> None:
    """Answer the old paths (once per interpreter)."""
    if not any(isinstance(finder, _Alias) for finder in sys.meta_path):
        sys.meta_path.append(_Alias())
