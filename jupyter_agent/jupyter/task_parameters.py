"""Variables in a ``%agent`` line's task: ``%agent act Summarise $region for {year}``.

IPython expands ``$name`` and ``{expression}`` in a line magic before the magic runs; the
agent's magic turns that off (a task is prose: "$5 a unit", "a dict {'a': 1}", code the user
quotes), so papermill's parameters (``region = "north"`` in the injected cell) reached the
model as ``$region``. Here the magic expands them itself, as IPython would, but only where it
is safe and meant:

- ``$name`` and ``{name}`` of a variable whose value is a plain str, int, float or bool (or a
  list or tuple of those): papermill's parameters and their like. Only those exact types, so
  expanding never runs a user ``__str__`` or ``__format__``.
- ``{expression}`` is not evaluated: a task's braces are too often prose or quoted code for
  running them to be what the user meant. Name the value in a variable first.
- ``$$``, ``{{`` and ``}}`` are a literal ``$``, ``{`` and ``}``, as in IPython.
- Anything else (an unknown name, a DataFrame, a huge value) stays as written.

A ``%%agent`` cell's body is not expanded (IPython never expands a cell body either).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

# One pass, left to right; every alternative is a fixed prefix then \w*: linear in the
# task's length.
_REFERENCE = re.compile(r"\$\$|\{\{|\}\}|\$([A-Za-z_]\w*)|\{([A-Za-z_]\w*)\}")
_ESCAPES = {"$$": "$", "{{": "{", "}}": "}"}
_PLAIN = (str, int, float, bool)
# A value longer than this is not a parameter: left as written rather than pasted in.
MAX_VALUE = 2_000


def expand(task: str, namespace: Mapping[str, Any]) -> str:
    """``task`` with its parameters' values put in (see the module's rules)."""

    def value_of(match: re.Match[str]) -> str:
        whole = match.group(0)
        if whole in _ESCAPES:
            return _ESCAPES[whole]
        name = match.group(1) or match.group(2)
        shown = _shown(namespace.get(name, _MISSING))
        return whole if shown is None else shown

    return _REFERENCE.sub(value_of, task)


_MISSING = object()


def _shown(value: Any) -> str | None:
    """How a parameter reads in the task, or None for a value that is not one."""
    if type(value) in _PLAIN:
        text = str(value)
    elif (
        type(value) in (list, tuple)
        and len(value) <= MAX_VALUE
        and all(type(v) in _PLAIN for v in value)
    ):
        text = ", ".join(str(v) for v in value)
    else:
        return None
    return text if len(text) <= MAX_VALUE else None
