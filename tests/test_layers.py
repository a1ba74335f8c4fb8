"""Imports go one way: down the layers of :data:`LAYERS`, one package each.

The graph is read from the source with :mod:`ast`, so these tests need no import of the
package. Imports inside a function run late and break no import-time cycle: they are
counted apart (``late``) and only the module-level ones must form no cycle. Imports under
``if TYPE_CHECKING:`` never run and form no cycle either, but they still tie one layer to
another: the layer rules count every import, whenever it runs.

``python tests/test_layers.py`` prints the strongly connected components of each graph and the layer violations.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

PACKAGE = "jupyter_agent"
ROOT = Path(__file__).resolve().parents[1] / PACKAGE


@dataclass
class ImportGraph:
    modules: dict[str, Path]
    packages: set[str]
    eager: dict[str, set[str]] = field(default_factory=dict)
    """Imports that run when the module is imported."""
    late: dict[str, set[str]] = field(default_factory=dict)
    """Imports inside functions: they run when the function is called."""
    typing: dict[str, set[str]] = field(default_factory=dict)
    """Imports under ``if TYPE_CHECKING:``: they never run, but they still couple layers."""


def _module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


Kind = Literal["eager", "late", "typing"]


def _imports(tree: ast.Module) -> Iterator[tuple[ast.Import | ast.ImportFrom, Kind]]:
    """Every import statement with when it runs."""

    def walk(node: ast.AST, kind: Kind) -> Iterator[tuple[ast.Import | ast.ImportFrom, Kind]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child, kind
            elif isinstance(child, ast.If) and _is_type_checking(child.test):
                for stmt in child.body:
                    yield from walk(ast.Module(body=[stmt], type_ignores=[]), "typing")
                for stmt in child.orelse:
                    yield from walk(ast.Module(body=[stmt], type_ignores=[]), kind)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                yield from walk(child, "late" if kind == "eager" else kind)
            else:
                yield from walk(child, kind)

    yield from walk(tree, "eager")


def _targets(
    node: ast.Import | ast.ImportFrom, module: str, is_package: bool, known: set[str]
) -> Iterator[str]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name.split(".")[0] == PACKAGE:
                yield alias.name
        return
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        source = ".".join([*base, *([node.module] if node.module else [])])
    else:
        source = node.module or ""
    if source.split(".")[0] != PACKAGE:
        return
    for alias in node.names:
        sub = f"{source}.{alias.name}"
        yield sub if sub in known else source


def build_graph(root: Path = ROOT) -> ImportGraph:
    files = sorted(p for p in root.rglob("*.py") if "labextension" not in p.parts)
    modules = {_module_name(p, root): p for p in files}
    graph = ImportGraph(
        modules=modules,
        packages={_module_name(p, root) for p in files if p.name == "__init__.py"},
    )
    known = set(modules)
    for name, path in modules.items():
        found: dict[Kind, set[str]] = {"eager": set(), "late": set(), "typing": set()}
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node, kind in _imports(tree):
            for target in _targets(node, name, name in graph.packages, known):
                while target not in known and "." in target:
                    target = target.rsplit(".", 1)[0]
                if target != name:
                    found[kind].add(target)
        graph.eager[name] = found["eager"]
        graph.late[name] = found["late"]
        graph.typing[name] = found["typing"]
    return graph


def strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative; components of more than one module, sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in edges:
                    continue
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def _union(*graphs: dict[str, set[str]]) -> dict[str, set[str]]:
    names = {name for g in graphs for name in g}
    return {name: set().union(*(g.get(name, set()) for g in graphs)) for name in names}


def _without_reexports(graph: ImportGraph) -> dict[str, set[str]]:
    """The eager graph less each module importing its own package's ``__init__``.

    ``from . import name`` in a submodule reads a re-export of a package that is in the
    middle of importing it anyway: that loop is how packages are built, not a layering
    fault. A module outside the package importing it is an edge like any other.
    """
    return {
        name: {t for t in targets if not (t in graph.packages and name.startswith(t + "."))}
        for name, targets in graph.eager.items()
    }


# Module-level cycles that remain; each is known debt, to be removed, never added to.
KNOWN_CYCLES: list[list[str]] = []

# The layers, bottom first: a module imports only from its own layer and the ones below it,
# whenever the import runs (at import time, in a function, or for type checking alone).
LAYERS = [
    "core",  # the root modules: errors, events, messages, plans, states, permissions, approvals, the admin policy
    "workspace",  # the path gate, the sandbox of paths, globs, autorun files, git's redirects
    "secrets",  # masking by shape and by value, the user's API keys
    "os_sandbox",  # bubblewrap, Seatbelt, mounts, seccomp
    "commands",  # what a shell command line does, and the hazards no rule overrides
    "notebook",  # the notebook bridge, .ipynb files, the notebook as the model reads it
    "namespace",  # the kernel's live values, read without running their code
    "models",  # model clients
    "sessions",  # sessions on disk, their index, the history as the model sees it
    "tools",  # the agent's tools
    "mcp",  # MCP servers and their tools
    "config",  # settings, rules, instructions, trust
    "agent",  # runs, loops, the dispatcher
    "jupyter.bridge",  # the live notebook bridge's kernel side
    "jupyter.panel",  # the agent panel
    "jupyter.kernel",  # the agent's own kernel
    "jupyter",  # the magics, the extension's entry points
    "testing",  # loopback model servers for tests and tutorials
    "facade",  # jupyter_agent/__init__.py: the public names
]

# What the package root holds: the types every layer exchanges, and nothing else.
CORE = {
    "admin_policy",  # what a hub fixes: every layer's gate asks it
    "approvals",
    "errors",
    "events",
    "input_limit",
    "messages",
    "permissions",
    "plans",
    "states",
    "_moved",
    "_tasks",
    "_wording",
}


@functools.cache
def graph() -> ImportGraph:
    """The package's import graph, read once a process, when a test first asks (every
    test process collects this module; only one runs it)."""
    return build_graph()


def _layer(module: str) -> str:
    parts = module.split(".")[1:]
    if not parts:
        return "facade"
    if (
        parts[0] == "jupyter"
        and len(parts) > 1
        and f"{PACKAGE}.jupyter.{parts[1]}" in graph().packages
    ):
        return f"jupyter.{parts[1]}"
    if f"{PACKAGE}.{parts[0]}" in graph().packages:
        return parts[0]
    return "core"


def _edges(graph: ImportGraph) -> Iterable[tuple[str, str]]:
    for name, targets in _union(graph.eager, graph.late, graph.typing).items():
        for target in sorted(targets):
            yield name, target


def layer_violations() -> list[str]:
    """Every import from a module to a layer above its own."""
    rank = {name: i for i, name in enumerate(LAYERS)}
    return [
        f"{a} ({_layer(a)}) imports {b} ({_layer(b)})"
        for a, b in _edges(graph())
        if rank[_layer(b)] > rank[_layer(a)]
    ]


def test_no_module_level_import_cycle_but_the_known_ones() -> None:
    assert strongly_connected(_without_reexports(graph())) == KNOWN_CYCLES


def test_type_only_cycles_stay_inside_one_package() -> None:
    # Agent and Run name each other in annotations: fine within agent/, never across layers.
    for component in strongly_connected(_union(_without_reexports(graph()), graph().typing)):
        assert len({_layer(m) for m in component}) == 1, component


def test_every_package_is_a_named_layer() -> None:
    packages = {_layer(p) for p in graph().packages if p != PACKAGE}
    assert packages == set(LAYERS) - {"core", "facade"}


def test_the_root_holds_the_core_types_alone() -> None:
    root = {
        m.split(".")[1] for m in graph().modules if m.count(".") == 1 and m not in graph().packages
    }
    assert root == CORE


def test_imports_go_down_the_layers_only() -> None:
    assert layer_violations() == []


def test_the_graph_sees_the_package() -> None:
    assert f"{PACKAGE}.agent._run" in graph().modules
    assert f"{PACKAGE}.tools._tool" in graph().eager[f"{PACKAGE}.tools.control"]
    assert _layer(f"{PACKAGE}.jupyter.panel.widget") == "jupyter.panel"
    assert _layer(f"{PACKAGE}.jupyter.magic") == "jupyter"
    assert _layer(f"{PACKAGE}.errors") == "core"


def main() -> None:
    print("module-level cycles (package re-exports left out):")
    for component in strongly_connected(_without_reexports(graph())):
        print("  ", component)
    print("module-level cycles (all):")
    for component in strongly_connected(graph().eager):
        print("  ", component)
    print("cycles counting function-level imports:")
    for component in strongly_connected(_union(graph().eager, graph().late)):
        print("  ", component)
    print("cycles counting TYPE_CHECKING imports too:")
    for component in strongly_connected(_union(graph().eager, graph().typing)):
        print("  ", component)
    print("layer violations (all imports, TYPE_CHECKING ones included):")
    for line in layer_violations():
        print("  ", line)


if __name__ == "__main__":
    main()
