"""Code the agent changed asks again before it runs, once: approving a run approves that
version (its content, whatever the file's times say), and the next change asks again."""

from __future__ import annotations

import os
import time

from helpers import call, there_before_the_agent, until

from jupyter_agent import Agent, ScriptedModel
from jupyter_agent.workspace import provenance
from jupyter_agent.workspace.provenance import WrittenFiles, code_digest
from jupyter_agent.workspace.stamps import file_clock_ns


def _approve(written: WrittenFiles, path) -> None:
    written.acknowledge({str(path): code_digest(path)})


def test_a_file_is_changed_until_the_user_approves_running_it(tmp_path):
    old, new = tmp_path / "old.py", tmp_path / "new.py"
    old.write_text("print(1)\n")
    there_before_the_agent(old)
    written = WrittenFiles()
    new.write_text("print(2)\n")
    assert not written.changed(old)
    assert written.changed(new)  # modified since the agent started
    _approve(written, new)
    assert not written.changed(new)
    written.add(new)  # the agent writes it again
    assert written.changed(new)
    _approve(written, new)
    os.utime(new, (2_000_000_000, 2_000_000_000))  # touched, not changed: still approved
    assert not written.changed(new)
    new.write_text("print(3)\n")  # someone changes it after the approval
    assert written.changed(new)


def test_a_file_written_the_moment_after_the_agent_started_is_changed(tmp_path):
    # The file system stamps a write from a clock that may be milliseconds behind
    # time.time(): a script written at once after the start must not pass for one that was
    # there before it (and an "Always allow" then cover code nobody saw).
    before = tmp_path / "before.py"
    before.write_text("print('there already')\n")
    there_before_the_agent(before)
    for n in range(200):  # a stamp falls behind now and then, more often after a pause
        time.sleep(0.004)
        written = WrittenFiles()
        after = tmp_path / f"after{n}.py"
        after.write_text("print('new')\n")
        assert written.changed(after), n
    assert not written.changed(before)


def test_a_rewrite_that_keeps_the_files_times_is_still_a_change(tmp_path):
    script = tmp_path / "job.py"
    script.write_text("print('approved')\n")
    written = WrittenFiles()
    _approve(written, script)
    stamp = script.stat()
    script.write_text("print('other')\n")  # same length, times put back
    os.utime(script, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    assert written.changed(script)


def test_on_coarse_time_stamps_a_file_written_after_the_start_is_changed(tmp_path, coarse_stamps):
    # Written within the agent's first second or two, a file carries a stamp cut down to
    # before the start: it must not pass for one that was there before.
    for n in range(6):
        written = WrittenFiles()
        after = tmp_path / f"after{n}.py"
        after.write_text("print('new')\n")
        assert written.changed(after), n
        time.sleep(0.3)


def test_on_coarse_time_stamps_a_rewrite_after_an_approval_is_a_change(tmp_path, coarse_stamps):
    # A rewrite of the same length within the stamp's step leaves the status as it was:
    # the approved content's digest must not be taken from the cache for it.
    script = tmp_path / "job.py"
    script.write_text("print('approved')\n")
    written = WrittenFiles()
    _approve(written, script)
    assert not written.changed(script)
    script.write_text("print('swapped!')\n")
    assert written.changed(script)


def test_an_approved_file_is_not_read_again_once_its_stamp_is_settled(tmp_path, monkeypatch):
    script = tmp_path / "job.py"
    script.write_text("print('approved')\n")
    there_before_the_agent(script)
    settled = script.stat().st_ctime_ns + 2_000_000_000  # no later write can stamp it
    while file_clock_ns() <= settled:
        time.sleep(0.05)
    written = WrittenFiles()
    _approve(written, script)
    reads: list[str] = []
    digest = provenance.code_digest

    def reading(path: str) -> str:
        reads.append(path)
        return digest(path)

    monkeypatch.setattr(provenance, "code_digest", reading)
    for _ in range(3):
        assert not written.changed(script)
    assert len(reads) == 1


def test_an_approval_is_of_the_content_the_card_was_shown_for(tmp_path):
    script = tmp_path / "job.py"
    script.write_text("print('shown')\n")
    shown = code_digest(script)
    script.write_text("print('written while the card waited')\n")
    written = WrittenFiles()
    written.acknowledge({str(script): shown})  # the user clicks Allow now
    assert written.changed(script)


def test_a_link_pointed_elsewhere_is_a_change(tmp_path):
    (tmp_path / "a.py").write_text("print('a')\n")
    (tmp_path / "b.py").write_text("print('b')\n")
    link = tmp_path / "run.py"
    link.symlink_to("a.py")
    before = code_digest(link)
    link.unlink()
    link.symlink_to("b.py")
    assert code_digest(link) != before


def test_a_fifo_or_a_device_is_bound_by_its_type_without_blocking(tmp_path):
    fifo = tmp_path / "script.py"
    os.mkfifo(fifo)
    first = code_digest(fifo)  # would block for ever if it were opened for reading
    assert first == code_digest(fifo)
    assert code_digest("/dev/null") != code_digest(tmp_path / "missing.py")


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
    there_before_the_agent(workspace / "analysis.py")
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
