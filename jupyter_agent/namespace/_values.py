"""What a user's value is, and a short text of it, read without running its code.

The ground floor of :mod:`jupyter_agent.namespace.kernel_namespace`: a value's type name, its
data-library
family (pandas, numpy, polars), its builtin base, shape and approximate memory, and
:func:`safe_repr`, a rendering that calls no ``__repr__``, ``__str__``, ``__len__`` or
``__eq__`` of a user class. Invariants kept here:

- Values are read through :mod:`jupyter_agent.namespace.static` and ``type()``: never
  ``isinstance``,
  ``__class__`` or a property of the user's.
- A library's own methods are called only when the value's class *is* the library's
  (:func:`family_of`, :func:`is_trusted_class`); builtin containers are read through the
  builtin type's own methods, never a subclass's.
- Text that would show a secret is masked (:func:`masked_text`, keys named like secrets).
"""

from __future__ import annotations

import types
from collections.abc import Iterable
from typing import Any

from .._wording import byte_size
from ..secrets.shapes import MASK, is_secret_name, looks_secret, mask_secrets, mask_value
from .static import (
    function_name,
    genuine,
    module_dict,
    module_of,
    mro_of,
    name_of,
    qualname_of,
    shallow_size,
    signature,
    str_get,
)

REPR_LIMIT = 2_000
"""Most characters of a repr shown."""
ITEMS_SHOWN = 20
"""Most items of a container (or attributes of an object) shown."""

TRUSTED_REPR_MODULES = frozenset(
    {"builtins", "datetime", "decimal", "fractions", "uuid", "pathlib", "ipaddress"}
)
"""Standard-library modules whose value types are rendered directly."""
DATA_LIBRARIES = frozenset({"pandas", "numpy", "polars"})
LIBRARIES = TRUSTED_REPR_MODULES | DATA_LIBRARIES
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


def family_of(value: Any) -> tuple[str, Any] | None:
    """The data library class ``value`` is an instance of: ("pandas.DataFrame", cls)…

    Only when the value's own class is the library's: a user's subclass may override any
    method the summary would call, so it is described by its type's name and size only.
    The class is typed ``Any``: its descriptors and methods are the library's, which is
    never imported here."""
    if not genuine(type(value), DATA_LIBRARIES):
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


def builtin_base(value: Any) -> type[Any] | None:
    """The builtin container or text type ``value`` is (a subclass of), if any."""
    t = type(value)
    for base in _BUILTIN_SIZED:
        if issubclass(t, base):
            return base
    return None


def _length(value: Any) -> int | None:
    """``len(value)`` for builtin containers only, through the builtin's own method."""
    base = builtin_base(value)
    if base is None:
        return None
    try:
        length: int = base.__len__(value)
    except Exception:
        return None
    return length


def is_trusted_class(klass: type | None) -> bool:
    return klass is not None and genuine(klass, LIBRARIES)


def _shallow_size(value: Any) -> int | None:
    return shallow_size(value, builtin_base(value), LIBRARIES)


def nbytes_of(value: Any) -> int | None:
    """Approximate memory: numpy nbytes, pandas memory_usage, polars estimated_size."""
    family = family_of(value)
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


def shape_of(value: Any) -> str:
    family = family_of(value)
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
    text = safe_text(value, budget, depth)
    return text if len(text) <= budget else text[: max(budget - 1, 1)] + "…"


def safe_text(value: Any, budget: int, depth: int) -> str:
    t = type(value)
    if value is None or t is bool or t is float or t is complex:
        return repr(value)
    if t is int:
        return repr(value) if value.bit_length() < 2_000 else f"<int of {value.bit_length()} bits>"
    base = builtin_base(value)
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
    family = family_of(value)
    if family is not None:
        if family[0] == "numpy.scalar":
            return guarded_repr(value, budget)[0]
        shape = shape_of(value)
        return f"<{type_name(value)} {shape}>".replace(" >", ">")
    module = module_of(t)
    if module in TRUSTED_REPR_MODULES and is_trusted_class(t):
        return guarded_repr(value, budget)[0]
    if issubclass(t, types.ModuleType):
        return f"<module {module_name(value) or '?'}>"
    if t in (types.FunctionType, types.BuiltinFunctionType, types.MethodType):
        return f"<function {function_name(value)}>"
    if issubclass(t, type):
        return f"<class {module_of(value)}.{qualname_of(value)}>"
    return f"<{type_name(value)} object>"


_ELIDED: dict[type, str] = {dict: "{…}", list: "[…]", tuple: "(…)"}
"""A container too deep to show, by its builtin type."""


def _safe_container(value: Any, base: type[Any], budget: int, depth: int) -> str:
    n = base.__len__(value)
    if depth <= 0:
        return _ELIDED.get(base, "{…}") + f" ({n} items)"
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
            key_text = safe_text(key, 40, 0)
            if type(key) is str and is_secret_name(key):
                val_text = masked_text(val)
            else:
                val_text = safe_text(val, max(budget - used, 20), depth - 1)
            part = f"{key_text}: {val_text}"
        else:
            part = safe_text(item, max(budget - used, 20), depth - 1)
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


def masked_text(value: Any) -> str:
    if builtin_base(value) is str:
        return repr(mask_value(str.__str__(value)))
    return MASK


def guarded_repr(value: Any, limit: int = REPR_LIMIT) -> tuple[str, bool]:
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


# --- kinds and labels -------------------------------------------------------------------


_FUNCTION_TYPES = (
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.BuiltinMethodType,
)


def code_kind(value: Any) -> str | None:
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


def module_name(module: Any) -> str:
    """A module's ``__name__`` from its own dict, read through the module type's own
    descriptor (a module subclass's ``__dict__`` property is never called)."""
    name = str_get(module_dict(module) or {}, "__name__")
    return name if type(name) is str else ""


def signature_text(value: Any) -> str:
    """A function's parameters, from its code (never ``inspect.signature``, which may
    follow ``__wrapped__``, call ``__signature__`` or evaluate annotations)."""
    return signature(value, lambda default: safe_repr(default, 30))


def label_text(label: Any) -> str:
    """A column or index label as text, without calling a user object's ``__str__``."""
    return str.__str__(label) if builtin_base(label) is str else safe_text(label, 40, 0)


def unreadable(exc: BaseException) -> str:
    """What to say of an object whose own code broke its reading."""
    args = BaseException.__dict__["args"].__get__(exc)
    return f"(could not be read: its own code raised {name_of(type(exc))}{safe_repr(args, 200)})"


def header(name: str, value: Any, extra: str = "") -> str:
    """The first line of a description: name, type, ``extra`` and approximate memory."""
    size = human_bytes(nbytes_of(value))
    parts = [f"{name}: {type_name(value)}"]
    if extra:
        parts.append(extra)
    if size:
        parts.append(f"~{size}")
    return ", ".join(parts)
