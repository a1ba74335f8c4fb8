"""The Jupyter side: the ``%agent`` magics, the agent panel, the notebook bridge.

The only part of the package that imports IPython, ipywidgets, anywidget or comm.
"""

from __future__ import annotations

from typing import Any


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext jupyter_agent``: register ``%agent`` and ``%%agent``."""
    from .kernel.agent_thread import main_loop
    from .kernel.parent import answer_each_request_under_its_own_header
    from .kernel.runner import CellTimes
    from .magic import AgentMagics, keep_question_marks, quiet_bare_runs

    main_loop()  # the kernel's loop, remembered for the agent's own thread
    ipython.register_magics(AgentMagics)
    answer_each_request_under_its_own_header(getattr(ipython, "kernel", None))
    CellTimes.of(ipython)  # the agent sees how long each cell ran from now on
    cleanup = ipython.input_transformers_cleanup
    if keep_question_marks not in cleanup:
        cleanup.append(keep_question_marks)
    post = ipython.input_transformers_post
    if quiet_bare_runs not in post:
        post.append(quiet_bare_runs)


def sidebar_panel(shell: Any = None) -> str:
    """The widget model id of this kernel's agent panel, made if needed.

    JupyterLab's "Agent: Open panel" evaluates this in the notebook's kernel (a silent
    user expression) to dock the panel in its sidebar, so it loads the extension first,
    as ``%load_ext jupyter_agent`` would: ``%agent`` works in the notebook afterwards.
    """
    from .kernel.agent import kernel_agent

    if shell is None:
        from IPython import get_ipython

        shell = get_ipython()
        if shell is None:
            raise RuntimeError("not running in IPython")
    shell.extension_manager.load_extension("jupyter_agent")  # "already loaded": no-op
    return str(kernel_agent(shell).ensure_panel().model_id)
