"""Code the agent changed asks again before it runs, once: approving a run approves that
version, and the next change asks again."""

from __future__ import annotations

import os

from helpers import call, until

from jupyter_agent import Agent, ScriptedModel
from jupyter_agent.provenance import WrittenFiles


def test_a_file_is_changed_until_the_user_approves_running_it(tmp_path):
    old, new = tmp_path / "old.py", tmp_path / "new.py"
    old.write_text("print(1)\n")
    os.utime(old, (1_600_000_000, 1_600_000_000))  # before the agent started
    written = WrittenFiles()
    new.write_text("print(2)\n")
    assert not written.changed(old)
    assert written.changed(new)  # modified since the agent started
    written.acknowledge([str(new)])
    assert not written.changed(new)
    written.add(new)  # the agent writes it again
    assert written.changed(new)
    written.acknowledge([str(new)])
    os.utime(new, (2_000_000_000, 2_000_000_000))  # someone changes it after the approval
    assert written.changed(new)


def test_the_code_a_script_may_import_is_what_the_agent_wrote(tmp_path):
    written = WrittenFiles()
    for name in ("helpers.py", "notes.md", "Makefile"):
        (tmp_path / name).write_text("x\n")
        written.add(tmp_path / name)
    assert [os.path.basename(p) for p in written.unseen_code(tmp_path)] == [
        "Makefile",
        "helpers.py",
    ]


async def test_a_rewritten_script_asks_once_per_version(workspace):
    (workspace / "analysis.py").write_text("print('v1')\n")
    os.utime(workspace / "analysis.py", (1_600_000_000, 1_600_000_000))
    run = call("execute_command", command="python3 analysis.py")
    rewrite = call("create_file", path="analysis.py", content="print('v2')\n", overwrite=True)
    model = ScriptedModel(
        [run, rewrite, run, run, rewrite, run, call("task_complete", summary="done")]
    )
    agent = Agent("actor", model, workspace=workspace, persist=False)
    handle = agent.start("run the analysis")
    asked = []
    while await handle.wait_for_user() is not None:
        request = [e for e in handle.events_so_far if e.kind == "permission_request"][-1]
        asked.append(request.warnings)
        handle.approve(True, remember=len(asked) == 1)
        await until(lambda: handle.pending_approval is None or handle.done)
    await handle.wait()
    # 1: first run (Always allow); 3: after the rewrite; 4: runs unasked; 6: after another
    assert len(asked) == 3
    assert asked[0] == []
    assert all("analysis.py" in w[0] and "changed during this session" in w[0] for w in asked[1:])
    outputs = [r.text for m in agent.history for r in m.tool_results if "exit code" in r.text]
    assert [o.split("\n")[0] for o in outputs] == ["v1", "v2", "v2", "v2"]
