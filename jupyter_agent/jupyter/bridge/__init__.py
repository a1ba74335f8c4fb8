"""The live notebook bridge: the kernel's side of the protocol with the JupyterLab extension."""

# ``jupyter_agent.jupyter.bridge`` was one module: its names are still imported from here.
from .live import (
    CONNECT_TIMEOUT,
    ERROR_CODES,
    KERNEL_ERROR_CODES,
    NO_EXTENSION,
    OPERATIONS,
    PROTOCOL,
    REQUEST_TIMEOUT,
    RUN_MARGIN,
    SPEC,
    TARGET,
    BridgeClosed,
    BridgeError,
    BridgeTimeout,
    LiveBridge,
    connect_notebook,
    kernel_notebook_path,
    notebook_file,
)

__all__ = [
    "CONNECT_TIMEOUT",
    "ERROR_CODES",
    "KERNEL_ERROR_CODES",
    "NO_EXTENSION",
    "OPERATIONS",
    "PROTOCOL",
    "REQUEST_TIMEOUT",
    "RUN_MARGIN",
    "SPEC",
    "TARGET",
    "BridgeClosed",
    "BridgeError",
    "BridgeTimeout",
    "LiveBridge",
    "connect_notebook",
    "kernel_notebook_path",
    "notebook_file",
]
