"""The kernel's variables, as the agent sees them: summaries, never a run of user code.

:class:`KernelNamespace` wraps the user's namespace mapping (IPython's ``user_ns``, or any
dict) as a resource for the namespace tools. It lists variables with their type, shape
and approximate memory, and inspects one variable in depth: tables, arrays, containers,
strings, and other objects.

What it does to the user's objects is deliberately narrow, because inspecting must not
change anything nor take long:

- Everything is read through :mod:`jupyter_agent.static` (``type()``, C-level
  descriptors, exact-key dict reads), so no ``__class__``, ``__getattribute__``,
  metaclass, property or ``__eq__`` of the user's runs.
- pandas, numpy and polars values are summarised through the library's own methods only
  when the value's class *is* the library's (:func:`~jupyter_agent.static.genuine`): a
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
  :func:`~jupyter_agent.secrets.mask_secrets`.

This module belongs to the framework layer: it imports nothing of Jupyter.
"""

from __future__ import annotations

import ast
import difflib
import inspect
import re
import sys
import types
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ._wording import byte_size
from .errors import ToolError
from .secrets import MASK, is_secret_name, looks_secret, mask_secrets, mask_value
from .static import (
    bases_of,
    class_dict,
    exact_get,
    function_doc,
    function_module,
    function_name,
    function_source,
    genuine,
    instance_dict,
    module_dict,
    module_of,
    mro_of,
    name_of,
    owner_of,
    qualname_of,
    shallow_size,
    signature,
    str_get,
    type_attribute,
)

IPYTHON_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython"})
"""Names IPython puts in every namespace; listed only with ``include_private``."""

LIST_LIMIT = 200
"""Most variables :meth:`KernelNamespace.list_text` shows."""
STATS_CELL_LIMIT = 5_000_000
"""Most cells (rows × columns, or array elements) for which statistics are computed."""
REPR_LIMIT = 2_000
"""Most characters of a repr shown."""
STRING_HEAD = 500
ITEMS_SHOWN = 20
COLUMNS_SHOWN = 40

_TRUSTED_REPR_MODULES = frozenset(
    {"builtins", "datetime", "decimal", "fractions", "uuid", "pathlib", "ipaddress"}
)
"""Standard-library modules whose value types are rendered directly."""
_DATA_LIBRARIES = frozenset({"pandas", "numpy", "polars"})
_LIBRARIES = _TRUSTED_REPR_MODULES | _DATA_LIBRARIES
"""Modules whose genuine classes' own methods may be called (C code or library code)."""


# --- what a value is ------------------------------------------------------------------


def type_name(value: Any) -> str:
    """``int``, ``pandas.DataFrame``, ``numpy.ndarray``, ``__main__.Model``…"""
    t = type(value)
    module = module_of(t) or "?"
    if module == "builtins":
        return qualname_of(t)
    top = module.split(".")[0]
    if top in ("pandas", "numpy", "polars"):
        return f"{top}.{qualname_of(t)}"
    return f"{module}.{qualname_of(t)}"


def _family(value: Any) -> tuple[str, type] | None:
    """The data library class ``value`` is an instance of: ("pandas.DataFrame", cls)…

    Only when the value's own class is the library's: a user's subclass may override any
    method the summary would call, so it is described by its type's name and size only."""
    if not genuine(type(value), _DATA_LIBRARIES):
        return None  # not a library's class, or a look-alike claiming its module
    for klass in mro_of(type(value)):
        module = module_of(klass)
        top = module.split(".")[0]
        if top not in ("pandas", "numpy", "polars"):
            continue
        name = name_of(klass)
        if top == "pandas" and name in ("DataFrame", "Series", "Index"):
            return f"pandas.{name}", klass
        if top == "numpy" and name == "ndarray":
            return "numpy.ndarray", klass
        if top == "numpy" and name == "generic":
            return "numpy.scalar", klass
        if top == "polars" and name in ("DataFrame", "Series", "LazyFrame"):
            return f"polars.{name}", klass
    return None


_BUILTIN_SIZED = (dict, list, tuple, set, frozenset, str, bytes, bytearray, range)


def _builtin_base(value: Any) -> type | None:
    """The builtin container or text type ``value`` is (a subclass of), if any."""
    t = type(value)
    for base in _BUILTIN_SIZED:
        if issubclass(t, base):
            return base
    return None


def _length(value: Any) -> int | None:
    """``len(value)`` for builtin containers only, through the builtin's own method."""
    base = _builtin_base(value)
    if base is None:
        return None
    try:
        return base.__len__(value)
    except Exception:
        return None


def _is_trusted_class(klass: type | None) -> bool:
    return klass is not None and genuine(klass, _LIBRARIES)


def _shallow_size(value: Any) -> int | None:
    return shallow_size(value, _builtin_base(value), _LIBRARIES)


def _nbytes(value: Any) -> int | None:
    """Approximate memory: numpy nbytes, pandas memory_usage, polars estimated_size."""
    family = _family(value)
    try:
        if family is not None:
            kind, klass = family
            if kind == "numpy.ndarray":
                return int(klass.nbytes.__get__(value))
            if kind == "pandas.DataFrame":
                return int(klass.memory_usage(value, index=True, deep=False).sum())
            if kind == "pandas.Series":
                return int(klass.memory_usage(value, index=True, deep=False))
            if kind == "pandas.Index":
                return int(klass.memory_usage(value, deep=False))
            if kind in ("polars.DataFrame", "polars.Series"):
                return int(klass.estimated_size(value))
            if kind == "polars.LazyFrame":
                return None
    except Exception:
        return None
    return _shallow_size(value)


def _shape(value: Any) -> str:
    family = _family(value)
    try:
        if family is not None:
            kind, klass = family
            if kind == "numpy.ndarray":
                return str(tuple(klass.shape.__get__(value)))
            if kind in ("pandas.DataFrame", "polars.DataFrame"):
                rows, cols = klass.shape.__get__(value)
                return f"{rows}×{cols}"
            if kind in ("pandas.Series", "pandas.Index"):
                return f"len {klass.shape.__get__(value)[0]}"
            if kind == "polars.Series":
                return f"len {klass.len(value)}"
            return ""
    except Exception:
        return ""
    n = _length(value)
    return f"len {n}" if n is not None else ""


def human_bytes(n: int | None) -> str:
    return "" if n is None else byte_size(n)


# --- safe renderings (never user code) --------------------------------------------------


def safe_repr(value: Any, budget: int = 80, depth: int = 2) -> str:
    """A short rendering of ``value`` that runs no user code (unknown objects by type)."""
    text = _safe(value, budget, depth)
    return text if len(text) <= budget else text[: max(budget - 1, 1)] + "…"


def _safe(value: Any, budget: int, depth: int) -> str:
    t = type(value)
    if value is None or t is bool or t is float or t is complex:
        return repr(value)
    if t is int:
        return repr(value) if value.bit_length() < 2_000 else f"<int of {value.bit_length()} bits>"
    base = _builtin_base(value)
    if base is str:
        s = str.__str__(value)
        if looks_secret(s):
            return repr(mask_secrets(s[:budget]))
        return repr(s[:budget]) + ("…" if len(s) > budget else "")
    if base in (bytes, bytearray):
        raw = bytes(base.__getitem__(value, slice(0, budget)))
        return repr(raw) + ("…" if base.__len__(value) > budget else "")
    if base is range:
        return repr(value) if t is range else f"<{type_name(value)}>"
    if base in (dict, list, tuple, set, frozenset):
        return _safe_container(value, base, budget, depth)
    family = _family(value)
    if family is not None:
        if family[0] == "numpy.scalar":
            return _guarded_repr(value, budget)[0]
        shape = _shape(value)
        return f"<{type_name(value)} {shape}>".replace(" >", ">")
    module = module_of(t)
    if module in _TRUSTED_REPR_MODULES and _is_trusted_class(t):
        return _guarded_repr(value, budget)[0]
    if issubclass(t, types.ModuleType):
        return f"<module {_module_name(value) or '?'}>"
    if t in (types.FunctionType, types.BuiltinFunctionType, types.MethodType):
        return f"<function {function_name(value)}>"
    if issubclass(t, type):
        return f"<class {module_of(value)}.{qualname_of(value)}>"
    return f"<{type_name(value)} object>"


def _safe_container(value: Any, base: type, budget: int, depth: int) -> str:
    n = base.__len__(value)
    if depth <= 0:
        return {dict: "{…}", list: "[…]", tuple: "(…)"}.get(base, "{…}") + f" ({n} items)"
    parts: list[str] = []
    used = 0
    shown = 0
    if base is dict:
        items: Iterable[Any] = dict.items(value)
    else:
        items = base.__iter__(value)
    for item in items:
        if used > budget or shown >= ITEMS_SHOWN:
            break
        if base is dict:
            key, val = item
            key_text = _safe(key, 40, 0)
            if type(key) is str and is_secret_name(key):
                val_text = _masked(val)
            else:
                val_text = _safe(val, max(budget - used, 20), depth - 1)
            part = f"{key_text}: {val_text}"
        else:
            part = _safe(item, max(budget - used, 20), depth - 1)
        parts.append(part)
        used += len(part) + 2
        shown += 1
    more = ", …" if shown < n else ""
    inner = ", ".join(parts) + more
    if base is dict:
        text = "{" + inner + "}"
    elif base is list:
        text = "[" + inner + "]"
    elif base is tuple:
        text = "(" + inner + ("," if n == 1 else "") + ")"
    else:
        text = ("{" + inner + "}") if n else "set()"
    if type(value) is not base:
        text = f"{type_name(value)}({text})"
    return text


def _masked(value: Any) -> str:
    if _builtin_base(value) is str:
        return repr(mask_value(str.__str__(value)))
    return MASK


def _guarded_repr(value: Any, limit: int = REPR_LIMIT) -> tuple[str, bool]:
    """``repr(value)`` capped at ``limit`` characters; (text, ok). Every error is caught."""
    try:
        text = repr(value)
        if not isinstance(text, str):
            raise TypeError(f"__repr__ returned {type(text).__name__}, not str")
    except BaseException as exc:  # user code may raise anything
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        return f"<repr() raised {type(exc).__name__}: {str(exc)[:200]}>", False
    if len(text) > limit:
        text = text[:limit] + f"… ({len(text) - limit:,} more characters)"
    return text, True


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


_FUNCTION_TYPES = (
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.BuiltinMethodType,
)


def _code_kind(value: Any) -> str | None:
    """module, class or function, by the value's real type (``type()``, never
    ``isinstance``, which asks the object for its ``__class__``)."""
    t = type(value)
    if issubclass(t, types.ModuleType):
        return "module"
    if issubclass(t, type):
        return "class"
    if t in _FUNCTION_TYPES:
        return "function"
    return None


def _module_name(module: Any) -> str:
    """A module's ``__name__`` from its own dict, read through the module type's own
    descriptor (a module subclass's ``__dict__`` property is never called)."""
    name = str_get(module_dict(module) or {}, "__name__")
    return name if type(name) is str else ""


def _signature(value: Any) -> str:
    """A function's parameters, from its code (never ``inspect.signature``, which may
    follow ``__wrapped__``, call ``__signature__`` or evaluate annotations)."""
    return signature(value, lambda default: safe_repr(default, 30))


def _label(label: Any) -> str:
    """A column or index label as text, without calling a user object's ``__str__``."""
    return str.__str__(label) if _builtin_base(label) is str else _safe(label, 40, 0)


def _preview(name: str, value: Any, kind: str) -> str:
    if kind == "module":
        return _module_name(value)
    if kind == "function":
        return function_name(value).rsplit(".", 1)[-1] + _signature(value)
    if kind == "class":
        return f"class {module_of(value)}.{qualname_of(value)}"
    family = _family(value)
    if family is not None:
        kind_name, klass = family
        try:
            if kind_name == "pandas.DataFrame":
                columns = [_label(c) for c in list(klass.columns.__get__(value))[:12]]
                return "columns: " + ", ".join(columns)
            if kind_name == "polars.DataFrame":
                return "columns: " + ", ".join(list(klass.columns.__get__(value))[:12])
            if kind_name in ("numpy.ndarray", "pandas.Series", "pandas.Index"):
                return f"dtype {klass.dtype.__get__(value)}"
            if kind_name == "polars.Series":
                return f"dtype {klass.dtype.__get__(value)}"
            if kind_name == "numpy.scalar":
                return _guarded_repr(value, 60)[0]
        except Exception:
            return ""
        return ""
    t = type(value)
    if value is None or t in (bool, int, float, complex) or _builtin_base(value) is not None:
        return safe_repr(value, 60)
    if module_of(t) in _TRUSTED_REPR_MODULES:
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
    """

    def __init__(
        self,
        namespace: Mapping[str, Any] | Callable[[], Mapping[str, Any]],
        *,
        hidden: Mapping[str, Any] | Iterable[str] = (),
    ) -> None:
        self._namespace = namespace
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
                code = _code_kind(value)
                if private and not include_private:
                    left_out.setdefault("private", []).append(name)
                    continue
                if code is not None and not include_modules:
                    left_out.setdefault(code, []).append(name)
                    continue
                info = self.describe(name, value, "private" if private else code or "data")
            except Exception as exc:  # the object's own code failed (or was refused)
                info = VariableInfo(name, type_name(value), "data", preview=_unreadable(exc))
            shown.append(info)
        return shown, left_out

    def describe(self, name: str, value: Any, kind: str = "data") -> VariableInfo:
        t = type_name(value)
        if is_secret_name(name) and kind in ("data", "private"):
            return VariableInfo(name, t, kind, preview=_masked(value), masked=True)
        code = kind in ("module", "function", "class")
        return VariableInfo(
            name,
            t,
            kind,
            shape="" if code else _shape(value),
            nbytes=None if code else _nbytes(value),
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
            base = _builtin_base(value)
            if base is dict:
                found = exact_get(value, key, marker)
                if found is marker:
                    keys = ", ".join(_safe(k, 40, 0) for k in list(dict.keys(value))[:20])
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

    def inspect_text(self, path: str) -> str:
        """A description of one variable, as the model reads it."""
        shown, value = self.resolve(path)
        secret = "\x00secret" in shown
        shown = shown.replace("\x00secret", "")
        top = _PATH.fullmatch(path.strip())
        name = top.group("name") if top else shown
        if secret or is_secret_name(name):
            return (
                f"{shown}: {type_name(value)} = {_masked(value)}\n"
                "The value is masked: the name says it holds a secret. Use it in code by "
                "name; never print it."
            )
        try:
            return mask_secrets(_inspect(shown, value))
        except Exception as exc:  # the object's own code failed (or was refused)
            return f"{shown}: {type_name(value)} {_unreadable(exc)}"


def _unreadable(exc: BaseException) -> str:
    """What to say of an object whose own code broke its reading."""
    args = BaseException.__dict__["args"].__get__(exc)
    return f"(could not be read: its own code raised {name_of(type(exc))}{safe_repr(args, 200)})"


_PATH = re.compile(
    r"(?P<name>[A-Za-z_]\w*)(?P<keys>(?:\s*\[\s*(?:'[^'\\]*'|\"[^\"\\]*\"|-?\d+)\s*\])*)"
)
_KEY = re.compile(r"\[\s*('[^'\\]*'|\"[^\"\\]*\"|-?\d+)\s*\]")


# --- inspecting one value ---------------------------------------------------------------


def _inspect(name: str, value: Any) -> str:
    family = _family(value)
    if family is not None:
        kind, klass = family
        foreign = _foreign_arrays(value, kind)
        if foreign:
            return (
                f"{name}: {type_name(value)}, {_shape(value)} — it holds {foreign}, a type "
                "defined outside pandas and numpy; its values, dtypes and statistics are not "
                "read here (that would run its code). Look at it in a cell."
            )
        try:
            if kind == "pandas.DataFrame":
                return _pandas_frame(name, value, klass)
            if kind == "pandas.Series":
                return _pandas_series(name, value, klass)
            if kind == "pandas.Index":
                return _pandas_index(name, value, klass)
            if kind == "numpy.ndarray":
                return _numpy_array(name, value, klass)
            if kind == "polars.DataFrame":
                return _polars_frame(name, value, klass)
            if kind == "polars.Series":
                return _polars_series(name, value, klass)
            if kind == "polars.LazyFrame":
                return (
                    f"{name}: {type_name(value)} — a lazy query; it is not collected here "
                    "(that would run it). Call .collect() in a cell to see its data."
                )
        except Exception as exc:
            return (
                f"{name}: {type_name(value)} — could not be summarised "
                f"{_unreadable(exc)}.\n" + _generic(name, value)
            )
    base = _builtin_base(value)
    if base is str:
        return _string(name, value)
    if base in (bytes, bytearray):
        n = base.__len__(value)
        return f"{name}: {type_name(value)}, {n:,} bytes\n{safe_repr(value, 300)}"
    if base in (dict, list, tuple, set, frozenset):
        return _container(name, value, base)
    t = type(value)
    if value is None or t in (bool, int, float, complex):
        return f"{name}: {type_name(value)} = {safe_repr(value, 200)}"
    code = _code_kind(value)
    if code is not None:
        return _code(name, value, code)
    if t in (types.GeneratorType, types.AsyncGeneratorType, types.CoroutineType):
        return f"{name}: {type_name(value)} (not advanced: reading it would consume it)"
    return _generic(name, value)


def _foreign_arrays(value: Any, kind: str) -> str:
    """The type of an array a pandas object holds that is not pandas' or numpy's own (a
    user's ExtensionArray, whose methods pandas would call); "" when there is none."""
    if not kind.startswith("pandas."):
        return ""
    attributes = instance_dict(value) or {}
    if kind == "pandas.Index":
        arrays = [str_get(attributes, "_data")]
    else:
        manager = str_get(attributes, "_mgr")
        if manager is None or not genuine(type(manager), _DATA_LIBRARIES):
            return "an unknown storage"
        arrays = [block.values for block in manager.blocks]
    for array in arrays:
        if array is not None and not genuine(type(array), _DATA_LIBRARIES):
            return f"a {type_name(array)}"
    return ""


def _header(name: str, value: Any, extra: str = "") -> str:
    size = human_bytes(_nbytes(value))
    parts = [f"{name}: {type_name(value)}"]
    if extra:
        parts.append(extra)
    if size:
        parts.append(f"~{size}")
    return ", ".join(parts)


def _secret_columns(columns: Iterable[Any]) -> list[Any]:
    return [c for c in columns if type(c) is str and is_secret_name(c)]


_PLAIN_CELLS = frozenset({str, int, float, bool, complex, bytes, type(None)})


def _object_nulls(values: list[Any], missing: tuple[Any, ...]) -> int | None:
    """Null cells of an object column, counted without calling any cell's code; None when
    a cell is an object of another kind (pandas' own check would ask it)."""
    nulls = 0
    for v in values:
        t = type(v)
        if v is None or any(v is m for m in missing) or (t is float and v != v):
            nulls += 1
        elif t not in _PLAIN_CELLS and not genuine(t, _LIBRARIES):
            return None
    return nulls


def _plain_cells(frame: Any, columns: list[Any], dtypes: Any) -> None:
    """Turn the object cells and labels of ``frame`` (our own small copy) into text made
    without user code, so that pandas' formatting calls no ``__str__`` or ``__repr__``."""
    for i in range(len(columns)):
        if getattr(dtypes.iloc[i], "kind", "") == "O":
            cells = list(frame.iloc[:, i])
            frame.isetitem(i, [v if type(v) is str else safe_repr(v, 40) for v in cells])
    frame.columns = [_label(c) for c in columns]
    frame.index = [_label(i) for i in list(frame.index)]


def _pandas_frame(name: str, df: Any, klass: type) -> str:
    rows, cols = klass.shape.__get__(df)
    out = [_header(name, df, f"{rows:,} rows × {cols:,} columns")]
    columns = list(klass.columns.__get__(df))
    dtypes = klass.dtypes.__get__(df)
    cells = rows * max(cols, 1)
    nulls: list[int | None] | None = None
    if cells <= STATS_CELL_LIMIT:
        objects = [getattr(dtypes.iloc[i], "kind", "") == "O" for i in range(cols)]
        typed = [i for i in range(cols) if not objects[i]]
        counts = iter(klass.isna(df.iloc[:, typed]).sum().tolist())  # in column order
        missing = _pandas_missing()
        nulls = [
            _object_nulls(list(df.iloc[:, i]), missing) if objects[i] else int(next(counts))
            for i in range(cols)
        ]
    out.append("Columns (dtype, nulls):" if nulls is not None else "Columns (dtype):")
    for i, col in enumerate(columns[:COLUMNS_SHOWN]):
        detail = str(dtypes.iloc[i])
        if nulls is not None:
            n = nulls[i]
            detail += f", {n:,} null" if n is not None else ", holds Python objects"
        out.append(f"  {_label(col)} ({detail})")
    if len(columns) > COLUMNS_SHOWN:
        out.append(f"  … {len(columns) - COLUMNS_SHOWN} more columns")
    if nulls is None:
        out.append(f"  (null counts skipped: {cells:,} cells)")
    head = klass.head(df, 5).copy()  # our own copy: the user's frame is untouched
    _plain_cells(head, columns, dtypes)
    hidden = _secret_columns(columns)
    for col in hidden:
        head[col] = MASK
    beside = _mask_beside_secret_names(head)
    out.append("Head (5 rows):")
    out.append(head.to_string(max_cols=20, max_colwidth=40, show_dimensions=False, line_width=120))
    if hidden:
        out.append(f"(values of {', '.join(map(str, hidden))} masked: the names say secret)")
    if beside:
        out.append(f"({beside} value(s) masked: a cell beside them names a secret)")
    numeric = [i for i in range(cols) if getattr(dtypes.iloc[i], "kind", "") in "biuf"]
    numeric = [i for i in numeric if columns[i] not in hidden]
    if numeric and cells <= STATS_CELL_LIMIT:
        described = klass.describe(df.iloc[:, numeric[:20]].copy())
        _plain_cells(described, list(described.columns), described.dtypes)
        out.append(
            "describe() of numeric columns" + (" (first 20)" if len(numeric) > 20 else "") + ":"
        )
        out.append(described.to_string(max_cols=20, line_width=120))
    elif numeric:
        out.append(f"describe() skipped: {cells:,} cells is more than the quick limit.")
    return "\n".join(out)


def _pandas_missing() -> tuple[Any, ...]:
    pandas = sys.modules.get("pandas")
    return tuple(getattr(pandas, n) for n in ("NA", "NaT")) if pandas is not None else ()


def _mask_beside_secret_names(head: Any) -> int:
    """In a name/value table (``name="password", value="hunter2"``), mask the text cells of
    each row that holds a secret's name; returns how many were masked."""
    masked = 0
    rows, cols = head.shape
    for r in range(rows):
        cells = [head.iat[r, c] for c in range(cols)]
        if not any(type(v) is str and is_secret_name(v) for v in cells):
            continue
        for c, v in enumerate(cells):
            if type(v) is str and not is_secret_name(v) and v != MASK:
                head.iat[r, c] = MASK
                masked += 1
    return masked


def _pandas_series(name: str, s: Any, klass: type) -> str:
    n = klass.shape.__get__(s)[0]
    dtype = klass.dtype.__get__(s)
    label = klass.name.__get__(s)
    objects = getattr(dtype, "kind", "") == "O"
    out = [_header(name, s, f"{n:,} values, dtype {dtype}, name {safe_repr(label, 60)}")]
    if n <= STATS_CELL_LIMIT:
        nulls = _object_nulls(list(s), _pandas_missing()) if objects else int(klass.isna(s).sum())
        out.append(f"Nulls: {nulls:,}" if nulls is not None else "Nulls: (holds Python objects)")
    if type(label) is str and is_secret_name(label):
        out.append("Values masked: the series' name says it holds secrets.")
        return "\n".join(out)
    head = klass.head(s, 5).to_frame("value")
    _plain_cells(head, ["value"], head.dtypes)
    out.append("Head (5):")
    out.append(head["value"].to_string(max_rows=5))
    if getattr(dtype, "kind", "") in "biuf" and n <= STATS_CELL_LIMIT:
        out.append("describe():")
        out.append(klass.describe(s).to_string())
    return "\n".join(out)


def _pandas_index(name: str, index: Any, klass: type) -> str:
    n = klass.shape.__get__(index)[0]
    out = [_header(name, index, f"{n:,} entries, dtype {klass.dtype.__get__(index)}")]
    out.append("First entries: " + safe_repr(list(index[:ITEMS_SHOWN]), 600))
    return "\n".join(out)


def _numpy_array(name: str, a: Any, klass: type) -> str:
    shape = tuple(klass.shape.__get__(a))
    dtype = klass.dtype.__get__(a)
    size = int(klass.size.__get__(a))
    out = [_header(name, a, f"shape {shape}, dtype {dtype}, {size:,} elements")]
    np = sys.modules.get("numpy")
    kind = getattr(dtype, "kind", "")
    if np is not None and kind in "biuf" and 0 < size <= STATS_CELL_LIMIT:
        if kind == "f":
            nans = int(np.isnan(a).sum())
            stats = (np.nanmin(a), np.nanmax(a), np.nanmean(a)) if nans < size else None
            if nans:
                out.append(f"NaN: {nans:,}")
        else:
            stats = (a.min(), a.max(), a.mean())
        if stats is not None:
            lo, hi, mean = stats
            out.append(f"min {lo!s}, max {hi!s}, mean {float(mean):.6g}")
    elif size > STATS_CELL_LIMIT and kind in "biuf":
        out.append(f"(statistics skipped: {size:,} elements)")
    if np is not None and not dtype.hasobject:
        out.append("Preview:")
        out.append(np.array2string(a, threshold=50, edgeitems=3, max_line_width=100))
    elif size:  # Python objects inside: shown without their own code
        first = [safe_repr(x, 60) for x in a.ravel()[:10].tolist()]
        out.append("First elements (Python objects): " + ", ".join(first))
    return "\n".join(out)


def _polars_frame(name: str, df: Any, klass: type) -> str:
    rows, cols = klass.shape.__get__(df)
    out = [_header(name, df, f"{rows:,} rows × {cols:,} columns")]
    schema = klass.schema.__get__(df)
    out.append("Schema:")
    items = list(schema.items())
    for col, dtype in items[:COLUMNS_SHOWN]:
        out.append(f"  {col} ({dtype})")
    if len(items) > COLUMNS_SHOWN:
        out.append(f"  … {len(items) - COLUMNS_SHOWN} more columns")
    objects = [col for col, dtype in items if _polars_objects(dtype)]
    hidden = _secret_columns(schema)
    shown = klass.drop(df, objects) if objects else df
    head = klass.head(shown, 5)
    if hidden:
        lit = sys.modules["polars"].lit
        head = head.with_columns(*[lit(MASK).alias(c) for c in hidden])
    out.append("Head (5 rows):")
    out.append(str(head))
    if objects:
        out.append(f"(columns of Python objects not shown: {', '.join(objects)})")
    if rows * max(cols, 1) <= STATS_CELL_LIMIT:
        out.append("describe():")
        out.append(str(klass.describe(shown.drop(hidden) if hidden else shown)))
    else:
        out.append(f"describe() skipped: {rows * cols:,} cells")
    return "\n".join(out)


def _polars_objects(dtype: Any) -> bool:
    """Whether a polars column holds Python objects (formatting them calls their code)."""
    return name_of(type(dtype)) == "Object" or dtype is sys.modules["polars"].Object


def _polars_series(name: str, s: Any, klass: type) -> str:
    n = klass.len(s)
    label = klass.name.__get__(s)
    dtype = klass.dtype.__get__(s)
    out = [_header(name, s, f"{n:,} values, dtype {dtype}, name {label!r}")]
    out.append(f"Nulls: {klass.null_count(s):,}")
    if type(label) is str and is_secret_name(label):
        out.append("Values masked: the series' name says it holds secrets.")
        return "\n".join(out)
    if _polars_objects(dtype):
        out.append("(values are Python objects: not shown)")
        return "\n".join(out)
    out.append("Head (5):")
    out.append(str(klass.head(s, 5)))
    return "\n".join(out)


def _string(name: str, value: str) -> str:
    s = str.__str__(value)
    lines = s.count("\n") + 1 if s else 0
    plural = "s" if lines != 1 else ""
    out = [f"{name}: {type_name(value)}, {len(s):,} characters, {lines:,} line{plural}"]
    head = s[:STRING_HEAD]
    if looks_secret(s) and len(s) < 200:
        out.append(mask_secrets(repr(head)) + "  (masked: the value looks like a credential)")
    else:
        out.append(
            repr(head)
            + (f"… ({len(s) - STRING_HEAD:,} more characters)" if len(s) > STRING_HEAD else "")
        )
    return "\n".join(out)


def _container(name: str, value: Any, base: type) -> str:
    n = base.__len__(value)
    noun = {dict: "keys", list: "items", tuple: "items"}.get(base, "elements")
    out = [_header(name, value, f"{n:,} {noun}") + " (shallow size)"]
    if base is dict:
        out.append(f"First {min(n, ITEMS_SHOWN)} items:" if n else "(empty)")
        for i, (key, val) in enumerate(dict.items(value)):
            if i >= ITEMS_SHOWN:
                out.append(f"  … {n - ITEMS_SHOWN:,} more")
                break
            if type(key) is str and is_secret_name(key):
                shown = _masked(val) + "  (masked: the key says secret)"
            else:
                shown = f"{type_name(val)} {safe_repr(val, 120)}"
            out.append(f"  {_safe(key, 60, 0)}: {shown}")
        return "\n".join(out)
    kinds: dict[str, int] = {}
    for i, item in enumerate(base.__iter__(value)):
        if i >= 1_000:
            break
        kinds[type_name(item)] = kinds.get(type_name(item), 0) + 1
    if kinds:
        sample = " (of the first 1,000)" if n > 1_000 else ""
        out.append(
            "Item types" + sample + ": " + ", ".join(f"{k} ×{v}" for k, v in sorted(kinds.items()))
        )
    shown = []
    for i, item in enumerate(base.__iter__(value)):
        if i >= ITEMS_SHOWN:
            break
        shown.append(
            f"  [{i}] {safe_repr(item, 120)}"
            if base in (list, tuple)
            else f"  {safe_repr(item, 120)}"
        )
    if shown:
        out.append(f"First {len(shown)}:")
        out.extend(shown)
        if n > len(shown):
            out.append(f"  … {n - len(shown):,} more")
    return "\n".join(out)


def _text(value: Any) -> str:
    return value if type(value) is str else ""


def _code(name: str, value: Any, kind: str) -> str:
    if kind == "module":
        attrs = module_dict(value) or {}
        out = [f"{name}: module {_text(str_get(attrs, '__name__')) or '?'}"]
        if _text(str_get(attrs, "__file__")):
            out.append(f"file: {str_get(attrs, '__file__')}")
        if _text(str_get(attrs, "__version__")):
            out.append(f"version: {str_get(attrs, '__version__')}")
        return "\n".join(out)
    if kind == "class":
        out = [f"{name}: class {module_of(value)}.{qualname_of(value)}"]
        out.append("bases: " + ", ".join(qualname_of(b) for b in bases_of(value)))
        members = [k for k in class_dict(value) if type(k) is str and not k.startswith("__")]
        if members:
            out.append("defines: " + ", ".join(members[:40]))
        doc = _text(type_attribute(value, "__doc__"))
        if doc.strip():
            out.append("doc: " + inspect.cleandoc(doc)[:600])
        return "\n".join(out)
    out = [f"{name}: {type_name(value)}"]
    parameters = _signature(value)
    if parameters:
        out.append(f"signature: {function_name(value).rsplit('.', 1)[-1]}{parameters}")
    if function_module(value):
        out.append(f"module: {function_module(value)}")
    doc = function_doc(value)
    if doc.strip():
        out.append("doc: " + doc[:600])
    if type(value) is types.FunctionType:
        source = function_source(value, max_lines=60)
        if source:
            out.append("source:\n" + source)
    return "\n".join(out)


def _generic(name: str, value: Any) -> str:
    """Any other object: its type, size, own attributes (read from its ``__dict__``
    without its code) and the methods its class defines; its repr only when the class is
    a genuine standard or data library type."""
    out = [_header(name, value)]
    trusted = _is_trusted_class(type(value))  # a subclass's repr may be its own code
    if trusted and owner_of(value, "__repr__") is not object:
        text, ok = _guarded_repr(value)
        out.append(("repr: " if ok else "") + text)
    attrs = instance_dict(value)
    if attrs:
        out.append(f"attributes ({dict.__len__(attrs)}):")
        for i, (key, val) in enumerate(dict.items(attrs)):
            if i >= ITEMS_SHOWN:
                out.append(f"  … {dict.__len__(attrs) - ITEMS_SHOWN} more")
                break
            label = _label(key)
            if type(key) is str and is_secret_name(key):
                out.append(f"  {label}: {_masked(val)}  (masked: the name says secret)")
            else:
                out.append(f"  {label}: {type_name(val)} {safe_repr(val, 100)}")
    methods = _methods(type(value))
    if methods:
        out.append("methods: " + ", ".join(methods[:40]) + (", …" if len(methods) > 40 else ""))
    if not trusted:
        out.append(
            "(its own code — repr, properties, methods — is not run when inspecting; "
            "call them in a cell to see more)"
        )
    return "\n".join(out)


_METHOD_TYPES = (types.FunctionType, staticmethod, classmethod, property)


def _methods(klass: type) -> list[str]:
    """The public methods and properties the classes of ``klass``'s MRO define (up to
    ``object``), read from their namespaces."""
    names: dict[str, None] = {}
    for k in mro_of(klass):
        if k is object:
            break
        for key, member in class_dict(k).items():
            if type(key) is str and not key.startswith("_") and type(member) in _METHOD_TYPES:
                names.setdefault(key)
    return list(names)
