"""The agent in a real kernel (jupyter_client): file mode end to end, the namespace tools on
live variables with secrets masked, and stop while the agent waits or runs a cell.

Every cell of these tests runs in a real ipykernel; the test reads what a frontend would
see (iopub messages, per cell) and what lands in the .ipynb on disk.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import nbformat
import pytest
from kernel_agents import SETUP, make_notebook
from kernels import kernel

pytestmark = [pytest.mark.slow, pytest.mark.timeout(60)]

OPENAI = "sk-proj-abcdefghijklmnopqrstuvwx"
GITHUB = "ghp_abcdefghijklmnopqrstuvwxyz0123"


RUNNING_CELL = (
    "not h.done and any(e.kind == 'tool_start' and e.name == 'run_cell' for e in h.events_so_far)"
)


def new_agent(notebook: Path, script: str, role: str = "actor") -> str:
    return f"""
agent = Agent(
    {role!r},
    ScriptedModel({script}),
    notebook=FileBridge({str(notebook)!r}, executor=KernelExecutor(get_ipython())),
    policy=Rules([Rule.allow(Everything())]),
    workspace={str(notebook.parent)!r},
)
attach_kernel(agent)
"""


def test_file_mode_end_to_end_in_a_real_kernel(workspace):
    path = make_notebook(
        workspace / "analysis.ipynb",
        [
            nbformat.v4.new_markdown_cell("# Sales", id="intro"),
            nbformat.v4.new_code_cell("numbers = list(range(10))", id="load"),
            nbformat.v4.new_code_cell("total = 0", id="compute"),
            nbformat.v4.new_code_cell("print('old')", id="old"),
        ],
    )
    # The agent's cell waits until the test releases it: mid-way for as long as the test looks.
    agent_code = (
        "print('agent says hi')\\nawait release.wait()\\n"
        "total = sum(range(10))\\nprint('total is', total)\\ntotal * 2"
    )
    script = f"""[
    call("read_notebook"),
    call("update_cell", cell_id="compute", source="{agent_code}"),
    call("run_cell", cell_id="compute", timeout=20),
    call("insert_cell", source="## Result", cell_type="markdown", after="compute"),
    call("delete_cell", cell_id="old"),
    call("task_complete", summary="computed the total"),
]"""
    with kernel(workspace) as k:
        k.ok(SETUP)
        k.ok("release = asyncio.Event()")
        started = k.ok(
            new_agent(path, script) + "h = agent.start('compute the total')\nprint('started')"
        )
        start_id, start_outputs = started.msg_id, started.outputs
        assert start_outputs == [{"name": "stdout", "text": "started\n"}]

        # The run is a background task: the cell ended, the agent goes on, and the user's
        # cells still run meanwhile — even while the agent's own cell awaits.
        k.until(RUNNING_CELL)
        user_cell = k.ok("print('user cell ran meanwhile', h.done)")
        meanwhile_id, meanwhile = user_cell.msg_id, user_cell.outputs
        # (ipykernel may send one print as two stream messages: its flush timer can fire
        # between the print's writes on a loaded machine)
        assert user_cell.stdout == "user cell ran meanwhile False\n"
        assert {o["name"] for o in meanwhile} == {"stdout"}
        assert k.value("'total' in dir()") is False  # the agent's cell is mid-way
        k.ok("release.set()")
        k.until("h.done", timeout=20)
        assert k.value("h.state.value") == "completed"
        assert k.value("[e for e, _ in results()]") == [False] * 6

        # What the agent did is in the file.
        nb = nbformat.read(path, as_version=4)
        ids = [c.id for c in nb.cells]
        assert ids[:3] == ["intro", "load", "compute"] and "old" not in ids and len(ids) == 4
        assert nb.cells[3].cell_type == "markdown" and nb.cells[3].source == "## Result"
        compute = nb.cells[2]
        assert compute.source == agent_code.replace("\\n", "\n")
        assert compute.outputs[0] == {
            "output_type": "stream",
            "name": "stdout",
            "text": "agent says hi\ntotal is 45\n",
        }
        result = compute.outputs[1]
        assert result["output_type"] == "execute_result"
        assert result["data"] == {"text/plain": "90"}
        n = compute.execution_count
        assert result["execution_count"] == n
        # …and it ran in this kernel, as a cell: its count, In, Out and the namespace.
        assert k.value(f"[In[{n}] == {compute.source!r}, Out[{n}], total]") == [True, 90, 45]
        history = f"agent.resources.get(ExecutionHistory).source_of({n}) == In[{n}]"
        assert k.value(history) is True

        # Nothing the agent's cell printed reached a cell of the user's, or any frontend.
        printed = {start_id: "started\n", meanwhile_id: "user cell ran meanwhile False\n"}
        for msg_id, text in printed.items():
            assert "".join(o["content"]["text"] for o in k.outputs(msg_id)) == text
        assert "agent says hi" not in k.all_output_text()
        assert "total is" not in k.all_output_text()
        # The kernel's hooks are back as they were.
        assert k.value("type(sys.stdout).__name__") == "OutStream"
        assert k.value("'publish' in vars(get_ipython().display_pub)") is False


def test_namespace_tools_on_live_variables_and_secrets_stay_masked(workspace):
    pytest.importorskip("pandas")
    path = make_notebook(
        workspace / "keys.ipynb",
        [nbformat.v4.new_code_cell("print(token)\nOPENAI_API_KEY", id="leak")],
    )
    script = """[
    call("list_variables"),
    call("inspect_variable", name="df"),
    call("inspect_variable", name="OPENAI_API_KEY"),
    call("inspect_variable", name="token"),
    call("inspect_variable", name="settings"),
    call("run_cell", cell_id="leak"),
    call("read_notebook"),
    call("task_complete", summary="looked"),
]"""
    with kernel(workspace) as k:
        k.ok(
            SETUP
            + f"""
import pandas as pd
df = pd.DataFrame({{"region": ["north", "south", "north"], "sales": [1.5, None, 4.5]}})
OPENAI_API_KEY = {OPENAI!r}
token = {GITHUB!r}
settings = {{"endpoint": "https://api.example.com", "api_key": {OPENAI!r}}}
"""
        )
        # This cell awaits the whole run: the agent runs its cell while this one executes.
        awaited = k.ok(
            new_agent(path, script) + "h = await agent.run('what is loaded?')\nprint(h.state.value)"
        )
        waiting_id, waiting = awaited.msg_id, awaited.outputs
        assert waiting == [{"name": "stdout", "text": "completed\n"}]
        texts = k.value("[t for _, t in results()]")
        assert k.value("[e for e, _ in results()]") == [False] * 8
        listing, frame, key, tok, settings, ran, notebook, _ = texts
        assert "df" in listing and "pandas.DataFrame" in listing and "3×2" in listing
        assert "'sk-p•••'  (masked: the name says it is a secret)" in listing
        assert frame.startswith("df: pandas.DataFrame, 3 rows × 2 columns")
        assert "sales (float64, 1 null)" in frame and "mean" in frame
        assert key.startswith("OPENAI_API_KEY: str = 'sk-p•••'")
        assert tok.startswith("token: str = 'ghp_•••'")
        assert "'api_key': 'sk-p•••'" in settings and "https://api.example.com" in settings
        assert "ghp_•••" in ran and "sk-p•••" in ran
        assert "ghp_•••" in notebook
        for text in texts:
            assert OPENAI not in text and GITHUB not in text
        # The file keeps the real output (it is the user's notebook) …
        stored = nbformat.read(path, as_version=4).cells[0].outputs
        assert stored[0]["text"] == GITHUB + "\n"
        # … but no frontend saw it: not the cell that awaited the run, nor any other.
        assert k.outputs(waiting_id)[0]["content"]["text"] == "completed\n"
        assert GITHUB not in k.all_output_text() and OPENAI not in k.all_output_text()


def test_stop_from_a_later_cell_while_the_agent_waits_or_runs_a_cell(workspace):
    path = make_notebook(
        workspace / "stop.ipynb",
        [
            nbformat.v4.new_code_cell(
                "import asyncio\nprint('sleeping')\nawait asyncio.sleep(60)", id="slow"
            )
        ],
    )
    question = """call(
        "ask_user",
        question="Which region first?",
        options=[
            {"label": "North", "value": "north", "description": "the larger one"},
            {"label": "South", "value": "south", "description": "the smaller one"},
        ],
    )"""
    with kernel(workspace) as k:
        k.ok(SETUP)
        k.ok(new_agent(path, f"[{question}]") + "h = agent.start('clean up')")
        k.until("h.pending_question is not None")
        assert k.value("h.state.value") == "waiting_user"
        k.ok("h.stop()")
        k.until("h.done", timeout=5)
        assert k.value("[h.state.value, h.stop_reason]") == ["cancelled", "manual_stop"]
        problems = "__import__('jupyter_agent.messages').messages"
        assert (
            k.value(f"{problems}.conversation_problems({problems}.to_api_messages(agent.history))")
            == []
        )
        assert "interrupted" in (k.value("results()[-1][1]")).lower()

        # Stop while the agent's own cell awaits: the cell is cancelled, the kernel is fine.
        k.ok(
            new_agent(path, '[call("run_cell", cell_id="slow", timeout=60)]')
            + "h = agent.start('run the slow cell')"
        )
        k.until(RUNNING_CELL)
        k.ok("await asyncio.sleep(0.2)")  # the cell is in its sleep now
        started = time.monotonic()
        k.ok("h.stop()")
        k.until("h.done", timeout=30)
        assert time.monotonic() - started < 30  # the cell was cancelled, not its 60 s waited out
        assert k.value("h.stop_reason") == "manual_stop"
        assert k.value("type(sys.stdout).__name__") == "OutStream"
        assert k.ok("print(1 + 1)").stdout == "2\n"
        assert "sleeping" not in k.all_output_text()


def test_executor_timeouts_interrupts_and_input(workspace):
    with kernel(workspace) as k:
        k.ok(
            SETUP
            + """
ex = KernelExecutor(get_ipython(), interrupt_grace=0.5)
def launch(code, timeout=10):
    return asyncio.get_running_loop().create_task(ex(code, timeout))

def summary(task):
    r = task.result()
    return [r.status, r.error and r.error["ename"], [o["output_type"] for o in r.outputs]]
"""
        )
        # synchronous code: the watchdog interrupts it (KeyboardInterrupt in the code)
        k.ok("t = launch('print(1)\\nwhile True: pass', timeout=0.5)")
        k.until("t.done()")
        assert k.value("summary(t)") == ["timeout", "KeyboardInterrupt", ["stream", "error"]]
        # awaiting code: cancelled at its await, even while a cell of the user's runs
        k.ok("t = launch('import asyncio\\nawait asyncio.sleep(60)', timeout=0.5)")
        k.until("t.done()")
        assert k.value("summary(t)") == ["timeout", "CancelledError", ["error"]]
        k.ok("await asyncio.sleep(1.5)")  # no stray interrupt reaches this cell
        # the frontend's Interrupt button reaches code the agent runs in the background
        k.ok("t = launch('import time\\nfor _ in range(1000): time.sleep(0.01)', 60)")
        time.sleep(0.3)  # the code blocks the kernel: no cell could run meanwhile
        k.manager.interrupt_kernel()
        k.until("t.done()", timeout=5)
        assert k.value("summary(t)") == ["error", "KeyboardInterrupt", ["error"]]
        assert k.value("Out.get(len(In) - 1)") is None  # and it was the only cell
        # input() cannot be answered in a background cell: it fails instead of hanging
        k.ok("t = launch('input(\"name? \")')")
        k.until("t.done()")
        assert k.value("summary(t)") == ["error", "RuntimeError", ["error"]]
        assert (k.value("t.result().error['evalue']")).startswith("input() and getpass()")
        assert k.value("type(sys.stdout).__name__") == "OutStream"
        assert k.ok("print('still fine')").stdout == "still fine\n"


def test_a_command_cannot_read_the_kernels_key_or_environment(workspace):
    """The kernel's connection file holds the key that lets anyone run code in it, outside
    any sandbox; the kernel's environment holds its secrets. A command sees neither."""
    with kernel(workspace) as k:
        k.ok(SETUP)
        k.ok(
            """
            import os, json
            from ipykernel.connect import get_connection_file
            from jupyter_agent.jupyter.kernel.agent import kernel_agent
            from jupyter_agent.permissions import AllowAll
            os.environ["ANTHROPIC_API_KEY"] = "sk-ant-api03-kernel-only-secret"
            connection = get_connection_file()
            key = json.load(open(connection))["key"]
            line = f"cat {connection}; cat /proc/{os.getpid()}/environ; env"
            ka = kernel_agent()
            agent = ka.ensure(ScriptedModel([call("execute_command", command=line)]))
            agent.policy = AllowAll()
            h = agent.start("look", role="actor")
            """
        )
        k.until("h.done")
        assert k.value("agent.command_sandbox.status().active")
        output = k.value("results()[0][1]")
        assert k.value("key") not in output
        assert "kernel-only-secret" not in output
        assert output.count("No such file or directory") == 2


# The cell below has the kernel do what it was seen doing: a comm message dispatched beside
# the awaiting cell, after which the shell's header is set back (here, to an earlier cell's).
PROBE = """
import asyncio, uuid
from comm import get_comm_manager
k = get_ipython().kernel
probed = []
get_comm_manager().register_target("probe", lambda comm, _: comm.on_msg(probed.append))
earlier = k.get_parent("shell")
"""
SET_BACK = """
mine, real = k.get_parent("shell"), k.set_parent
def set_back(ident, parent, channel="shell"):
    real(ident, earlier if parent is mine else parent, channel)
k.set_parent = set_back
while not probed:
    await asyncio.sleep(0.05)
k.set_parent = real
"""


def test_a_cell_ends_under_its_own_header_whatever_set_it_back_meanwhile(workspace):
    """JupyterLab waits for each cell's idle status under that cell's header: one sent under
    an earlier cell's leaves the cell without its count and Run All unfinished. ipykernel 7
    was seen sending an awaiting cell's idle under the previous cell's header while comm
    messages were dispatched beside it (without the extension, this test's cell does the
    same); with the extension loaded, the cell ends under its own header."""
    with kernel(workspace) as k:
        k.ok("%load_ext jupyter_agent\n" + PROBE)
        comm_id = uuid.uuid4().hex
        session, shell = k.client.session, k.client.shell_channel
        shell.send(session.msg("comm_open", {"comm_id": comm_id, "target_name": "probe"}))
        start = len(k.seen)
        msg_id = k.client.execute(SET_BACK)
        k.wait_for(lambda m: m["msg_type"] == "execute_input", since=start)
        shell.send(session.msg("comm_msg", {"comm_id": comm_id, "data": {}}))
        idle = k.wait_for(
            lambda m: (
                m["msg_type"] == "status"
                and m["content"]["execution_state"] == "idle"
                and m["parent_header"].get("msg_type") == "execute_request"
            ),
            since=start,
        )
        assert idle["parent_header"]["msg_id"] == msg_id
        assert k.value("len(probed)") == 1
