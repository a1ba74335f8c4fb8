"""An approval is bound to what its card showed: nothing runs that the card did not show.

A card shows a cell's code, a command (and the scripts it runs), a file's diff, an MCP call's
arguments. Between the card and the moment the tool acts, something else may change them: a
sibling subagent (``delegate`` calls of one turn run side by side), a cell still running, the
user, any other program. The tool checks what it is about to act on at that moment; if it is
not what the card showed, the call asks again showing it as it is now, with a line saying
what changed (a bounded number of times), and what the user did not see never runs.

Run for real: a FileBridge on a real ``.ipynb`` whose executor runs the code, real scripts in
real bash, real files; only the models are scripted.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import nbformat
import pytest
from helpers import assert_valid, call, calls, there_before_the_agent, until
from inline_snapshot import snapshot
from kernels import kernel

from jupyter_agent import Agent, ScriptedModel, tool
from jupyter_agent.agent import RunHandle
from jupyter_agent.approvals import CellPreview, ChangedSinceShown, FilePreview, Grant
from jupyter_agent.config.rules import Rule, Rules
from jupyter_agent.errors import ToolError
from jupyter_agent.events import PermissionRequestEvent, ToolEndEvent
from jupyter_agent.notebook.bridge import RunResult, SourceChanged
from jupyter_agent.notebook.file import FileBridge
from jupyter_agent.permissions import Permission
from jupyter_agent.tools import ToolContext

pytestmark = pytest.mark.timeout(60)

HARMLESS = "shown = 'harmless'"


def evil(marker: Path) -> str:
    return f"open({str(marker)!r}, 'w').write('ran')"


class Python:
    """An executor that runs a cell's code for real (in a namespace of its own) and keeps
    every source it ran."""

    def __init__(self) -> None:
        self.ran: list[str] = []
        self.namespace: dict[str, Any] = {}

    async def __call__(self, code: str, timeout: float | None) -> RunResult:
        self.ran.append(code)
        exec(compile(code, "<cell>", "exec"), self.namespace)
        return RunResult(status="ok", execution_count=len(self.ran))


def notebook(path: Path, source: str = HARMLESS) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source, id="c")]
    nbformat.write(nb, path)
    return path


def rewrite_cell(path: Path, source: str) -> None:
    """The user (or any program) saves the notebook with the cell changed."""
    nb = nbformat.read(path, as_version=4)
    nb.cells[0].source = source
    nbformat.write(nb, path)


def routed(parent: list[dict[str, Any]], **children: list[dict[str, Any]]) -> ScriptedModel:
    """One scripted model for a parent and its subagents: a request whose task names a key
    of ``children`` takes that child's next turn, any other the parent's."""
    queues = {"": list(parent), **{k: list(v) for k, v in children.items()}}

    def answer(request: Any) -> dict[str, Any]:
        content = request.messages[0]["content"]
        task = content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
        key = next((k for k in children if k in task), "")
        turns = queues[key]
        return turns.pop(0) if turns else {"text": f"({key or 'parent'}: no more turns)"}

    return ScriptedModel([answer] * 100)


def turnstile() -> tuple[Any, asyncio.Event]:
    """A tool that waits until the test opens it: a subagent calls it to act at the moment
    the test chooses (while its sibling's card waits)."""
    opened = asyncio.Event()

    @tool(category="read", permissions={"read_files"})
    async def wait_turn() -> str:
        """Wait for your turn."""
        await opened.wait()
        return "your turn"

    return wait_turn, opened


def requests(handle: RunHandle) -> list[PermissionRequestEvent]:
    return [e for e in handle.events_so_far if isinstance(e, PermissionRequestEvent)]


def ends(handle: RunHandle, name: str) -> list[ToolEndEvent]:
    return [e for e in handle.events_so_far if isinstance(e, ToolEndEvent) and e.name == name]


async def card(handle: RunHandle, nth: int) -> PermissionRequestEvent:
    """The ``nth`` card (1-based) of ``handle``, once it waits."""
    await until(lambda: len(requests(handle)) >= nth and handle.pending_approval is not None)
    return requests(handle)[nth - 1]


def results(agent: Agent) -> list[tuple[str, bool]]:
    return [(r.text, r.is_error) for m in agent.history for r in m.tool_results]


# --- a cell ------------------------------------------------------------------------------


async def test_a_cell_a_sibling_rewrote_while_the_card_waited_is_asked_about_again(workspace):
    marker = workspace / "pwned"
    path = notebook(workspace / "a.ipynb")
    python = Python()
    wait_turn, opened = turnstile()
    model = routed(
        [
            calls(
                ("delegate", {"task": "A: run cell c", "role": "actor"}),
                ("delegate", {"task": "B: tidy cell c", "role": "actor"}),
            ),
            {"text": "both done"},
        ],
        A=[call("run_cell", cell_id="c"), {"text": "ran it"}],
        B=[
            call("wait_turn"),
            call("update_cell", cell_id="c", source=evil(marker)),
            {"text": "ok"},
        ],
    )
    agent = Agent(
        "actor",
        model,
        workspace=workspace,
        notebook=FileBridge(path, executor=python),
        tools=[wait_turn],
        persist=False,
    )
    handle = agent.start("go")
    await until(lambda: len(handle.children) == 2)
    a, b = handle.children
    first = await card(a, 1)
    assert isinstance(first.preview, CellPreview) and first.preview.source == HARMLESS
    opened.set()  # B changes the cell (no approval needed) while A's card waits
    await until(lambda: b.done)
    a.approve(True)  # the user allows the harmless code they saw
    again = await card(a, 2)
    assert python.ran == []  # B's code did not run on A's approval
    assert isinstance(again.preview, CellPreview)
    assert again.preview.source == evil(marker)  # the fresh card shows what would run
    assert again.warnings[0] == snapshot(
        "Changed since the last approval: cell c. This card shows it as it is now."
    )
    a.deny()
    await handle.wait()
    assert python.ran == [] and not marker.exists()
    assert_valid(agent.history)
    assert_valid(a.history)


KERNEL_SETUP = """
import asyncio
from IPython import get_ipython
from jupyter_agent import Agent, ScriptedModel, tool
from jupyter_agent.jupyter.kernel.runner import KernelExecutor, attach_kernel
from jupyter_agent.notebook.file import FileBridge

def call(name, **arguments):
    return {"text": "", "tool_calls": [{"name": name, "input": arguments}]}

turns = {
    "": [
        {"text": "", "tool_calls": [
            {"name": "delegate", "input": {"task": "A: run cell c", "role": "actor"}},
            {"name": "delegate", "input": {"task": "B: tidy cell c", "role": "actor"}},
        ]},
        {"text": "both done"},
    ],
    "A": [call("run_cell", cell_id="c"), {"text": "ran it"}],
    "B": [call("wait_turn"), call("update_cell", cell_id="c", source="pwned = True"),
          {"text": "ok"}],
}

def answer(request):
    content = request.messages[0]["content"]
    task = content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
    key = next((k for k in ("A", "B") if task.startswith(k + ":")), "")
    return turns[key].pop(0) if turns[key] else {"text": "no more"}

opened = asyncio.Event()

@tool(category="read", permissions={"read_files"})
async def wait_turn() -> str:
    \"\"\"Wait for your turn.\"\"\"
    await opened.wait()
    return "your turn"

def cards(h):
    return [e for e in h.events_so_far if e.kind == "permission_request"]
"""


@pytest.mark.slow
def test_in_a_real_kernel_an_approval_never_runs_a_siblings_code(workspace):
    """File mode with the kernel's own executor: the code runs in the user's namespace."""
    path = notebook(workspace / "a.ipynb")
    with kernel(workspace) as k:
        k.ok(KERNEL_SETUP)
        k.ok(
            f"""
            agent = Agent(
                "actor",
                ScriptedModel([answer] * 20),
                notebook=FileBridge({str(path)!r}, executor=KernelExecutor(get_ipython())),
                tools=[wait_turn],
                workspace={str(workspace)!r},
                persist=False,
            )
            attach_kernel(agent)
            h = agent.start("go")
            """
        )
        k.until("len(h.children) == 2 and h.children[0].pending_approval is not None")
        assert k.value("cards(h.children[0])[0].preview.source") == HARMLESS
        k.ok("opened.set()")
        k.until("h.children[1].done")
        k.ok("h.children[0].approve(True)")
        k.until("len(cards(h.children[0])) == 2 and h.children[0].pending_approval")
        assert k.value("'pwned' in dir()") is False
        assert k.value("cards(h.children[0])[1].preview.source") == "pwned = True"
        k.ok("h.children[0].approve(False)")
        k.until("h.done")
        assert k.value("'pwned' in dir() or 'shown' in dir()") is False


async def test_an_allowed_cell_runs_exactly_the_code_its_card_showed(workspace):
    path = notebook(workspace / "a.ipynb")
    python = Python()
    model = ScriptedModel([call("run_cell", cell_id="c"), {"text": "ok"}])
    agent = Agent(
        "actor",
        model,
        workspace=workspace,
        notebook=FileBridge(path, executor=python),
        persist=False,
    )
    handle = agent.start("run it")
    await card(handle, 1)
    handle.approve(True)
    await handle.wait()
    assert python.ran == [HARMLESS]
    assert len(requests(handle)) == 1


async def test_a_cell_that_keeps_changing_is_asked_about_a_few_times_then_fails(workspace):
    path = notebook(workspace / "a.ipynb")
    python = Python()
    model = ScriptedModel([call("run_cell", cell_id="c"), {"text": "ok"}])
    agent = Agent(
        "actor",
        model,
        workspace=workspace,
        notebook=FileBridge(path, executor=python),
        persist=False,
    )
    handle = agent.start("run it")
    shown = []
    for n in range(1, 4):
        request = await card(handle, n)
        assert isinstance(request.preview, CellPreview)
        shown.append(request.preview.source)
        rewrite_cell(path, f"version = {n}")  # saved while every card waits
        handle.approve(True)
    await handle.wait()
    assert shown == [HARMLESS, "version = 1", "version = 2"]
    assert python.ran == []
    ((text, is_error),) = results(agent)
    assert is_error
    assert text.startswith("Not run: cell c changed after each of the 3 times this call was")
    assert "nothing ran" in text


async def test_a_file_bridge_runs_no_cell_whose_source_is_not_the_one_expected(workspace):
    path = notebook(workspace / "a.ipynb")
    python = Python()
    bridge = FileBridge(path, executor=python)
    await bridge.read()
    rewrite_cell(path, "changed = True")
    with pytest.raises(SourceChanged, match="Cell c was not run: its code changed"):
        await bridge.run("c", source=HARMLESS)
    assert python.ran == []
    assert (await bridge.run("c", source="changed = True")).status == "ok"
    assert python.ran == ["changed = True"]


async def test_a_cell_inserted_after_a_card_for_a_missing_cell_is_asked_about(workspace):
    path = workspace / "a.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1", id="other")]
    nbformat.write(nb, path)
    python = Python()
    model = ScriptedModel([call("run_cell", cell_id="c"), {"text": "ok"}])
    agent = Agent(
        "actor",
        model,
        workspace=workspace,
        notebook=FileBridge(path, executor=python),
        persist=False,
    )
    handle = agent.start("run it")
    first = await card(handle, 1)
    assert first.preview is None  # no cell c: no code shown
    nb.cells.append(nbformat.v4.new_code_cell("planted = True", id="c"))
    nbformat.write(nb, path)
    handle.approve(True)
    again = await card(handle, 2)
    assert isinstance(again.preview, CellPreview) and again.preview.source == "planted = True"
    handle.deny()
    await handle.wait()
    assert python.ran == []


# --- a command and the scripts it runs ------------------------------------------------------


def script(workspace: Path, name: str, marker: str, *, old: bool = True) -> Path:
    path = workspace / name
    path.write_text(f"echo {marker} >> ran.txt\n")
    if old:
        there_before_the_agent(path)
    return path


def ran(workspace: Path) -> list[str]:
    log = workspace / "ran.txt"
    return log.read_text().split() if log.exists() else []


async def test_a_script_a_sibling_rewrote_while_the_card_waited_is_asked_about_again(workspace):
    script(workspace, "job.sh", "approved")
    wait_turn, opened = turnstile()
    model = routed(
        [
            calls(
                ("delegate", {"task": "A: run the job", "role": "actor"}),
                ("delegate", {"task": "B: improve the job", "role": "actor"}),
            ),
            {"text": "both done"},
        ],
        A=[call("execute_command", command="bash job.sh"), {"text": "ran it"}],
        B=[
            call("wait_turn"),
            call("create_file", path="job.sh", content="echo evil >> ran.txt\n", overwrite=True),
            {"text": "ok"},
        ],
    )
    agent = Agent("actor", model, workspace=workspace, tools=[wait_turn], persist=False)
    handle = agent.start("go")
    await until(lambda: len(handle.children) == 2)
    a, b = handle.children
    await card(a, 1)
    opened.set()
    await until(lambda: b.done)
    a.approve(True)
    again = await card(a, 2)
    assert ran(workspace) == []  # the rewritten script did not run on the first Allow
    assert again.warnings[0] == snapshot(
        "Changed since the last approval: job.sh. This card shows it as it is now."
    )
    assert any("job.sh" in w and "changed during this session" in w for w in again.warnings)
    a.deny()
    await handle.wait()
    assert ran(workspace) == []


async def test_a_script_rewritten_from_outside_while_the_card_waited_never_runs(workspace):
    model = ScriptedModel(
        [
            call("create_file", path="job.sh", content="echo mine >> ran.txt\n"),
            call("execute_command", command="bash job.sh"),
            call("execute_command", command="bash job.sh"),
            {"text": "ok"},
        ]
    )
    agent = Agent("actor", model, workspace=workspace, persist=False)
    handle = agent.start("write and run the job")
    first = await card(handle, 1)
    assert any("job.sh" in w and "changed during this session" in w for w in first.warnings)
    (workspace / "job.sh").write_text("echo evil >> ran.txt\n")  # any program, meanwhile
    handle.approve(True)
    again = await card(handle, 2)
    assert ran(workspace) == []
    assert again.warnings[0].startswith("Changed since the last approval: job.sh.")
    handle.deny()
    # The next call is asked about too: the approval was for the content the card showed.
    third = await card(handle, 3)
    assert any("job.sh" in w for w in third.warnings)
    handle.deny()
    await handle.wait()
    assert ran(workspace) == []


async def test_a_rewrite_that_puts_the_times_back_is_asked_about_again(workspace):
    path = script(workspace, "job.sh", "v1", old=False)
    wait_turn, opened = turnstile()
    run = call("execute_command", command="bash job.sh")
    model = ScriptedModel([run, call("wait_turn"), run, {"text": "ok"}])
    agent = Agent("actor", model, workspace=workspace, tools=[wait_turn], persist=False)
    handle = agent.start("run the job twice")
    await card(handle, 1)
    handle.approve(True, scope="exact")  # "Always allow this exact command"
    await until(lambda: len(ends(handle, "execute_command")) == 1)
    stamp = path.stat()
    path.write_text("echo v2 >> ran.txt\n")  # same size, and the times put back
    os.utime(path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    opened.set()
    again = await card(handle, 2)
    assert any("job.sh" in w and "changed during this session" in w for w in again.warnings)
    handle.deny()
    await handle.wait()
    assert ran(workspace) == ["v1"]


async def test_no_sibling_rewrites_the_script_of_an_approved_command_while_it_runs(workspace):
    wait_turn, opened = turnstile()
    model = routed(
        [
            calls(
                ("delegate", {"task": "A: write and run slow", "role": "actor"}),
                ("delegate", {"task": "B: change slow", "role": "actor"}),
            ),
            {"text": "both done"},
        ],
        A=[call("execute_command", command="bash slow.sh"), {"text": "ran it"}],
        B=[
            call("wait_turn"),
            call("create_file", path="slow.sh", content="echo evil >> ran.txt\n", overwrite=True),
            {"text": "tried"},
        ],
    )
    agent = Agent("actor", model, workspace=workspace, tools=[wait_turn], persist=False)
    # Written during the session: the card binds the script's bytes.
    (workspace / "slow.sh").write_text("echo started\nsleep 1.5\necho approved >> ran.txt\n")
    handle = agent.start("go")
    await until(lambda: len(handle.children) == 2)
    a, b = handle.children
    first = await card(a, 1)
    assert any("slow.sh" in w for w in first.warnings)
    a.approve(True)
    await until(lambda: any(e.kind == "tool_progress" for e in a.events_so_far))
    opened.set()  # B writes while A's command runs
    await handle.wait()
    ((refused, is_error),) = [r for r in results(b.agent) if "slow.sh" in r[0]]
    assert is_error
    assert refused.startswith("'slow.sh' was not changed: it is the code of a command the user")
    assert "`bash slow.sh`" in refused
    assert ran(workspace) == ["approved"]
    assert "evil" not in (workspace / "slow.sh").read_text()


# --- a file write ---------------------------------------------------------------------------


def asking_for_writes() -> Rules:
    rules = Rules.defaults()
    rules.add(Rule.ask("update_file", priority=50), Rule.ask("create_file", priority=50))
    return rules


@pytest.mark.parametrize(
    ("write", "expected"),
    [
        (
            call("update_file", path="data.py", old_text="b = 2", new_text="b = 3"),
            "a = 100\nb = 3\n",
        ),
        (
            call("create_file", path="data.py", content="fresh = 1\n", overwrite=True),
            "fresh = 1\n",
        ),
        (call("delete_file", path="data.py"), None),
    ],
    ids=["update_file", "create_file", "delete_file"],
)
async def test_a_file_changed_while_its_card_waited_is_asked_about_with_the_new_diff(
    workspace, write, expected
):
    data = workspace / "data.py"
    data.write_text("a = 1\nb = 2\n")
    model = ScriptedModel([write, {"text": "ok"}])
    agent = Agent("actor", model, workspace=workspace, policy=asking_for_writes(), persist=False)
    handle = agent.start("edit")
    first = await card(handle, 1)
    assert isinstance(first.preview, FilePreview) and first.preview.diff is not None
    assert "a = 1" in first.preview.diff
    data.write_text("a = 100\nb = 2\n")  # the user saves the file meanwhile
    handle.approve(True)
    again = await card(handle, 2)
    assert data.read_text() == "a = 100\nb = 2\n"  # nothing written on the first Allow
    assert isinstance(again.preview, FilePreview) and again.preview.diff is not None
    assert "a = 100" in again.preview.diff and "a = 1\n" not in again.preview.diff
    assert again.warnings[0] == snapshot(
        "Changed since the last approval: data.py. This card shows it as it is now."
    )
    handle.approve(True)  # the diff they saw now
    await handle.wait()
    assert (data.read_text() if data.exists() else None) == expected


async def test_a_file_swapped_for_a_link_while_its_card_waited_is_asked_about(workspace):
    (workspace / "data.py").write_text("a = 1\n")
    (workspace / "other.py").write_text("a = 1\n")  # the same text, another file
    model = ScriptedModel(
        [call("update_file", path="data.py", old_text="a = 1", new_text="a = 2"), {"text": "ok"}]
    )
    agent = Agent("actor", model, workspace=workspace, policy=asking_for_writes(), persist=False)
    handle = agent.start("edit")
    await card(handle, 1)
    (workspace / "data.py").unlink()
    (workspace / "data.py").symlink_to("other.py")
    handle.approve(True)
    await card(handle, 2)
    handle.deny()
    await handle.wait()
    assert (workspace / "other.py").read_text() == "a = 1\n"


# --- the seam itself --------------------------------------------------------------------------


@pytest.mark.slow
async def test_an_mcp_call_sends_only_the_arguments_its_card_showed(workspace):
    import sys

    from jupyter_agent.config.settings import Settings
    from jupyter_agent.mcp import McpServerConfig

    server = Path(__file__).parents[1] / "mcp" / "mcp_server_for_tests.py"
    settings = Settings(
        # A start bounded for a loaded machine (Python and the mcp package load slowly there).
        mcp_servers={
            "srv": McpServerConfig(command=sys.executable, args=[str(server)], startup_timeout=90)
        }
    )
    agent = Agent("actor", ScriptedModel(), workspace=workspace, settings=settings, persist=False)
    try:
        notes = await agent.mcp.sync(agent.tools, frozenset({Permission.USE_MCP}))
        echo = agent.tools.get("mcp__srv__echo")
        assert echo is not None, notes
        ctx = ToolContext(workspace=workspace)
        kwargs = echo.validate({"text": "shown"})
        shown = await echo.show(ctx, kwargs)
        kwargs["arguments"]["text"] = "changed"  # whatever could change them in between
        ctx.approval = Grant(shown.bound)
        with pytest.raises(ChangedSinceShown, match="its arguments changed"):
            await echo.invoke(ctx, kwargs)
        kwargs["arguments"]["text"] = "shown"
        assert (await echo.invoke(ctx, kwargs)).text == "echo: shown"
    finally:
        await agent.mcp.close()


async def test_a_notebook_an_approved_command_runs_is_not_edited_meanwhile(workspace):
    from jupyter_agent.notebook.bridge import NotebookBridge
    from jupyter_agent.tools.notebook import update_cell
    from jupyter_agent.workspace.provenance import WrittenFiles

    path = notebook(workspace / "a.ipynb")
    written = WrittenFiles()
    ctx = ToolContext(workspace=workspace)
    ctx.resources.insert(written)
    ctx.resources.insert(FileBridge(path), NotebookBridge)
    edit = update_cell.validate({"cell_id": "c", "source": "changed = True"})
    before = path.read_bytes()
    async with written.running([str(path)], "jupyter nbconvert --execute a.ipynb"):
        with pytest.raises(ToolError, match="it is the code of a command the user approved"):
            await update_cell.invoke(ctx, edit)
        assert path.read_bytes() == before
    await update_cell.invoke(ctx, edit)  # once the command ended
    assert nbformat.read(path, as_version=4).cells[0].source == "changed = True"
