"""The notebook: the bridge the notebook tools talk to, the ``.ipynb`` file edited as its
author wrote it, and the notebook and its outputs as the model reads them.
"""

# ``jupyter_agent.notebook`` was one module: its names are still imported from here.
from .bridge import (
    BridgeMode,
    Cell,
    CellType,
    Change,
    ChangeLog,
    Executor,
    NotebookBridge,
    RunningExecutor,
    RunResult,
    SourceChanged,
    new_cell_id,
)

__all__ = [
    "BridgeMode",
    "Cell",
    "CellType",
    "Change",
    "ChangeLog",
    "Executor",
    "NotebookBridge",
    "RunResult",
    "RunningExecutor",
    "SourceChanged",
    "new_cell_id",
]
