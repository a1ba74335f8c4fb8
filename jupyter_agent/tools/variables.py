"""Kernel namespace tools: list and inspect the user's live variables without running code.

They read the :class:`~jupyter_agent.namespace.kernel_namespace.KernelNamespace` in the
agent's resources
(the kernel's ``user_ns`` when the agent runs in a kernel). Reading a variable runs none of
the user's code, and secrets are masked (see
:mod:`jupyter_agent.namespace.kernel_namespace`). Whatever
code still runs while it is read (a library's) cannot write files, start processes or
connect: :func:`jupyter_agent.namespace.guard.read_only` refuses it, and the result says so.
In a kernel the agent reads from its own thread, at once, even while a cell runs; the
result then says that the values may be changing (``KernelNamespace.busy_note``).
"""

from __future__ import annotations

from ..errors import ToolError
from ..namespace.guard import blocked_note, read_only
from ..namespace.kernel_namespace import KernelNamespace
from ..permissions import Permission
from ._tool import ToolContext, ToolOutput, tool

NO_KERNEL = "This agent is not running in a kernel: there are no variables to inspect."


def namespace_of(ctx: ToolContext) -> KernelNamespace:
    namespace = ctx.resources.get(KernelNamespace)
    if namespace is None:
        raise ToolError(NO_KERNEL)
    return namespace


@tool(
    category="kernel",
    permissions={Permission.INSPECT_KERNEL},
    summary="List the kernel's variables",
)
def list_variables(
    ctx: ToolContext, include_private: bool = False, include_modules: bool = False
) -> ToolOutput:
    """List the variables defined in the kernel: name, type, shape or length, approximate
    memory, and a short value for small ones. Runs no code. Secrets are masked.

    Args:
        include_private: Also list names starting with "_" and IPython's own (In, Out…).
        include_modules: Also list imported modules, functions and classes.
    """
    namespace = namespace_of(ctx)
    with read_only() as blocked:
        text = namespace.list_text(include_private=include_private, include_modules=include_modules)
        shown, left_out = namespace.variables(
            include_private=include_private, include_modules=include_modules
        )
    return ToolOutput(
        text + blocked_note(blocked) + namespace.busy_note(),
        data={
            "variables": [v.name for v in shown],
            "not_listed": {kind: len(names) for kind, names in left_out.items()},
        },
    )


@tool(
    category="kernel",
    permissions={Permission.INSPECT_KERNEL},
    summary="Inspect {name}",
)
def inspect_variable(ctx: ToolContext, name: str) -> ToolOutput:
    """Describe one variable in depth without running code: a DataFrame's shape, dtypes,
    null counts, first rows and statistics; an array's shape, dtype, range and preview; a
    container's length and first items; a string's length and start; a function's
    parameters and source; other objects by their type, size, attributes and method
    names (their own repr and properties are not run). Secrets are masked.

    Args:
        name: A top-level variable name, optionally with literal [key] or [index] lookups
            into dicts, lists and tuples, e.g. config["db"] or rows[0]. Attributes
            (df.columns) are not followed: inspect df itself.
    """
    namespace = namespace_of(ctx)
    with read_only() as blocked:
        text = namespace.inspect_text(name)
    return ToolOutput(text + blocked_note(blocked) + namespace.busy_note(), data={"name": name})


NAMESPACE_TOOLS = (list_variables, inspect_variable)
