"""Reading an object without running its code.

Python calls user code at almost every turn: ``isinstance`` asks an object for its
``__class__``, ``getattr`` goes through ``__getattribute__`` and properties, a class's
attributes through its metaclass, a dict lookup through the keys' ``__eq__`` when hashes
collide, ``inspect.signature`` through ``__wrapped__`` and ``__signature__``. Every read
here goes instead through the C-level descriptors of ``type``, ``object``,
``types.ModuleType`` and ``types.FunctionType``, the unbound methods of the builtin
``dict``, and the fields of code objects, none of which a user class can override.

:func:`genuine` tells a data library's own class from a look-alike (a user class that
sets ``__module__ = "pandas"``): only the object the library's module holds under that
name is genuine.
"""

from __future__ import annotations

import inspect
import linecache
import os
import sys
import types
from collections.abc import Callable, Mapping
from typing import Any

from ..workspace.access import secret_place
from ..workspace.paths import read_regular

_TYPE_DICT = type.__dict__["__dict__"]
_MODULE_DICT = vars(types.ModuleType)["__dict__"]  # vars(): the type stubs' is a property
_FUNCTION = {
    name: types.FunctionType.__dict__[name]
    for name in ("__code__", "__defaults__", "__kwdefaults__", "__name__", "__qualname__",
                 "__doc__", "__module__")
}  # fmt: skip
_METHOD_FUNC = types.MethodType.__dict__["__func__"]
_SOURCE_BYTES = 2_000_000
"""Largest source file read to show a function's code."""


def type_attribute(klass: type, name: str) -> Any:
    """A class's ``__module__``, ``__qualname__``, ``__name__``, ``__mro__``, ``__bases__``
    or ``__doc__`` through ``type``'s own descriptor (no metaclass code); None on failure."""
    try:
        return type.__dict__[name].__get__(klass, type)
    except Exception:
        return None


def module_of(klass: type) -> str:
    module = type_attribute(klass, "__module__")
    return module if type(module) is str else ""


def qualname_of(klass: type) -> str:
    qualname = type_attribute(klass, "__qualname__")
    return qualname if type(qualname) is str else "?"


def name_of(klass: type) -> str:
    name = type_attribute(klass, "__name__")
    return name if type(name) is str else "?"


def mro_of(klass: type) -> tuple[type, ...]:
    mro = type_attribute(klass, "__mro__")
    return mro if type(mro) is tuple else (klass,)


def bases_of(klass: type) -> tuple[type, ...]:
    bases = type_attribute(klass, "__bases__")
    return bases if type(bases) is tuple else ()


def class_dict(klass: type) -> Mapping[str, Any]:
    """A class's own namespace (a read-only view), without its metaclass's code."""
    try:
        namespace: Mapping[str, Any] = _TYPE_DICT.__get__(klass, type)
    except Exception:
        return {}
    return namespace


def str_get(mapping: Mapping[Any, Any], key: str, default: Any = None) -> Any:
    """``mapping[key]`` for a dict (or a class's namespace) that user code may have filled,
    comparing exact ``str`` keys only: a planted key whose hash collides is never asked
    ``__eq__``. Linear, so for the small namespaces of classes and objects."""
    try:
        items = dict.items(mapping) if type(mapping) is dict else mapping.items()
        for k, v in items:
            if type(k) is str and k == key:
                return v
    except Exception:
        return default
    return default


def exact_get(mapping: dict[Any, Any], key: str | int, default: Any = None) -> Any:
    """``mapping[key]`` for a user's dict and a literal ``str`` or ``int`` key, comparing
    only keys of exactly that type (no user ``__eq__``)."""
    kind = type(key)
    for k, v in dict.items(mapping):
        if type(k) is kind and k == key:
            return v
    return default


def defines(klass: type, name: str) -> bool:
    marker = object()
    return str_get(class_dict(klass), name, marker) is not marker


def owner_of(value: Any, name: str) -> type | None:
    """The class in ``type(value)``'s MRO whose own namespace defines ``name``."""
    for klass in mro_of(type(value)):
        if defines(klass, name):
            return klass
    return None


def module_dict(module: Any) -> dict[str, Any] | None:
    """A module's namespace through the module type's descriptor (a module subclass's
    ``__dict__`` property is never called)."""
    if not issubclass(type(module), types.ModuleType):
        return None
    try:
        namespace = _MODULE_DICT.__get__(module, types.ModuleType)
    except Exception:
        return None
    return namespace if type(namespace) is dict else None


def instance_dict(value: Any) -> dict[str, Any] | None:
    """An object's own attributes, when the standard ``__dict__`` slot holds them."""
    owner = owner_of(value, "__dict__")
    if owner is None:
        return None
    descriptor = str_get(class_dict(owner), "__dict__")
    if type(descriptor) is not types.GetSetDescriptorType:
        return None  # a property or other descriptor a class wrote itself
    try:
        attributes = descriptor.__get__(value)
    except Exception:
        return None
    return attributes if type(attributes) is dict else None


_genuine: dict[int, type] = {}
"""Library classes found genuine, by id (kept alive here, so an id is never reused)."""


def genuine(klass: type, libraries: frozenset[str]) -> bool:
    """Whether ``klass`` belongs to one of ``libraries`` (top-level module names) and is
    the very object that module holds under its qualified name: the library's own class,
    not a user class claiming the library's ``__module__``."""
    if _genuine.get(id(klass)) is klass:
        return module_of(klass).split(".")[0] in libraries
    if module_of(klass).split(".")[0] not in libraries:
        return False
    module = str_get(sys.modules, module_of(klass))
    found: Any = module
    namespace: Mapping[str, Any] | None = module_dict(module)
    for part in qualname_of(klass).split("."):
        if namespace is None:
            return False
        found = str_get(namespace, part)
        namespace = class_dict(found) if issubclass(type(found), type) else None
    if found is not klass:
        return False
    _genuine[id(klass)] = klass
    return True


# --- functions ------------------------------------------------------------------------------


def _function_field(func: types.FunctionType, name: str) -> Any:
    return _FUNCTION[name].__get__(func, types.FunctionType)


def plain_function(value: Any) -> types.FunctionType | None:
    """The Python function ``value`` is, or wraps as a bound method; else None."""
    if type(value) is types.MethodType:
        value = _METHOD_FUNC.__get__(value, types.MethodType)
    return value if type(value) is types.FunctionType else None


def function_name(value: Any) -> str:
    func = plain_function(value)
    if func is not None:
        name = _function_field(func, "__qualname__")
        return name if type(name) is str else "?"
    if type(value) is types.BuiltinFunctionType:
        name = types.BuiltinFunctionType.__dict__["__qualname__"].__get__(value)
        return name if type(name) is str else "?"
    return "?"


def function_module(value: Any) -> str:
    func = plain_function(value)
    module = _function_field(func, "__module__") if func is not None else None
    return module if type(module) is str else ""


def function_doc(value: Any) -> str:
    func = plain_function(value)
    if func is not None:
        doc = _function_field(func, "__doc__")
    elif type(value) is types.BuiltinFunctionType:
        doc = types.BuiltinFunctionType.__dict__["__doc__"].__get__(value)
    else:
        doc = None
    return inspect.cleandoc(doc) if type(doc) is str else ""


def signature(value: Any, render: Callable[[Any], str]) -> str:
    """``(a, b=2, *args, key=None, **kw)`` from the function's code object and defaults,
    each default shown by ``render``; annotations are left out (reading them may evaluate
    user code). A builtin's text signature; "" when unknown."""
    if type(value) is types.BuiltinFunctionType:
        text = types.BuiltinFunctionType.__dict__["__text_signature__"].__get__(value)
        if type(text) is not str:
            return ""
        return text.replace("($module, ", "(").replace("($module)", "()").replace("$", "")
    func = plain_function(value)
    if func is None:
        return ""
    code = _function_field(func, "__code__")
    defaults = _function_field(func, "__defaults__") or ()
    kwdefaults = _function_field(func, "__kwdefaults__") or {}
    if type(defaults) is not tuple or type(kwdefaults) is not dict:
        return ""
    names = code.co_varnames
    positional, keyword_only = code.co_argcount, code.co_kwonlyargcount
    first_default = positional - len(defaults)
    params = []
    for i in range(positional):
        shown = names[i]
        if i >= first_default:
            shown += "=" + render(defaults[i - first_default])
        params.append(shown)
        if i + 1 == code.co_posonlyargcount:
            params.append("/")
    index = positional + keyword_only
    if code.co_flags & inspect.CO_VARARGS:
        params.append("*" + names[index])
        index += 1
    elif keyword_only:
        params.append("*")
    marker = object()
    for name in names[positional : positional + keyword_only]:
        default = exact_get(kwdefaults, name, marker)
        params.append(name if default is marker else f"{name}={render(default)}")
    if code.co_flags & inspect.CO_VARKEYWORDS:
        params.append("**" + names[index])
    if type(value) is types.MethodType and params and params[0] not in ("/", "*"):
        params.pop(0)  # bound: its first parameter is already given
    return "(" + ", ".join(params) + ")"


def function_source(value: Any, max_lines: int) -> str:
    """The function's source lines, from IPython's cell cache or the file on disk; no
    module loader (whose ``get_source`` may be user code) is asked."""
    func = plain_function(value)
    if func is None:
        return ""
    code = _function_field(func, "__code__")
    filename, first = code.co_filename, code.co_firstlineno
    entry = str_get(linecache.cache, filename)
    if type(entry) is tuple and len(entry) == 4 and type(entry[2]) is list:
        lines = entry[2]
    elif filename.startswith(os.sep) and secret_place(filename) is None:
        # A code object names any file it likes: only a regular file is read (never a FIFO
        # or a device), bounded, and never one where secrets live.
        try:
            raw, _cut = read_regular(filename, _SOURCE_BYTES)
        except OSError:
            return ""
        lines = raw.decode("utf-8", errors="replace").splitlines(keepends=True)
    else:
        return ""
    try:
        block = inspect.getblock(lines[first - 1 :])
    except Exception:
        return ""
    more = f"\n… {len(block) - max_lines} more lines" if len(block) > max_lines else ""
    return "".join(block[:max_lines]).rstrip("\n") + more


def shallow_size(value: Any, base: type | None, libraries: frozenset[str]) -> int | None:
    """The object's own memory: its builtin base's ``__sizeof__`` (C code), or a genuine
    library class's own; never a user class's, nor a library method a subclass may
    reach into."""
    owner = owner_of(value, "__sizeof__")
    try:
        if owner is object or owner is base or genuine(type(value), libraries):
            return sys.getsizeof(value)
        return (base or object).__sizeof__(value)  # type: ignore[call-arg]  # unbound: given value
    except Exception:
        return None
