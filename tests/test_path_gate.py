"""Every file the package opens goes through the path gate (``jupyter_agent/workspace/paths.py``,
with ``path_files.py`` and ``path_database.py`` beside it).

The test reads the package's source and lists every call that opens, lists, creates or
removes a file or folder by path: ``open``, ``os.open``, ``io.open``, ``sqlite3.connect``,
``Path.read_*``/``write_*``/``open``/``mkdir``/``unlink``/``iterdir``/``glob``…, ``os.listdir``,
``os.scandir``, ``os.walk``, ``shutil.rmtree``… Outside the gate, each must be on
:data:`ALLOWED`, with the reason it may bypass the gate. A new one fails this test until it
goes through the gate or is added here with a reason a reviewer accepts; an entry that no
longer matches anything fails too, so the list never holds more than it must.

``python tests/test_path_gate.py`` prints every call found.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "jupyter_agent"
GATE = ("workspace/paths.py", "workspace/path_files.py", "workspace/path_database.py")
"""The gate's modules: where files are opened."""

BUILTINS = frozenset({"open"})
MODULE_CALLS = frozenset(
    {
        ("os", "open"),
        ("io", "open"),
        ("sqlite3", "connect"),
        ("os", "listdir"),
        ("os", "scandir"),
        ("os", "walk"),
        ("os", "fwalk"),
        ("os", "mkdir"),
        ("os", "makedirs"),
        ("os", "unlink"),
        ("os", "remove"),
        ("os", "rmdir"),
        ("os", "rename"),
        ("os", "replace"),
        ("os", "symlink"),
        ("os", "link"),
        ("shutil", "rmtree"),
        ("shutil", "copy"),
        ("shutil", "copyfile"),
        ("shutil", "copytree"),
        ("shutil", "move"),
    }
)
METHODS = frozenset(
    {
        "read_text",
        "read_bytes",
        "write_text",
        "write_bytes",
        "open",
        "mkdir",
        "unlink",
        "rmdir",
        "touch",
        "iterdir",
        "glob",
        "rglob",
        "symlink_to",
        "rename",
    }
)

# (module, function, call) -> (how many, why it may open without the gate)
ALLOWED: dict[tuple[str, str, str], tuple[int, str]] = {
    ("jupyter_agent/admin_policy.py", "_read", "open"): (
        1,
        "the administrator's policy: a system file at a fixed place (or one the user names, "
        "which only narrows), read by the core layer below the gate, bounded in size, before "
        "any workspace is known",
    ),
    ("jupyter_agent/agent/_prompts.py", "load_prompt", "read_text"): (
        1,
        "the package's own prompt files, found beside its code",
    ),
    ("jupyter_agent/jupyter/bridge/protocol.py", "<module>", "read_text"): (
        1,
        "the package's own protocol file (importlib.resources)",
    ),
    ("jupyter_agent/jupyter/panel/protocol.py", "<module>", "write_text"): (
        1,
        "a developer's command (python -m) that regenerates the package's own protocol file",
    ),
    ("jupyter_agent/jupyter/bridge/messages.py", "<module>", "write_text"): (
        1,
        "a developer's command (python -m) that regenerates the package's own schema file",
    ),
    ("jupyter_agent/notebook/outputs.py", "downscale", "open"): (
        1,
        "Image.open of bytes in memory (io.BytesIO): no file",
    ),
    ("jupyter_agent/tools/_process_tree.py", "_proc_stats", "listdir"): (
        1,
        "procfs (/proc): the kernel's view of this user's processes",
    ),
    ("jupyter_agent/tools/_process_tree.py", "_proc_stats", "open"): (1, "procfs (/proc/PID/stat)"),
    ("jupyter_agent/tools/_process_tree.py", "any_alive", "open"): (1, "procfs (/proc/PID/stat)"),
    ("jupyter_agent/os_sandbox/owners.py", "start_time", "open"): (1, "procfs (/proc/PID/stat)"),
    ("jupyter_agent/os_sandbox/mounts.py", "_entries", "scandir"): (
        1,
        "names and kinds only (no file opened), of a folder the OS sandbox pins read-only",
    ),
    ("jupyter_agent/os_sandbox/mount_points.py", "_entries", "listdir"): (
        1,
        "names in the sandbox's private ledger folder",
    ),
    ("jupyter_agent/os_sandbox/mount_points.py", "_holds", "open"): (
        1,
        "a mount-point file the sandbox made, compared by content before it is removed "
        "(O_NOFOLLOW, non-blocking, regular files only)",
    ),
    ("jupyter_agent/os_sandbox/mounts.py", "ProtectionPlan.make_filled", "open"): (
        1,
        "a file the sandbox makes new (O_EXCL, O_NOFOLLOW) in a folder it checked link-free, "
        "to mount read-only over a missing protected path",
    ),
    ("jupyter_agent/os_sandbox/mounts.py", "_hard_linked", "walk"): (
        1,
        "names and inode numbers only (no file opened), of protected folders",
    ),
    ("jupyter_agent/os_sandbox/mounts.py", "_other_names", "scandir"): (
        1,
        "names and inode numbers only (no file opened, links never followed)",
    ),
    ("jupyter_agent/os_sandbox/launch.py", "_hold", "open"): (
        1,
        "an O_PATH descriptor of a folder to mount (nothing is read; a link is refused)",
    ),
    ("jupyter_agent/workspace/git_redirects.py", "_subfolders", "scandir"): (
        1,
        "names and kinds only (no file opened, links never followed), looking for git folders",
    ),
    ("jupyter_agent/workspace/git_redirects.py", "_repositories", "scandir"): (
        1,
        "names and kinds only (no file opened), looking for .git entries",
    ),
    ("jupyter_agent/workspace/access.py", "other_homes", "scandir"): (
        1,
        "names only (no file opened), the folders of a folder of homes, to warn of them",
    ),
    ("jupyter_agent/workspace/reach.py", "_entries", "scandir"): (
        1,
        "names only (no file opened), what a command's glob matches, to warn of what it reaches",
    ),
    ("jupyter_agent/os_sandbox/mount_points.py", "_MountPointLedger._locked", "mkdir"): (
        1,
        "the OS sandbox's own 0700 folder in the system temp folder, checked by lstat to be a "
        "private folder of this user before any use",
    ),
    ("jupyter_agent/os_sandbox/mount_points.py", "_MountPointLedger._locked", "open"): (
        1,
        "the sandbox's lock file in that private folder (O_NOFOLLOW)",
    ),
    ("jupyter_agent/os_sandbox/mount_points.py", "_MountPointLedger.reserve", "write_bytes"): (
        2,
        "that private folder",
    ),
    ("jupyter_agent/os_sandbox/mount_points.py", "_MountPointLedger.reserve", "touch"): (
        1,
        "that private folder",
    ),
    ("jupyter_agent/os_sandbox/mount_points.py", "_MountPointLedger.reserve", "unlink"): (
        1,
        "that private folder",
    ),
    ("jupyter_agent/os_sandbox/mount_points.py", "_settle", "unlink"): (
        3,
        "that private folder, and the empty mount-point file bwrap made (checked by lstat to "
        "be an empty regular file)",
    ),
    ("jupyter_agent/os_sandbox/mount_points.py", "_settle", "read_bytes"): (
        2,
        "that private folder",
    ),
    ("jupyter_agent/os_sandbox/private_tmp.py", "make_private_tmp", "mkdir"): (
        1,
        "the sandbox's private /tmp, in a folder mkdtemp made (0700) just before",
    ),
    ("jupyter_agent/os_sandbox/private_tmp.py", "_remove_orphaned_tmps", "listdir"): (
        1,
        "names in the system temp folder, for this user's orphaned private /tmp folders",
    ),
    ("jupyter_agent/os_sandbox/private_tmp.py", "remove_tree", "walk"): (
        1,
        "a private /tmp of the sandbox's, being removed (links never followed)",
    ),
    ("jupyter_agent/os_sandbox/private_tmp.py", "remove_tree", "rmtree"): (
        1,
        "a private /tmp of the sandbox's (rmtree removes links, never follows them)",
    ),
    ("jupyter_agent/workspace/autorun.py", "Autorun.prepare", "mkdir"): (
        1,
        "empty folders the OS sandbox then mounts read-only (names of its own protected list)",
    ),
    ("jupyter_agent/workspace/access.py", "WorkspaceAccess.missing_message", "listdir"): (
        1,
        "names only, of a folder inside the workspace, for close matches in a message",
    ),
    ("jupyter_agent/workspace/provenance.py", "WrittenFiles.changed_under", "walk"): (
        1,
        "names and modification times only (no file opened), in the workspace",
    ),
    ("jupyter_agent/sessions/index_rows.py", "in_memory", "connect"): (
        1,
        "an index in memory (':memory:'): no file",
    ),
    ("jupyter_agent/sessions/index_store.py", "fts5_missing", "connect"): (
        1,
        "':memory:': no file",
    ),
    ("jupyter_agent/sessions/index_store.py", "_as_seen", "connect"): (1, "':memory:': no file"),
    ("jupyter_agent/sessions/index_rows.py", "_our_schema", "connect"): (1, "':memory:': no file"),
    ("jupyter_agent/sessions/index_store.py", "_older_index_of_ours", "connect"): (
        1,
        "read-only and immutable, through the descriptor the gate opened (/proc/self/fd/N)",
    ),
}


def calls() -> Iterator[tuple[str, str, str, int]]:
    """(module, enclosing function, call, line) of every file-opening call in the package."""
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.relative_to(PACKAGE).as_posix() in GATE:
            continue
        module = path.relative_to(PACKAGE.parent).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        yield from _walk(tree, module)


def _walk(
    node: ast.AST, module: str, cls: str | None = None, fn: str | None = None
) -> Iterator[tuple[str, str, str, int]]:
    """Calls with their enclosing class (if any) and function; a function nested in a
    function counts as the outer one."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.ClassDef) and fn is None:
            yield from _walk(child, module, child.name, None)
            continue
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn is None:
            yield from _walk(child, module, cls, child.name)
            continue
        if isinstance(child, ast.Call):
            name = _opening(child.func)
            if name is not None:
                where = ".".join(p for p in (cls, fn) if p) or "<module>"
                yield module, where, name, child.lineno
        yield from _walk(child, module, cls, fn)


def _opening(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name) and func.id in BUILTINS:
        return func.id
    if isinstance(func, ast.Attribute):
        owner = func.value
        if isinstance(owner, ast.Name) and (owner.id, func.attr) in MODULE_CALLS:
            return func.attr
        if func.attr in METHODS and not (
            isinstance(owner, ast.Name) and owner.id in ("os", "self", "cls", "super")
        ):
            return func.attr
    return None


def _found() -> Counter[tuple[str, str, str]]:
    return Counter((module, where, name) for module, where, name, _line in calls())


def test_every_file_the_package_opens_goes_through_the_gate_or_says_why_not() -> None:
    found = _found()
    unexplained = {
        f"{module}:{line} {where}: {name}()"
        for module, where, name, line in calls()
        if (module, where, name) not in ALLOWED
    }
    assert not unexplained, (
        "These open, list, create or remove files without the path gate (jupyter_agent/"
        "paths.py). Open them through a paths.Root, or add them to ALLOWED with the reason "
        "they may not:\n" + "\n".join(sorted(unexplained))
    )
    miscounted = {
        key: (found[key], allowed)
        for key, (allowed, _why) in ALLOWED.items()
        if found[key] != allowed
    }
    assert not miscounted, (
        "ALLOWED no longer matches the code (found, allowed): a bypass was added beside an "
        f"allowed one, or an allowed one is gone. {miscounted}"
    )


def test_the_gate_module_holds_the_opening_calls() -> None:
    """The scan sees calls: the gate itself must show up when scanned, or the scan is blind."""
    names: Counter[str] = Counter()
    for module in GATE:
        tree = ast.parse((PACKAGE / module).read_text(encoding="utf-8"))
        names.update(name for _m, _w, name, _l in _walk(tree, module))
    assert names["open"] >= 3 and names["connect"] >= 1 and names["listdir"] >= 1


if __name__ == "__main__":
    for module, where, name, line in calls():
        mark = "" if (module, where, name) in ALLOWED else "   <- not allowed"
        print(f"{module}:{line} {where}: {name}(){mark}")
