"""Descriptions of strings, builtin containers, code objects and any other object.

The non-table half of inspecting one variable in :mod:`jupyter_agent.namespace.kernel_namespace`.
Invariants kept here:

- Containers are read through the builtin type's own methods (``dict.items``,
  ``list.__iter__``), shallowly and up to :data:`ITEMS_SHOWN` items.
- Modules, classes and functions are described from their dicts and code objects
  (:mod:`jupyter_agent.namespace.static`): no import, no ``inspect.signature``, no property.
- Any other object shows its type, size, instance attributes and its class's method names;
  its repr only when the class is a genuine standard or data library type.
- Values under names or keys that say secret are masked.
"""

from __future__ import annotations

import inspect
import types
from typing import Any

from ..secrets.shapes import is_secret_name, looks_secret, mask_secrets
from ._values import (
    ITEMS_SHOWN,
    guarded_repr,
    header,
    is_trusted_class,
    label_text,
    masked_text,
    safe_repr,
    safe_text,
    signature_text,
    type_name,
)
from .static import (
    bases_of,
    class_dict,
    function_doc,
    function_module,
    function_name,
    function_source,
    instance_dict,
    module_dict,
    module_of,
    mro_of,
    owner_of,
    qualname_of,
    str_get,
    type_attribute,
)

STRING_HEAD = 500


def string_text(name: str, value: str) -> str:
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


_NOUNS: dict[type, str] = {dict: "keys", list: "items", tuple: "items"}
"""What a container's entries are called, by its builtin type."""


def container_text(name: str, value: Any, base: type[Any]) -> str:
    n = base.__len__(value)
    noun = _NOUNS.get(base, "elements")
    out = [header(name, value, f"{n:,} {noun}") + " (shallow size)"]
    if base is dict:
        out.append(f"First {min(n, ITEMS_SHOWN)} items:" if n else "(empty)")
        for i, (key, val) in enumerate(dict.items(value)):
            if i >= ITEMS_SHOWN:
                out.append(f"  … {n - ITEMS_SHOWN:,} more")
                break
            if type(key) is str and is_secret_name(key):
                entry = masked_text(val) + "  (masked: the key says secret)"
            else:
                entry = f"{type_name(val)} {safe_repr(val, 120)}"
            out.append(f"  {safe_text(key, 60, 0)}: {entry}")
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


def code_text(name: str, value: Any, kind: str) -> str:
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
    parameters = signature_text(value)
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


def generic_text(name: str, value: Any) -> str:
    """Any other object: its type, size, own attributes (read from its ``__dict__``
    without its code) and the methods its class defines; its repr only when the class is
    a genuine standard or data library type."""
    out = [header(name, value)]
    trusted = is_trusted_class(type(value))  # a subclass's repr may be its own code
    if trusted and owner_of(value, "__repr__") is not object:
        text, ok = guarded_repr(value)
        out.append(("repr: " if ok else "") + text)
    attrs = instance_dict(value)
    if attrs:
        out.append(f"attributes ({dict.__len__(attrs)}):")
        for i, (key, val) in enumerate(dict.items(attrs)):
            if i >= ITEMS_SHOWN:
                out.append(f"  … {dict.__len__(attrs) - ITEMS_SHOWN} more")
                break
            label = label_text(key)
            if type(key) is str and is_secret_name(key):
                out.append(f"  {label}: {masked_text(val)}  (masked: the name says secret)")
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
