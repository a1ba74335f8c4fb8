"""Inspection cannot be turned into action: objects whose every hook acts (write a marker
file, start a process, connect, change the environment, run foreign code) are listed and
inspected, and none of it happens; the result says what was refused."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import threading
import types
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from jupyter_agent.errors import ToolError
from jupyter_agent.namespace.guard import read_only
from jupyter_agent.namespace.kernel_namespace import KernelNamespace
from jupyter_agent.tools import ToolContext
from jupyter_agent.tools.variables import inspect_variable, list_variables

pd = pytest.importorskip("pandas")
np = pytest.importorskip("numpy")


CALLS: list[str] = []
"""Every hostile hook that ran once armed: inspection must run none."""
ARMED = {"on": False}
"""Off while the objects are built (numpy and dict insertion call some hooks then)."""


def acts(kind: str, marker: Path) -> None:
    """What a hostile hook does when it is called."""
    if not ARMED["on"]:
        return
    CALLS.append(kind)
    if kind == "write":
        marker.write_text("ran")
    elif kind == "os-open":
        os.close(os.open(marker, os.O_WRONLY | os.O_CREAT))
    elif kind == "process":
        subprocess.run(["touch", str(marker)], check=False)
    elif kind == "system":
        os.system(f"touch {marker}")
    elif kind == "connect":
        socket.create_connection(("127.0.0.1", 9), timeout=0.2)
        marker.write_text("connected")
    elif kind == "exec":
        exec(f"open({str(marker)!r}, 'w').write('ran')")
    elif kind == "env":
        os.environ["JUPYTER_AGENT_GUARD_TEST"] = "changed"
    elif kind == "remove":
        os.remove(marker.parent / "keep.txt")
    elif kind == "rename":
        os.rename(marker.parent / "keep.txt", marker)
    elif kind == "thread":
        threading.Thread(target=marker.write_text, args=("ran",)).start()


KINDS = [
    "write", "os-open", "process", "system", "connect", "exec", "env", "remove", "rename", "thread"
]  # fmt: skip


def hostile_objects(kind: str, marker: Path) -> dict[str, object]:
    """One object per hook that inspection might touch, each acting when called."""
    h = _acting_hooks(kind, marker)
    t = _acting_types(kind, marker, h["Repr"])
    Repr, Label, Text, Proxy = h["Repr"], h["Label"], h["Text"], t["Proxy"]
    acting_default = Repr()

    def wrapped(x=acting_default):  # a default whose repr acts
        return x

    wrapped.__wrapped__ = Proxy()  # type: ignore[attr-defined]  # a hook inspect follows
    wrapped.__signature__ = Proxy()  # type: ignore[attr-defined]  # a hook inspect reads
    bound = types.MethodType(Proxy(), Repr())

    return {
        "by_repr": Repr(),
        "by_array_finalize": np.arange(4).view(t["Array"]),
        "by_module_dict": t["Module"]("planted"),
        "by_wrapped": wrapped,
        "by_bound_callable": bound,
        "by_look_alike": t["LookAlike"](),
        "by_sizeof": t["Sized"](),
        "by_dict_descriptor": t["SlotDict"](),
        "by_metaclass_repr": t["WithMetaRepr"],
        "by_str_subclass": Text("secret-looking"),
        "by_str_key": {Text("k"): Repr()},
        "by_object_cells": pd.DataFrame({"o": [Repr(), Label()]}, index=[Label(), Repr()]),
        "by_object_series": pd.Series([Repr()], name=Label()),
        "by_object_array": np.array([Repr(), Label()], dtype=object),
        "by_raising": h["Raises"](),
        "by_container": [Repr(), (Label(), {Repr(): Label()})],
        "by_class": h["ClassProperty"](),
        "by_getattribute": h["GetAttribute"](),
        "by_metaclass": h["WithMeta"](),
        "by_label": pd.DataFrame({Label(): [1, 2]}),
        "by_key": {Label(): 1},
        "by_subclass": t["Frame"]({"a": [1, 2]}),
    }


def _acting_hooks(kind: str, marker: Path) -> dict[str, type]:
    """Classes whose instances act from the hooks every object has (repr, str, eq,
    attribute access, ``__class__``)."""

    class Repr:
        def __repr__(self):
            acts(kind, marker)
            return "Repr()"

    class ClassProperty:
        @property  # type: ignore[misc]  # a read-only __class__ that acts
        def __class__(self):  # isinstance() asks for it
            acts(kind, marker)
            return int

    class GetAttribute:
        def __getattribute__(self, name):
            acts(kind, marker)
            return object.__getattribute__(self, name)

    class Meta(type):
        def __getattribute__(cls, name):
            acts(kind, marker)
            return super().__getattribute__(name)

    class WithMeta(metaclass=Meta):
        pass

    class Label:
        def __str__(self):
            acts(kind, marker)
            return "label"

        def __hash__(self):
            return 1

        def __eq__(self, other):
            acts(kind, marker)
            return self is other

    class Text(str):
        def __str__(self):
            acts(kind, marker)
            return "text"

        __repr__ = __str__

    class Error(Exception):
        def __str__(self):
            acts(kind, marker)
            return "error"

    class Raises:
        def __init__(self):
            self.attr = Repr()

        @property  # type: ignore[misc]  # a __class__ that raises
        def __class__(self):
            raise Error(Repr())

    return {
        "Repr": Repr,
        "ClassProperty": ClassProperty,
        "GetAttribute": GetAttribute,
        "Meta": Meta,
        "WithMeta": WithMeta,
        "Label": Label,
        "Text": Text,
        "Error": Error,
        "Raises": Raises,
    }


def _acting_types(kind: str, marker: Path, Repr: type) -> dict[str, type]:
    """Classes that act from what a library type, a module, a callable or a class adds
    (numpy and pandas hooks, ``__sizeof__``, descriptors, metaclasses)."""

    class Frame(pd.DataFrame):  # type: ignore[name-defined,misc]  # a hostile subclass
        @property
        def _constructor_sliced(self):
            acts(kind, marker)
            return pd.Series

    class Array(np.ndarray):  # type: ignore[name-defined,misc]  # a hostile subclass
        def __array_finalize__(self, obj):
            acts(kind, marker)

    class Module(types.ModuleType):
        @property
        def __dict__(self):  # type: ignore[override]  # a __dict__ that acts
            acts(kind, marker)
            return {}

        def __getattr__(self, name):
            acts(kind, marker)

    class Proxy:
        def __getattr__(self, name):
            acts(kind, marker)

        def __call__(self, *args):
            acts(kind, marker)

    class LookAlike(Repr):  # type: ignore[misc]  # claims to be pandas' own class
        __module__ = "pandas"
        __qualname__ = "DataFrame"

    class Sized:
        def __sizeof__(self):
            acts(kind, marker)
            return 1

        def __len__(self):
            acts(kind, marker)
            return 1

    class Descriptor:
        def __get__(self, obj, owner=None):
            acts(kind, marker)

    class SlotDict:
        __dict__ = Descriptor()  # a class's own __dict__ descriptor

    class MetaRepr(type):
        def __repr__(cls):
            acts(kind, marker)
            return "MetaRepr"

        @property
        def __doc__(cls):  # type: ignore[override]  # a __doc__ that acts
            acts(kind, marker)

    class WithMetaRepr(metaclass=MetaRepr):
        def method(self):
            pass

    return {
        "Frame": Frame,
        "Array": Array,
        "Module": Module,
        "Proxy": Proxy,
        "LookAlike": LookAlike,
        "Sized": Sized,
        "Descriptor": Descriptor,
        "SlotDict": SlotDict,
        "MetaRepr": MetaRepr,
        "WithMetaRepr": WithMetaRepr,
    }


def call(tool, ns, **args):
    ctx = ToolContext()
    ctx.resources.insert(KernelNamespace(ns))
    return asyncio.run(tool.call(ctx, args))


class PlantedKey:
    """A key planted in the namespace itself, whose hash collides with a variable's name."""

    def __init__(self, kind: str, marker: Path, name: str) -> None:
        self.args = (kind, marker)
        self.hash = hash(name)

    def __hash__(self):
        return self.hash

    def __eq__(self, other):
        acts(*self.args)
        return False


@pytest.mark.parametrize("kind", KINDS)
def test_nothing_an_inspected_object_tries_happens(kind, tmp_path, monkeypatch):
    marker = tmp_path / "marker.txt"
    (tmp_path / "keep.txt").write_text("the user's file")
    monkeypatch.delenv("JUPYTER_AGENT_GUARD_TEST", raising=False)
    objects = hostile_objects(kind, marker)
    names = list(objects)
    objects[PlantedKey(kind, marker, "by_repr")] = 1  # type: ignore[index]  # a non-str key, on purpose
    CALLS.clear()
    monkeypatch.setitem(ARMED, "on", True)
    outputs = [call(list_variables, objects).text]
    outputs.append(call(list_variables, objects, include_modules=True, include_private=True).text)
    outputs += [call(inspect_variable, objects, name=name).text for name in names]
    outputs.append(call(inspect_variable, objects, name="by_container[1]").text)
    with pytest.raises(ToolError, match="no variable named 'by_nothing'"):
        call(inspect_variable, objects, name="by_nothing")
    assert CALLS == []  # not one hook of theirs ran
    assert not marker.exists()
    assert (tmp_path / "keep.txt").read_text() == "the user's file"
    assert "JUPYTER_AGENT_GUARD_TEST" not in os.environ
    said = "\n".join(outputs)
    if "It was refused" in said:  # whatever ran was stopped, and the user is told
        assert "inspecting never lets a variable write files" in said


def test_the_guard_acts_only_where_it_is_on(tmp_path):
    marker = tmp_path / "m.txt"
    with read_only() as blocked:
        with pytest.raises(PermissionError):
            marker.write_text("x")
        (tmp_path / "readable.txt").exists()  # reading stays allowed
    assert blocked == [f"writing {str(marker)!r}"]
    marker.write_text("x")  # outside the block, writes work again
    assert marker.read_text() == "x"


def test_library_code_still_runs_under_the_guard():
    frame = pd.DataFrame({"a": [1.5, None], "b": ["x", "y"]})
    with read_only() as blocked:
        text = frame.describe(include="all").to_string()
        import json  # noqa: F401  # an installed module may still be imported
    assert "count" in text
    assert blocked == []


def _start_thread(write):
    threading.Thread(target=write).start()


def _start_raw_thread(write):
    import _thread

    _thread.start_new_thread(write, ())


def _submit_to_a_new_pool(write):
    ThreadPoolExecutor(max_workers=1).submit(write)


def _schedule_on_the_loop(write):
    asyncio.get_running_loop().call_soon(write)  # runs after the block, in its context


@pytest.mark.parametrize(
    "route", [_start_thread, _start_raw_thread, _submit_to_a_new_pool, _schedule_on_the_loop]
)
def test_code_that_reads_cannot_hand_its_action_to_other_code(route, tmp_path):
    """A lazy property that starts a worker, submits to a pool or schedules a callback:
    the action still happens under the guard, or not at all."""
    marker = tmp_path / "m.txt"
    errors: list[BaseException] = []

    def write():
        try:
            marker.write_text("ran")
        except PermissionError as error:
            errors.append(error)

    async def inspect():
        with read_only() as blocked:
            try:
                route(write)
            except PermissionError as error:
                errors.append(error)
        await asyncio.sleep(0.05)  # a scheduled callback runs now, after the block
        return blocked

    blocked = asyncio.run(inspect())
    assert not marker.exists()
    assert errors and blocked
    assert all("refused while the agent only reads" in str(e) for e in errors)
    thread = threading.Thread(target=write)  # outside the block, threads start again
    thread.start()
    thread.join()
    assert marker.read_text() == "ran"
