"""The OS sandbox confines a command's writes, with real processes (``sandbox_runs``).

Invariants, each checked by running the launch argv as the shell tool will (a new session,
``pass_fds``, ``Launch.close()`` afterwards), and by looking at the host afterwards:

- a command writes only in the workspace (also under /tmp), the writable roots and a private
  /tmp; protected paths cannot be written, created, renamed or removed, also through a link;
- no mount-point file stays behind, also when launches overlap or a process crashed;
- the private /tmp lasts across one sandbox's launches, and programs installed under the
  real /tmp still run, unchanged.

On Linux a missing bwrap fails these tests (CI installs it); they skip on other systems.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

from sandbox_runs import PROCESS_WAIT, attempt, linux, sh

from jupyter_agent.os_sandbox.launch import OsSandbox, SandboxSettings

# --- the filesystem ------------------------------------------------------------------


@linux
def test_a_write_outside_the_workspace_is_refused_by_the_os(make_sandbox, workspace, outside):
    (outside / "keep.txt").write_text("mine")
    sb = make_sandbox()
    done = attempt(
        sb,
        workspace,
        new=("create", str(outside / "new.txt")),
        append=("append", str(outside / "keep.txt")),
        remove=("unlink", str(outside / "keep.txt")),
        home=("create", str(Path.home() / f".sandbox-escape-{uuid.uuid4().hex[:6]}")),
    )
    assert done == {"new": "EROFS", "append": "EROFS", "remove": "EROFS", "home": "EROFS"}
    assert sorted(os.listdir(outside)) == ["keep.txt"]
    assert (outside / "keep.txt").read_text() == "mine"


@linux
def test_writes_inside_the_workspace_work_also_when_it_lies_under_tmp(make_sandbox, workspace):
    assert workspace.is_relative_to(tempfile.gettempdir())  # pytest's tmp_path
    sb = make_sandbox()
    done = sh(sb, "mkdir -p src && echo 'print(1)' > src/a.py && mv src/a.py src/b.py", workspace)
    assert done.returncode == 0, done.stderr
    assert (workspace / "src/b.py").read_text() == "print(1)\n"


@linux
def test_an_extra_writable_folder_is_writable(make_sandbox, workspace, outside):
    venv = outside / "venv"
    venv.mkdir()
    sb = make_sandbox(SandboxSettings(writable=(str(venv),)))
    assert sh(sb, f"touch {venv}/installed", workspace).returncode == 0
    assert (venv / "installed").exists()
    assert sh(sb, f"touch {outside}/not-there", workspace).returncode != 0


@linux
def test_protected_paths_cannot_be_written_created_renamed_or_removed(make_sandbox, workspace):
    git = workspace / ".git"
    (git / "hooks").mkdir(parents=True)
    (git / "config").write_text("[core]\n")
    (git / "hooks/pre-commit.sample").write_text("#!/bin/sh\n")
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    protected = [
        git / "config",  # an existing file
        git / "hooks",  # an existing folder
        workspace / ".jupyter_agent",  # missing
        git / "info/attributes",  # missing, in a missing folder
    ]
    sb = make_sandbox(protected=protected)
    done = attempt(
        sb,
        workspace,
        append_config=("append", ".git/config"),
        rename_config=("rename", ".git/config", ".git/config.old"),
        remove_config=("unlink", ".git/config"),
        add_hook=("create", ".git/hooks/pre-commit"),
        remove_hook=("unlink", ".git/hooks/pre-commit.sample"),
        rename_hooks=("rename", ".git/hooks", ".git/hooks.old"),
        remove_hooks=("rmdir", ".git/hooks"),
        rename_git=("rename", ".git", ".git.old"),  # then rebuild .git: a folder on the way
        create_store=("mkdir", ".jupyter_agent"),
        create_store_file=("create", ".jupyter_agent"),
        remove_store=("unlink", ".jupyter_agent"),
        create_info=("mkdir", ".git/info"),
        head=("append", ".git/HEAD"),  # the rest of .git stays writable: git works
        index=("create", ".git/index"),
    )
    assert done.pop("head") == "ok"
    assert done.pop("index") == "ok"
    assert all(result != "ok" for result in done.values()), done
    # Mount points cannot be moved or removed.
    assert done["rename_config"] == done["rename_hooks"] == done["rename_git"] == "EBUSY"
    assert (git / "config").read_text() == "[core]\n"
    assert os.listdir(git / "hooks") == ["pre-commit.sample"]
    assert not (workspace / ".jupyter_agent").exists()  # the mount-point file went
    assert not (git / "info").exists()


@linux
def test_a_protected_path_through_a_symlink_cannot_be_swapped(make_sandbox, workspace):
    # ~/.bashrc -> dotfiles/bashrc, a linked hooks folder, a link to a store not made yet.
    (workspace / "dotfiles").mkdir()
    (workspace / "dotfiles/bashrc").write_text("alias ll='ls -l'\n")
    (workspace / ".bashrc").symlink_to("dotfiles/bashrc")
    (workspace / "githooks").mkdir()
    (workspace / ".git").mkdir()
    (workspace / ".git/hooks").symlink_to("../githooks")
    (workspace / ".jupyter_agent").symlink_to("store")
    (workspace / "src").mkdir()
    sb = make_sandbox(
        protected=[workspace / ".bashrc", workspace / ".git/hooks", workspace / ".jupyter_agent"]
    )
    done = attempt(
        sb,
        workspace,
        unlink_link=("unlink", ".bashrc"),
        retarget_link=("rename", "src", ".bashrc"),
        write_through_link=("append", ".bashrc"),
        write_target=("append", "dotfiles/bashrc"),
        move_target=("rename", "dotfiles/bashrc", "dotfiles/old"),
        unlink_hooks_link=("unlink", ".git/hooks"),
        hook_through_link=("create", ".git/hooks/pre-commit"),
        hook_in_target=("create", "githooks/pre-commit"),
        make_store=("mkdir", "store"),
        store_through_link=("mkdir", ".jupyter_agent"),
        unlink_store_link=("unlink", ".jupyter_agent"),
        # A folder holding a link is pinned read-only: existing entries stay writable,
        # new entries cannot be made there.
        write_in_subfolder=("create", "src/new.py"),
        new_top_level_file=("create", "notes.txt"),
    )
    assert done.pop("write_in_subfolder") == "ok"
    assert done.pop("new_top_level_file") == "EROFS"
    assert all(result != "ok" for result in done.values()), done
    assert os.readlink(workspace / ".bashrc") == "dotfiles/bashrc"
    assert os.readlink(workspace / ".git/hooks") == "../githooks"
    assert (workspace / "dotfiles/bashrc").read_text() == "alias ll='ls -l'\n"
    assert os.listdir(workspace / "githooks") == []
    assert not os.path.lexists(workspace / "store")


@linux
def test_a_link_deep_in_the_workspace_stays_pinned(make_sandbox, workspace):
    # Folders on the way are mounted before the folder holding the link, never over it.
    (workspace / "tool/hooks").mkdir(parents=True)
    (workspace / "tool/hooks/other.sh").write_text("")
    (workspace / "scripts").mkdir()
    (workspace / "scripts/hook.sh").write_text("echo hook\n")
    (workspace / "tool/hooks/run.sh").symlink_to("../../scripts/hook.sh")
    sb = make_sandbox(protected=[workspace / "tool/hooks/run.sh"])
    done = attempt(
        sb,
        workspace,
        unlink_link=("unlink", "tool/hooks/run.sh"),
        move_folder=("rename", "tool/hooks", "tool/old"),
        move_top=("rename", "tool", "tool.old"),
        write_target=("append", "scripts/hook.sh"),
        write_sibling=("append", "tool/hooks/other.sh"),
        new_top_level_file=("create", "notes.txt"),
    )
    assert done == {
        "unlink_link": "EROFS",
        "move_folder": "EBUSY",
        "move_top": "EBUSY",
        "write_target": "EROFS",
        "write_sibling": "ok",
        "new_top_level_file": "ok",
    }
    assert os.readlink(workspace / "tool/hooks/run.sh") == "../../scripts/hook.sh"


@linux
def test_a_mount_point_file_stays_while_another_process_uses_it(make_sandbox, workspace):
    store = workspace / ".jupyter_agent"
    # Another kernel on the same workspace: its command waits for "go", then tries the path.
    other = subprocess.Popen(
        [sys.executable, "-c", _OTHER_KERNEL, str(workspace), "hold"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert other.stdout is not None
        assert other.stdout.readline().strip() == "ready"
        sb = make_sandbox(protected=[store])
        assert sh(sb, "mkdir .jupyter_agent", workspace).returncode != 0  # ends first
        assert store.is_file()  # still the other launch's mount point
        (workspace / "go").touch()
        assert other.stdout.readline().strip() == "refused"
        assert other.wait(timeout=PROCESS_WAIT) == 0
    finally:
        other.kill()
    assert not store.exists()


@linux
def test_what_a_crashed_process_left_is_swept_at_the_next_launch(make_sandbox, workspace):
    store = workspace / ".jupyter_agent"
    crashed = subprocess.Popen([sys.executable, "-c", _OTHER_KERNEL, str(workspace), "crash"])
    assert crashed.wait(timeout=PROCESS_WAIT) == 0
    its_tmp = f"{tempfile.gettempdir()}/jupyter_agent-tmp-{crashed.pid}-*"
    assert store.is_file()  # left behind: that process never closed its launch
    assert glob.glob(its_tmp)  # and its private /tmp
    sb = make_sandbox(protected=[store])
    assert sh(sb, "mkdir .jupyter_agent", workspace).returncode != 0
    assert not store.exists()
    assert not glob.glob(its_tmp)


# Runs an OsSandbox in a process of its own: "hold" keeps a launch open until ./go exists,
# "crash" exits without closing its launch.
_OTHER_KERNEL = r"""
import os, subprocess, sys
from pathlib import Path
from jupyter_agent.os_sandbox.launch import OsSandbox
ws, mode = Path(sys.argv[1]), sys.argv[2]
sb = OsSandbox(ws, protected=lambda: [ws / ".jupyter_agent"])
script = (
    "echo ready; while [ ! -e go ]; do sleep 0.01; done;"
    "if mkdir .jupyter_agent 2>/dev/null; then echo created; else echo refused; fi"
)
launch = sb.launch(["sh", "-c", script if mode == "hold" else "true"], ws)
subprocess.run(launch.argv, cwd=ws, pass_fds=launch.pass_fds, start_new_session=True, check=True)
if mode == "crash":
    os._exit(0)
launch.close()
sb.close()
"""


@linux
def test_the_private_tmp_lasts_across_launches_and_the_real_tmp_is_untouched(
    make_sandbox, workspace
):
    name = f"jupyter-agent-test-{uuid.uuid4().hex}"
    sb = make_sandbox()
    assert sh(sb, f'echo kept > /tmp/{name} && [ "$TMPDIR" = /tmp ]', workspace).returncode == 0
    assert not Path("/tmp", name).exists()
    assert not Path(tempfile.gettempdir(), name).exists()
    assert sh(sb, f"cat /tmp/{name}", workspace).stdout == "kept\n"
    other = make_sandbox()  # another agent gets a /tmp of its own
    assert sh(other, f"cat /tmp/{name}", workspace).returncode != 0
    sb.close()
    assert sh(sb, f"cat /tmp/{name}", workspace).returncode != 0  # a new one after close


@linux
def test_programs_installed_under_the_real_tmp_stay_visible(make_sandbox, workspace, monkeypatch):
    """A virtual environment (or a CI checkout) under /tmp is hidden by the private /tmp
    unless it is shown again, read-only: its programs must run, and stay unchanged."""
    env = Path(tempfile.mkdtemp(prefix="venv-under-tmp-"))
    try:
        (env / "bin").mkdir()
        tool = env / "bin" / "jupyter-agent-test-tool"
        tool.write_text("#!/bin/sh\necho tool ran\n")
        tool.chmod(0o755)
        monkeypatch.setenv("PATH", f"{env / 'bin'}:{os.environ['PATH']}")
        sb = make_sandbox()
        done = sh(sb, f"jupyter-agent-test-tool; echo x > {tool}", workspace)
        assert done.stdout == "tool ran\n"
        assert "Read-only file system" in done.stderr
        assert tool.read_text() == "#!/bin/sh\necho tool ran\n"
    finally:
        shutil.rmtree(env, ignore_errors=True)


@linux
def test_a_sandbox_collected_during_a_read_only_inspection_still_removes_its_private_tmp(
    workspace,
):
    import gc

    from jupyter_agent.namespace.guard import read_only

    ours = f"{tempfile.gettempdir()}/jupyter_agent-tmp-{os.getpid()}-*"
    before = set(glob.glob(ours))
    sb = OsSandbox(workspace)
    assert sh(sb, "true", workspace).returncode == 0
    (tmp,) = set(glob.glob(ours)) - before
    with read_only() as refused:  # the collector may run while the namespace is inspected
        del sb
        gc.collect()
    assert not Path(tmp).exists()
    assert refused == []  # the removal is the sandbox's own, not the inspected code's
