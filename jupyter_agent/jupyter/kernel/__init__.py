"""The agent's own kernel: running cells in it with their outputs captured, interrupts and
timeouts, and the one agent each kernel has.
"""

# ``jupyter_agent.jupyter.kernel`` was one module: its names are still imported from here.
from .runner import CellTimes, IPythonHistory, KernelExecutor, attach_kernel, kernel_namespace

__all__ = ["CellTimes", "IPythonHistory", "KernelExecutor", "attach_kernel", "kernel_namespace"]
