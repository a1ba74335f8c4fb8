"""Git's indirections stay read-only for commands, with real git and real bubblewrap.

Git does not read only ``.git/config`` and ``.git/hooks``: it follows ``.git/commondir``, a
``.git`` *file* (``gitdir: …``), ``.git/worktrees/*/{gitdir,commondir}``,
``objects/info/alternates``, ``config.worktree``, ``info/``, ``[include]``/``[includeIf]``
paths and ``core.hooksPath``, in every repository of the workspace (nested ones and
submodules too). Each case builds a repository with one of these, then a command in the
agent's own OS sandbox (:func:`~jupyter_agent.tools.shell.workspace_os_sandbox`) tries to
point it at a configuration it wrote, with ``core.fsmonitor`` set to a command. Invariants:

- every such write is refused by the OS (EROFS, EPERM, EBUSY: never "ok"), also through a
  link, a hard link, the user's linked ``~/.gitconfig`` or a folder swapped for a link after
  the launch was planned; planted FIFOs never hang the launch or the checks;
- afterwards, a real ``git status`` (and ``git commit``) *outside* the sandbox, as the user
  would run it, runs nothing planted, and the victim folder beside the workspace is intact.

What git run by the agent may still do, and what it runs, is ``test_agent_git.py``'s.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from git_places import Place, init, run_in

from jupyter_agent.os_sandbox.launch import OsSandbox
from jupyter_agent.tools import ToolContext
from jupyter_agent.tools.files import create_file
from jupyter_agent.workspace.git_redirects import git_redirects

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the bubblewrap sandbox is Linux's")


# Each operation, run inside the sandbox; prints {name: "ok" | errno name}.
_ATTEMPT = r"""
import errno, json, os, sys
out = {}
for name, (op, path, *rest) in json.loads(sys.argv[1]).items():
    try:
        if op == "write":  # create or replace
            with open(path, "w") as f:
                f.write(rest[0])
        elif op == "append":
            with open(path, "a") as f:
                f.write(rest[0])
        elif op == "replace":  # a new file renamed over the old one
            with open(path + ".new", "w") as f:
                f.write(rest[0])
            os.rename(path + ".new", path)
        elif op == "mkdir":
            os.mkdir(path)
        elif op == "rename":
            os.rename(path, rest[0])
        elif op == "unlink":
            os.unlink(path)
        elif op == "symlink":
            os.symlink(rest[0], path)
        out[name] = "ok"
    except OSError as e:
        out[name] = errno.errorcode.get(e.errno, str(e.errno))
    finally:
        if op == "replace" and os.path.lexists(path + ".new"):
            try:
                os.unlink(path + ".new")
            except OSError:
                pass
print(json.dumps(out))
"""


def attempt(sb: OsSandbox, p: Place, **ops: tuple[str, ...]) -> dict[str, str]:
    """Each operation's outcome inside the sandbox; every one must have failed."""
    outcomes: dict[str, str] = json.loads(
        run_in(sb, p, [sys.executable, "-c", _ATTEMPT, json.dumps(ops)])
    )
    return outcomes


def assert_refused(results: dict[str, str]) -> None:
    succeeded = {name: r for name, r in results.items() if r == "ok"}
    assert not succeeded, f"the sandbox let these through: {sorted(succeeded)}"
    # A missing path is blocked by a read-only file in its place: EEXIST, ENOTDIR below it.
    assert set(results.values()) <= {"EROFS", "EPERM", "EBUSY", "EACCES", "EEXIST", "ENOTDIR"}, (
        results
    )


def assert_nothing_ran(p: Place, *folders: Path) -> None:
    """The user's own git, outside the sandbox, in each folder: nothing planted runs."""
    for folder in folders or (p.ws,):
        for name in folder.rglob("*"):
            if name.is_file() and "/.git/" not in str(name) and name.stat().st_mtime:
                os.utime(name)  # stat info changes: git refreshes the index (and asks fsmonitor)
        p.git("status", cwd=folder)
        p.git("diff", cwd=folder)
        p.git("commit", "-q", "--allow-empty", "-m", "later", cwd=folder)
    assert p.ran() == []
    assert sorted(x.name for x in p.outside.iterdir()) == ["keep.txt"]


# --- one case per indirection -----------------------------------------------------------


def test_commondir_cannot_be_created(place, sandbox):
    p = place
    p.evil_gitdir(p.ws / "evil", "commondir")
    results = attempt(
        sandbox(),
        p,
        create=("write", ".git/commondir", "../evil\n"),
        absolute=("write", ".git/commondir", f"{p.ws}/evil\n"),
    )
    assert_refused(results)
    assert not os.path.lexists(p.ws / ".git/commondir")
    assert_nothing_ran(p)


def test_a_gitdir_file_cannot_be_pointed_elsewhere(place, sandbox):
    # The workspace is a linked worktree: its .git is a file naming the real git folder.
    p = place
    main = p.ws.parent / "main-checkout"
    init(p, main)
    shutil.rmtree(p.ws)
    assert p.git("worktree", "add", "-q", str(p.ws), cwd=main).returncode == 0
    p.evil_gitdir(p.ws / "evil", "gitdir-file")
    pointer = (p.ws / ".git").read_text()
    assert pointer.startswith("gitdir:")
    results = attempt(
        sandbox(),
        p,
        rewrite=("write", ".git", "gitdir: evil\n"),
        replace=("replace", ".git", "gitdir: evil\n"),
        remove=("unlink", ".git"),
        move=("rename", ".git", "git.old"),
    )
    assert_refused(results)
    assert (p.ws / ".git").read_text() == pointer
    assert_nothing_ran(p)


def test_a_linked_worktrees_pointers_cannot_be_changed(place, sandbox):
    p = place
    assert p.git("worktree", "add", "-q", "wt").returncode == 0
    p.evil_gitdir(p.ws / "evil", "worktree")
    admin = ".git/worktrees/wt"
    results = attempt(
        sandbox(),
        p,
        commondir=("write", f"{admin}/commondir", "../../../evil\n"),
        gitdir=("write", f"{admin}/gitdir", f"{p.ws}/evil/.git\n"),
        worktree_config=("write", f"{admin}/config.worktree", p.evil("wt-config")),
        worktree_file=("write", "wt/.git", "gitdir: ../evil\n"),
    )
    assert_refused(results)
    assert_nothing_ran(p, p.ws, p.ws / "wt")


def test_a_submodules_pointer_and_git_folder_cannot_be_changed(place, sandbox):
    p = place
    upstream = p.ws.parent / "upstream"
    init(p, upstream)
    done = p.git("submodule", "add", "-q", str(upstream), "lib")
    assert done.returncode == 0, done.stderr
    assert p.git("commit", "-q", "-m", "lib").returncode == 0
    assert (p.ws / "lib/.git").is_file()
    p.evil_gitdir(p.ws / "evil", "submodule")
    module = ".git/modules/lib"
    results = attempt(
        sandbox(),
        p,
        pointer=("write", "lib/.git", "gitdir: ../evil\n"),
        config=("append", f"{module}/config", p.evil("module-config")),
        hook=("write", f"{module}/hooks/post-index-change", "#!/bin/sh\ntouch x\n"),
        commondir=("write", f"{module}/commondir", "../../../evil\n"),
        info=("write", f"{module}/info/attributes", "* filter=x\n"),
        alternates=("write", f"{module}/objects/info/alternates", f"{p.ws}/evil/objects\n"),
    )
    assert_refused(results)
    # `git status` at the top recurses into the submodule.
    assert_nothing_ran(p, p.ws, p.ws / "lib")


def test_a_nested_repository_at_any_depth_is_confined_like_the_top_one(place, sandbox):
    p = place
    nested = p.ws / "data" / "raw" / "vendor"
    init(p, nested)
    p.evil_gitdir(p.ws / "evil", "nested")
    git = "data/raw/vendor/.git"
    results = attempt(
        sandbox(),
        p,
        config=("append", f"{git}/config", p.evil("nested-config")),
        replace_config=("replace", f"{git}/config", p.evil("nested-replace")),
        hook=("write", f"{git}/hooks/post-index-change", "#!/bin/sh\ntouch x\n"),
        commondir=("write", f"{git}/commondir", "../../../../evil\n"),
        alternates=("write", f"{git}/objects/info/alternates", f"{p.ws}/evil/objects\n"),
        attributes=("write", f"{git}/info/attributes", "* diff=x\n"),
        move_git=("rename", git, "data/raw/vendor/git.old"),
        move_repo=("rename", "data/raw/vendor", "data/raw/v2"),
    )
    assert_refused(results)
    assert_nothing_ran(p, nested)


def test_alternates_and_info_cannot_be_written(place, sandbox):
    p = place
    results = attempt(
        sandbox(),
        p,
        alternates=("write", ".git/objects/info/alternates", f"{p.outside}\n"),
        exclude=("append", ".git/info/exclude", "*\n"),
        attributes=("write", ".git/info/attributes", "* filter=evil\n"),
    )
    assert_refused(results)
    assert not (p.ws / ".git/objects/info/alternates").exists()


def test_config_worktree_cannot_be_created_when_git_reads_it(place, sandbox):
    p = place
    assert p.git("config", "extensions.worktreeConfig", "true").returncode == 0
    results = attempt(sandbox(), p, create=("write", ".git/config.worktree", p.evil("cw")))
    assert_refused(results)
    assert_nothing_ran(p)


def test_files_the_repository_config_includes_are_read_only(place, sandbox):
    p = place
    (p.ws / "team.gitconfig").write_text("[include]\n\tpath = conf.d/more.gitconfig\n")
    (p.ws / "conf.d").mkdir()
    (p.ws / "conf.d/more.gitconfig").write_text("[user]\n\tname = u\n")
    assert p.git("config", "include.path", "../team.gitconfig").returncode == 0
    assert p.git("config", "includeIf.gitdir:/.path", "../local.gitconfig").returncode == 0
    results = attempt(
        sandbox(),
        p,
        included=("append", "team.gitconfig", p.evil("include")),
        replaced=("replace", "team.gitconfig", p.evil("include-replace")),
        nested=("append", "conf.d/more.gitconfig", p.evil("include-nested")),
        missing=("write", "local.gitconfig", p.evil("include-if")),
    )
    assert_refused(results)
    assert not (p.ws / "local.gitconfig").exists()
    assert_nothing_ran(p)


def test_a_workspace_file_the_users_own_git_config_includes_is_read_only(place, sandbox):
    p = place
    (p.home / ".gitconfig").write_text(f"[include]\n\tpath = {p.ws}/shared.gitconfig\n")
    (p.ws / "shared.gitconfig").write_text("[alias]\n\tst = status\n")
    results = attempt(
        sandbox(),
        p,
        append=("append", "shared.gitconfig", p.evil("user-include")),
        remove=("unlink", "shared.gitconfig"),
    )
    assert_refused(results)
    assert_nothing_ran(p)


def test_the_hooks_folder_core_hooks_path_names_is_read_only(place, sandbox):
    # Named in the repository's config, and in a file that config includes.
    p = place
    (p.ws / "githooks").mkdir()
    assert p.git("config", "core.hooksPath", "githooks").returncode == 0
    nested = p.ws / "sub"
    init(p, nested)
    (p.ws / "sub/team.gitconfig").write_text("[core]\n\thooksPath = tools/hooks\n")
    assert p.git("config", "include.path", "../team.gitconfig", cwd=nested).returncode == 0
    hook = f"#!/bin/sh\ntouch {p.outside}/ran-hook\n"
    results = attempt(
        sandbox(),
        p,
        top=("write", "githooks/pre-commit", hook),
        nested_folder=("mkdir", "sub/tools"),
        nested_hooks=("mkdir", "sub/tools/hooks"),
        nested=("write", "sub/tools/hooks/pre-commit", hook),
    )
    assert_refused(results)
    assert_nothing_ran(p, p.ws, nested)


def test_a_linked_git_folder_is_confined_through_the_link(place, sandbox):
    p = place
    store = p.ws / "store" / "proj.git"
    init(p, p.ws / "proj")
    (p.ws / "store").mkdir()
    shutil.move(p.ws / "proj/.git", store)
    (p.ws / "proj/.git").symlink_to("../store/proj.git")
    p.evil_gitdir(p.ws / "evil", "link")
    results = attempt(
        sandbox(),
        p,
        config=("append", "store/proj.git/config", p.evil("linked-config")),
        retarget=("unlink", "proj/.git"),
        hook=("write", "store/proj.git/hooks/post-index-change", "#!/bin/sh\ntouch x\n"),
    )
    assert_refused(results)
    assert_nothing_ran(p, p.ws / "proj")


# --- other ways in: a swapped folder, hard links, FIFOs, a linked ~/.gitconfig ------------


@pytest.mark.parametrize("swapped", [".git", "data"])
def test_a_folder_swapped_for_a_link_after_planning_never_opens_the_links_target(
    place, sandbox, swapped
):
    # Another command, running meanwhile, swaps a folder the launch keeps in place (one on
    # the way to a repository's configuration) for a link to a folder outside.
    p = place
    init(p, p.ws / "data" / "vendor")
    sb = sandbox()
    victim = p.outside / "victim"  # shaped like what is swapped, so every mount finds its place
    shutil.copytree(p.ws / swapped, victim, symlinks=True)
    target = victim / "escaped"
    launch = sb.launch(["sh", "-c", f"echo x > {target}"], p.ws)
    try:
        (p.ws / swapped).rename(p.ws / f"{swapped}.moved")
        (p.ws / swapped).symlink_to(os.path.relpath(victim, p.ws))  # resolves inside bwrap too
        done = subprocess.run(
            launch.argv,
            cwd=p.ws,
            pass_fds=launch.pass_fds,
            start_new_session=True,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        launch.close()
    assert done.returncode != 0
    assert not target.exists()


def test_another_name_of_a_protected_file_is_read_only_too(place, sandbox):
    # A hostile archive ships the repository's config hard-linked to an ordinary file, and
    # a hook hard-linked to a script.
    p = place
    (p.ws / "notes.md").unlink(missing_ok=True)
    os.link(p.ws / ".git/config", p.ws / "notes.md")
    (p.ws / ".git/hooks/pre-commit").write_text("#!/bin/sh\nexit 0\n")
    (p.ws / ".git/hooks/pre-commit").chmod(0o755)
    (p.ws / "tools").mkdir()
    os.link(p.ws / ".git/hooks/pre-commit", p.ws / "tools/check.sh")
    results = attempt(
        sandbox(),
        p,
        config=("append", "notes.md", p.evil("hard-link")),
        hook=("append", "tools/check.sh", f"touch {p.outside}/ran-hook\n"),
    )
    assert_refused(results)
    assert_nothing_ran(p)


def test_planted_fifos_never_hang_the_launch_or_the_checks(place, sandbox):
    p = place
    assert p.git("config", "include.path", "../team.gitconfig").returncode == 0
    os.mkfifo(p.ws / ".git/commondir")
    os.mkfifo(p.ws / "team.gitconfig")
    nested = p.ws / "sub"
    nested.mkdir()
    os.mkfifo(nested / ".git")
    deep = p.ws / "deep"
    init(p, deep)
    (deep / ".git/config").unlink()
    os.mkfifo(deep / ".git/config")
    (p.home / ".gitconfig").unlink(missing_ok=True)
    os.mkfifo(p.home / ".gitconfig")
    sb = sandbox()
    finished: list[object] = []

    def work() -> None:
        sb.launch(["true"], p.ws).close()
        finished.append(
            create_file.assess(ToolContext(workspace=p.ws), {"path": "x", "content": ""})
        )

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    thread.join(timeout=30)
    assert not thread.is_alive(), "a planted FIFO blocked the launch or a check"
    assert len(finished) == 1


def test_the_users_template_folder_and_includes_through_a_linked_gitconfig_are_read_only(
    place, sandbox
):
    # ~/.gitconfig is a link into a dotfiles folder of the workspace; its relative include
    # is found beside ~/.gitconfig (where git opened it), and init.templateDir is copied,
    # hooks included, into every repository the user creates or clones.
    p = place
    (p.ws / "dotfiles").mkdir()
    (p.ws / "dotfiles/gitconfig").write_text(
        f"[include]\n\tpath = local.gitconfig\n[init]\n\ttemplateDir = {p.ws}/templates\n"
    )
    (p.home / ".gitconfig").symlink_to(p.ws / "dotfiles/gitconfig")
    (p.home / "local.gitconfig").write_text("[user]\n\tname = u\n")
    (p.ws / "templates/hooks").mkdir(parents=True)
    results = attempt(
        sandbox(writable=(str(p.home),)),
        p,
        linked=("append", "dotfiles/gitconfig", p.evil("linked-gitconfig")),
        beside=("append", f"{p.home}/local.gitconfig", p.evil("relative-include")),
        template=("write", "templates/hooks/post-checkout", "#!/bin/sh\ntouch x\n"),
    )
    assert_refused(results)
    hazards = create_file.assess(
        ToolContext(workspace=p.ws), {"path": "templates/hooks/post-checkout", "content": "x"}
    )
    assert [h.action for h in hazards] == ["ask"]
    assert "init.templateDir" in hazards[0].reason
    assert_nothing_ran(p)


def test_a_config_rewritten_within_a_stamps_step_is_read_again(tmp_path, coarse_stamps):
    # Where stamps keep whole or even seconds, a rewrite of the same length leaves the
    # configuration's status as it was: the hooks folder it names now is the one confined.
    ws = (tmp_path / "ws").resolve()
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    config = ws / ".git" / "config"
    config.write_text("[core]\n\thooksPath = hooks-a\n")
    assert ws / "hooks-a" in git_redirects([ws], home=tmp_path).hooks
    config.write_text("[core]\n\thooksPath = hooks-b\n")
    assert ws / "hooks-b" in git_redirects([ws], home=tmp_path).hooks
