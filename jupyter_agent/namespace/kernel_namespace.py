"""The kernel's variables, as the agent sees them: summaries, never a run of user code.

:class:`KernelNamespace` wraps the user's namespace mapping (IPython's ``user_ns``, or any
dict) as a resource for the namespace tools. It lists variables with their type, shape
and approximate memory, and inspects one variable in depth: tables, arrays, containers,
strings, and other objects.

What it does to the user's objects is deliberately narrow, because inspecting must not
change anything nor take long:

- Everything is read through :mod:`jupyter_agent.namespace.static` (``type()``, C-level
  descriptors, exact-key dict reads), so no ``__class__``, ``__getattribute__``,
  metaclass, property or ``__eq__`` of the user's runs.
- pandas, numpy and polars values are summarised through the library's own methods only
  when the value's class *is* the library's (:func:`~jupyter_agent.namespace.static.genuine`): a
  subclass may override what those methods call. Libraries are never imported here;
  costly statistics are skipped above a size limit, and cells, labels and elements that
  are Python objects are turned into :func:`safe_repr` text before pandas formats them.
- Builtin containers are read through the builtin type's own methods (``dict.items``,
  ``list.__len__``), never through a subclass's; generators and iterators are never
  advanced; nothing is traversed deeply.
- Any other object is described by its type, size, instance attributes and its class's
  method names: no ``repr``, ``__str__``, property, ``__len__`` or ``__sizeof__`` of a
  user class runs. (Genuine standard-library value types such as ``datetime`` show their
  repr.)
- Secrets are masked: a variable or dict key whose *name* says secret has its value
  masked, and every text that leaves this module goes through
  :func:`~jupyter_agent.secrets.shapes.mask_secrets`.

This module belongs to the framework layer: it imports nothing of Jupyter.

Where each part lives: this module holds the listing, the path lookup and the dispatch;
:mod:`~jupyter_agent.namespace._values` reads what a value is and renders it safely;
:mod:`~jupyter_agent.namespace._tables` summarises pandas, numpy and polars values;
:mod:`~jupyter_agent.namespace._objects` describes strings, containers, code and other
objects. The rules above hold in all four.
"""

from __future__ import annotations

import ast
import difflib
import re
import types
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ToolError
from ..secrets.shapes import is_secret_name, mask_secrets
from ._objects import code_text, container_text, generic_text, string_text
from ._tables import (
    foreign_arrays,
    numpy_array,
    pandas_frame,
    pandas_index,
    pandas_series,
    polars_frame,
    polars_series,
)
from ._values import (
    TRUSTED_REPR_MODULES,
    builtin_base,
    code_kind,
    family_of,
    guarded_repr,
    human_bytes,
    label_text,
    masked_text,
    module_name,
    nbytes_of,
    safe_repr,
    safe_text,
    shape_of,
    signature_text,
    type_name,
    unreadable,
)
from .static import exact_get, function_name, module_of, qualname_of, str_get

__all__ = [
    "IPYTHON_NAMES",
    "LIST_LIMIT",
    "KernelNamespace",
    "VariableInfo",
    "human_bytes",
    "safe_repr",
    "type_name",
]

IPYTHON_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython"})
"""Names IPython puts in every namespace; listed only with ``include_private``."""

LIST_LIMIT = 200
"""Most variables :meth:`KernelNamespace.list_text` shows."""


# --- the listing ----------------------------------------------------------------------------


@dataclass(frozen=True)
class VariableInfo:
    """One line of the variable listing."""

    name: str
    type: str
    kind: str
    """data, module, function, class or private."""
    shape: str = ""
    nbytes: int | None = None
    preview: str = ""
    masked: bool = False


def _preview(name: str, value: Any, kind: str) -> str:
    if kind == "module":
        return module_name(value)
    if kind == "function":
        return function_name(value).rsplit(".", 1)[-1] + signature_text(value)
    if kind == "class":
        return f"class {module_of(value)}.{qualname_of(value)}"
    family = family_of(value)
    if family is not None:
        kind_name, klass = family
        try:
            if kind_name == "pandas.DataFrame":
                columns = [label_text(c) for c in list(klass.columns.__get__(value))[:12]]
                return "columns: " + ", ".join(columns)
            if kind_name == "polars.DataFrame":
                return "columns: " + ", ".join(list(klass.columns.__get__(value))[:12])
            if kind_name in ("numpy.ndarray", "pandas.Series", "pandas.Index"):
                return f"dtype {klass.dtype.__get__(value)}"
            if kind_name == "polars.Series":
                return f"dtype {klass.dtype.__get__(value)}"
            if kind_name == "numpy.scalar":
                return guarded_repr(value, 60)[0]
        except Exception:
            return ""
        return ""
    t = type(value)
    if value is None or t in (bool, int, float, complex) or builtin_base(value) is not None:
        return safe_repr(value, 60)
    if module_of(t) in TRUSTED_REPR_MODULES:
        return safe_repr(value, 60)
    return ""


def _lookup(namespace: Mapping[str, Any], name: str, default: Any) -> Any:
    """``namespace[name]``; in a plain dict (IPython's ``user_ns``, where a cell may plant
    any key) without asking other keys' ``__eq__``."""
    if type(namespace) is dict:
        return str_get(namespace, name, default)
    try:
        return namespace.get(name, default)
    except Exception:
        return default


class KernelNamespace:
    """The user's variables (a live mapping, e.g. IPython's ``user_ns``) for the tools.

    Args:
        namespace: The mapping, or a callable returning it (read at every call).
        hidden: Names (or a name → object mapping, like IPython's ``user_ns_hidden``) that
            the kernel put there; a name of the mapping is hidden only while it still
            holds that very object, so a user's own ``exit = 3`` is listed.
        cell_running: How long the kernel's current cell has run (None: none runs).
    """

    def __init__(
        self,
        namespace: Mapping[str, Any] | Callable[[], Mapping[str, Any]],
        *,
        hidden: Mapping[str, Any] | Iterable[str] = (),
        cell_running: Callable[[], float | None] = lambda: None,
    ) -> None:
        self._namespace = namespace
        self.cell_running = cell_running
        """Seconds the kernel's current cell has run, None while none runs: the agent
        reads from its own thread, so a cell may be changing what it reads."""
        if isinstance(hidden, Mapping):
            self._hidden: Mapping[str, Any] | frozenset[str] = hidden
        else:
            self._hidden = frozenset(hidden)

    def __repr__(self) -> str:
        return f"<KernelNamespace {len(self.names())} names>"

    @property
    def namespace(self) -> Mapping[str, Any]:
        ns = self._namespace
        return ns() if callable(ns) else ns

    def names(self) -> list[str]:
        ns = self.namespace
        for _ in range(5):
            try:
                return [k for k in list(ns) if type(k) is str]
            except RuntimeError:  # changed size while a thread wrote to it
                continue
        return []

    def is_private(self, name: str, value: Any) -> bool:
        if name.startswith("_") or name in IPYTHON_NAMES:
            return True
        if isinstance(self._hidden, Mapping):
            marker = object()
            return _lookup(self._hidden, name, marker) is value
        return name in self._hidden

    # --- listing ---

    def variables(
        self, *, include_private: bool = False, include_modules: bool = False
    ) -> tuple[list[VariableInfo], dict[str, list[str]]]:
        """The listed variables, sorted by name, and the names left out by kind."""
        ns = self.namespace
        shown: list[VariableInfo] = []
        left_out: dict[str, list[str]] = {}
        marker = object()
        for name in sorted(self.names(), key=lambda n: (n.lower(), n)):
            value = _lookup(ns, name, marker)
            if value is marker:
                continue
            try:
                private = self.is_private(name, value)
                code = code_kind(value)
                if private and not include_private:
                    left_out.setdefault("private", []).append(name)
                    continue
                if code is not None and not include_modules:
                    left_out.setdefault(code, []).append(name)
                    continue
                info = self.describe(name, value, "private" if private else code or "data")
            except Exception as exc:  # the object's own code failed (or was refused)
                info = VariableInfo(name, type_name(value), "data", preview=unreadable(exc))
            shown.append(info)
        return shown, left_out

    def describe(self, name: str, value: Any, kind: str = "data") -> VariableInfo:
        t = type_name(value)
        if is_secret_name(name) and kind in ("data", "private"):
            return VariableInfo(name, t, kind, preview=masked_text(value), masked=True)
        code = kind in ("module", "function", "class")
        return VariableInfo(
            name,
            t,
            kind,
            shape="" if code else shape_of(value),
            nbytes=None if code else nbytes_of(value),
            preview=_preview(name, value, kind),
        )

    def list_text(
        self,
        *,
        include_private: bool = False,
        include_modules: bool = False,
        limit: int = LIST_LIMIT,
    ) -> str:
        """The listing as the model reads it: an aligned table and what was left out."""
        shown, left_out = self.variables(
            include_private=include_private, include_modules=include_modules
        )
        lines: list[str] = []
        if not shown:
            lines.append("No variables are defined yet (beyond what is left out below).")
        else:
            total = len(shown)
            rows = shown[:limit]
            head = f"{total} variable{'s' if total != 1 else ''}"
            if total > limit:
                head += f" (showing the first {limit} by name)"
            lines.append(head + ":")
            table = [("name", "type", "shape", "memory", "value")]
            for v in rows:
                preview = v.preview.replace("\n", "⏎")
                if len(preview) > 80:
                    preview = preview[:79] + "…"
                if v.masked:
                    preview += "  (masked: the name says it is a secret)"
                table.append((v.name, v.type, v.shape, human_bytes(v.nbytes), preview))
            widths = [min(max(len(r[i]) for r in table), 40) for i in range(4)]
            for r in table:
                cells = [r[i].ljust(widths[i]) for i in range(4)]
                lines.append("  ".join([*cells, r[4]]).rstrip())
            if total > limit:
                lines.append(f"… {total - limit} more not shown; inspect_variable shows any one.")
        code = []
        for kind, plural in (
            ("module", "modules"),
            ("function", "functions"),
            ("class", "classes"),
        ):
            names = left_out.get(kind, [])
            if names:
                listed = ", ".join(names[:15]) + (", …" if len(names) > 15 else "")
                code.append(f"{len(names)} {plural if len(names) > 1 else kind}: {listed}")
        if code:
            lines.append(f"Not listed ({'; '.join(code)}): include_modules=true lists them.")
        private = left_out.get("private", [])
        if private:
            lines.append(
                f"Not listed: {len(private)} private or IPython names (_…, In, Out…): "
                "include_private=true lists them."
            )
        return mask_secrets("\n".join(lines))

    # --- one variable ---

    def resolve(self, path: str) -> tuple[str, Any]:
        """The value at ``path``: a top-level name, optionally with ``[key]`` items.

        Keys are literals (``config["db"]``, ``rows[0]``) and are looked up in builtin
        dicts, lists and tuples only; attributes (``df.columns``) are not followed.
        """
        path = path.strip()
        m = _PATH.fullmatch(path)
        if m is None:
            raise ToolError(
                f"{path!r} is not a variable name. Give a top-level name, optionally with "
                "literal [key] or [index] lookups into dicts, lists and tuples (e.g. "
                'config["db"] or rows[0]); attributes such as df.columns are not followed.'
            )
        name = m.group("name")
        ns = self.namespace
        marker = object()
        value = _lookup(ns, name, marker)
        if value is marker:
            raise ToolError(self._unknown(name))
        shown = name
        for raw in _KEY.findall(m.group("keys") or ""):
            key = ast.literal_eval(raw)
            base = builtin_base(value)
            if base is dict:
                found = exact_get(value, key, marker)
                if found is marker:
                    keys = ", ".join(safe_text(k, 40, 0) for k in list(dict.keys(value))[:20])
                    known = f"Its keys: {keys}." if keys else "It is empty."
                    raise ToolError(f"{shown} has no key {key!r}. {known}")
            elif base in (list, tuple) and isinstance(key, int):
                try:
                    found = base.__getitem__(value, key)
                except IndexError:
                    n = base.__len__(value)
                    raise ToolError(
                        f"{shown} has {n} items; index {key} is out of range."
                    ) from None
            else:
                raise ToolError(
                    f"{shown} is a {type_name(value)}; only builtin dicts (by key) and lists "
                    "or tuples (by integer index) can be looked into."
                )
            shown += f"[{key!r}]"
            if isinstance(key, str) and is_secret_name(key):
                shown += "\x00secret"  # marks a secret key anywhere on the path
            value = found
        return shown, value

    def _unknown(self, name: str) -> str:
        names = self.names()
        close = difflib.get_close_matches(name, names, n=5, cutoff=0.6)
        if not close:
            lowered = {n.lower(): n for n in names}
            close = [lowered[n] for n in difflib.get_close_matches(name.lower(), list(lowered))]
        if close:
            return f"There is no variable named {name!r}. Close matches: {', '.join(close)}."
        return f"There is no variable named {name!r}. list_variables shows the variables."

    def busy_note(self) -> str:
        """What the model must know when a cell runs while it reads (empty: none runs).

        Values are read at once, never waited for: a cell may run for hours (training),
        and reading runs none of the user's code, so no read can disturb the cell or be
        unsafe. What it cannot be is a snapshot: a name, a shape or a preview is the
        value of that instant, and statistics over data the cell is changing in place
        may mix values from before and after its changes."""
        running = self.cell_running()
        if running is None:
            return ""
        return (
            f"\n\n(A cell is running in the kernel, for {running:.1f} s so far: these are "
            "the values as they are now. They may change while it runs, and statistics "
            "over data it changes in place may mix old and new values. Read again once "
            "it has ended to be sure.)"
        )

    def inspect_text(self, path: str) -> str:
        """A description of one variable, as the model reads it."""
        shown, value = self.resolve(path)
        secret = "\x00secret" in shown
        shown = shown.replace("\x00secret", "")
        top = _PATH.fullmatch(path.strip())
        name = top.group("name") if top else shown
        if secret or is_secret_name(name):
            return (
                f"{shown}: {type_name(value)} = {masked_text(value)}\n"
                "The value is masked: the name says it holds a secret. Use it in code by "
                "name; never print it."
            )
        try:
            return mask_secrets(_inspect(shown, value))
        except Exception as exc:  # the object's own code failed (or was refused)
            return f"{shown}: {type_name(value)} {unreadable(exc)}"


_PATH = re.compile(
    r"(?P<name>[A-Za-z_]\w*)(?P<keys>(?:\s*\[\s*(?:'[^'\\]*'|\"[^\"\\]*\"|-?\d+)\s*\])*)"
)
_KEY = re.compile(r"\[\s*('[^'\\]*'|\"[^\"\\]*\"|-?\d+)\s*\]")


# --- inspecting one value ---------------------------------------------------------------


def _inspect(name: str, value: Any) -> str:
    """What ``name`` holds, described from what can be read without running its code."""
    family = family_of(value)
    if family is not None:
        summary = _data_summary(name, value, *family)
        if summary is not None:
            return summary
    base = builtin_base(value)
    if base is str:
        return string_text(name, value)
    if base in (bytes, bytearray):
        n = base.__len__(value)
        return f"{name}: {type_name(value)}, {n:,} bytes\n{safe_repr(value, 300)}"
    if base in (dict, list, tuple, set, frozenset):
        return container_text(name, value, base)
    t = type(value)
    if value is None or t in (bool, int, float, complex):
        return f"{name}: {type_name(value)} = {safe_repr(value, 200)}"
    code = code_kind(value)
    if code is not None:
        return code_text(name, value, code)
    if t in (types.GeneratorType, types.AsyncGeneratorType, types.CoroutineType):
        return f"{name}: {type_name(value)} (not advanced: reading it would consume it)"
    return generic_text(name, value)


def _lazy_frame(name: str, value: Any, klass: Any) -> str:
    return (
        f"{name}: {type_name(value)} — a lazy query; it is not collected here "
        "(that would run it). Call .collect() in a cell to see its data."
    )


_SUMMARIES: dict[str, Callable[[str, Any, Any], str]] = {
    "pandas.DataFrame": pandas_frame,
    "pandas.Series": pandas_series,
    "pandas.Index": pandas_index,
    "numpy.ndarray": numpy_array,
    "polars.DataFrame": polars_frame,
    "polars.Series": polars_series,
    "polars.LazyFrame": _lazy_frame,
}
"""The summary of each data family, by the family's name (see :func:`family_of`)."""


def _data_summary(name: str, value: Any, kind: str, klass: Any) -> str | None:
    """A pandas, numpy or polars value summarised by its family's reader (``None``: a
    family without one)."""
    foreign = foreign_arrays(value, kind)
    if foreign:
        return (
            f"{name}: {type_name(value)}, {shape_of(value)} — it holds {foreign}, a type "
            "defined outside pandas and numpy; its values, dtypes and statistics are not "
            "read here (that would run its code). Look at it in a cell."
        )
    summary = _SUMMARIES.get(kind)
    if summary is None:
        return None
    try:
        return summary(name, value, klass)
    except Exception as exc:
        return (
            f"{name}: {type_name(value)} — could not be summarised "
            f"{unreadable(exc)}.\n" + generic_text(name, value)
        )
