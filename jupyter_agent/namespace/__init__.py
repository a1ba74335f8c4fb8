"""The kernel's namespace: the user's live values, read without running their code."""

# ``jupyter_agent.namespace`` was one module: its names are still imported from here.
from .kernel_namespace import (
    IPYTHON_NAMES,
    LIST_LIMIT,
    KernelNamespace,
    VariableInfo,
    human_bytes,
    safe_repr,
    type_name,
)

__all__ = [
    "IPYTHON_NAMES",
    "LIST_LIMIT",
    "KernelNamespace",
    "VariableInfo",
    "human_bytes",
    "safe_repr",
    "type_name",
]
