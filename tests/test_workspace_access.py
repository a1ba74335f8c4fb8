"""The sandbox: every path a tool gets is anchored at the workspace and checked."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from inline_snapshot import snapshot

from jupyter_agent.errors import ToolError
from jupyter_agent.tools import ToolContext, workspace_access
from jupyter_agent.workspace.access import WorkspaceAccess
from jupyter_agent.workspace.paths import Root


@pytest.fixture
def sb(workspace: Path) -> WorkspaceAccess:
    return WorkspaceAccess(workspace)


def refusal(sb: WorkspaceAccess, path: str, **kwargs) -> str:
    with pytest.raises(ToolError) as info:
        sb.resolve(path, **kwargs)
    return str(info.value)


# --- allowed -----------------------------------------------------------------------


def test_relative_paths_resolve_inside_the_workspace(sb, workspace):
    root = Path(os.path.realpath(workspace))
    assert sb.resolve("data/sales.csv") == root / "data" / "sales.csv"
    assert sb.resolve(".") == root
    assert sb.resolve("") == root
    assert sb.resolve("a/../b.txt") == root / "b.txt"


def test_absolute_paths_inside_the_workspace_are_allowed(sb, workspace):
    root = Path(os.path.realpath(workspace))
    assert sb.resolve(str(workspace / "notes.md")) == root / "notes.md"


def test_a_workspace_reached_through_a_symlink_accepts_its_own_absolute_paths(tmp_path, workspace):
    alias = tmp_path / "alias"
    alias.symlink_to(workspace)
    sb = WorkspaceAccess(alias)
    assert sb.resolve(str(alias / "x.txt")) == Path(os.path.realpath(workspace)) / "x.txt"
    assert sb.relative(alias / "x.txt") == "x.txt"


def test_a_symlink_inside_the_workspace_is_followed(sb, workspace):
    (workspace / "real.txt").write_text("hi")
    (workspace / "link.txt").symlink_to("real.txt")
    assert sb.resolve("link.txt") == Path(os.path.realpath(workspace)) / "real.txt"


def test_names_that_only_look_like_secret_files_are_allowed(sb, workspace):
    for path in (".environment", "env.py", "dotenv/readme.md", "my.pem.txt", "rsa.py"):
        assert sb.resolve(path) == workspace.resolve() / path


def test_reading_inside_the_session_store_and_git_is_allowed(sb, workspace):
    root = workspace.resolve()
    assert sb.resolve(".jupyter_agent/sessions/x/metadata.json") == (
        root / ".jupyter_agent/sessions/x/metadata.json"
    )
    assert sb.resolve(".git/config") == root / ".git/config"
    assert sb.resolve(".gitignore", for_write=True) == root / ".gitignore"


def test_relative_names_paths_for_display(sb, workspace):
    assert sb.relative(workspace / "a" / "b.txt") == "a/b.txt"
    assert sb.relative(workspace) == "."


# --- refused ------------------------------------------------------------------------


def test_dotdot_escape_is_refused(sb):
    assert refusal(sb, "../x.txt").startswith(
        "Refused '../x.txt': '..' leads outside the workspace"
    )
    assert "'..' leads outside" in refusal(sb, "a/../../x.txt")


def test_absolute_path_outside_is_refused(sb, tmp_path):
    outside = str(tmp_path / "other.txt")
    message = refusal(sb, outside)
    assert message.startswith(f"Refused {outside!r}: it is outside the workspace")


def test_symlink_to_a_file_outside_is_refused(sb, workspace, tmp_path):
    (tmp_path / "secret.txt").write_text("s")
    (workspace / "link.txt").symlink_to(tmp_path / "secret.txt")
    message = refusal(sb, "link.txt")
    assert message.startswith("Refused 'link.txt': a symbolic link leads outside the workspace")


def test_symlink_to_a_folder_outside_is_refused_even_for_new_files(sb, workspace, tmp_path):
    (tmp_path / "outside").mkdir()
    (workspace / "d").symlink_to(tmp_path / "outside")
    assert "symbolic link leads outside" in refusal(sb, "d/new.txt", for_write=True)
    assert "symbolic link leads outside" in refusal(sb, "d")


def test_dangling_symlink_leading_outside_is_refused(sb, workspace, tmp_path):
    (workspace / "trap").symlink_to(tmp_path / "not-yet")
    assert "symbolic link leads outside" in refusal(sb, "trap", for_write=True)


def test_etc_passwd_is_refused_as_sensitive(sb):
    message = refusal(sb, "/etc/passwd")
    assert message == snapshot(
        "Refused '/etc/passwd': /etc is a sensitive location (credentials or system files) "
        "that the agent may never touch."
    )


def test_sensitive_places_are_refused_even_below_a_root_workspace():
    sb = WorkspaceAccess(Path("/"))
    assert "/etc is a sensitive location" in refusal(sb, "/etc/passwd")
    assert "/proc is a sensitive location" in refusal(sb, "/proc/self/environ")
    assert "/sys is a sensitive location" in refusal(sb, "sys/kernel")
    assert "~/.ssh is a sensitive location" in refusal(sb, "~/.ssh/id_rsa")
    home = Path(os.path.expanduser("~"))
    assert "~/.aws is a sensitive location" in refusal(sb, str(home / ".aws" / "credentials"))


def test_sensitive_places_in_home_are_refused_when_the_workspace_is_home(monkeypatch, workspace):
    monkeypatch.setenv("HOME", str(workspace))
    sb = WorkspaceAccess(workspace)
    for path, place in [
        (".ssh/id_ed25519", "~/.ssh"),
        (".kube/config", "~/.kube"),
        (".config/gcloud/credentials.db", "~/.config/gcloud"),
        (".docker/config.json", "~/.docker/config.json"),
        (".netrc", "~/.netrc"),
        (".pgpass", "~/.pgpass"),
        (".gnupg/pubring.kbx", "~/.gnupg"),
    ]:
        assert f"{place} is a sensitive location" in refusal(sb, path)
    sb.resolve(".docker/other.json")  # only config.json is sensitive there


@pytest.mark.parametrize(
    "path", [".env", "config/.env", "a/b/c/.env", ".env.local", "deep/.env.production", ".ENV"]
)
def test_env_files_are_refused_at_any_depth(sb, path):
    assert refusal(sb, path) == (
        f"Refused {path!r}: .env files may hold secrets "
        "(a default rule; change WorkspaceAccess.deny_globs to allow)."
    )


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("certs/server.pem", ".pem files may hold private keys"),
        ("id_rsa", "SSH key files are private"),
        ("keys/id_rsa.pub", "SSH key files are private"),
        ("keys/id_ed25519", "SSH key files are private"),
    ],
)
def test_key_files_are_refused(sb, path, why):
    assert why in refusal(sb, path)


def test_a_folder_matching_a_deny_glob_refuses_what_it_holds(sb):
    assert ".env files may hold secrets" in refusal(sb, ".env/lib/site.py")


def test_a_symlink_to_an_env_file_is_refused(sb, workspace):
    (workspace / ".env").write_text("API_KEY=1")
    (workspace / "notes.txt").symlink_to(".env")
    assert ".env files may hold secrets" in refusal(sb, "notes.txt")


def test_deny_globs_can_be_changed(workspace):
    WorkspaceAccess(workspace, deny_globs=()).resolve(".env")
    custom = WorkspaceAccess(workspace, deny_globs=("data/raw/", "*.key"))
    assert "matches the deny rule 'data/raw/'" in refusal(custom, "data/raw/x.csv")
    assert "matches the deny rule '*.key'" in refusal(custom, "a/b/server.key")
    custom.resolve("data/clean/x.csv")
    custom.resolve("raw/x.csv")  # a slash anchors the pattern at the root


def test_writes_into_the_session_store_are_refused(sb):
    message = refusal(sb, ".jupyter_agent/sessions/x/metadata.json", for_write=True)
    assert message == snapshot(
        "Refused '.jupyter_agent/sessions/x/metadata.json': the agent may not write inside "
        ".jupyter_agent/, the agent's own session store."
    )


def test_writes_into_git_internals_are_refused_at_any_depth(sb):
    assert "may not write inside .git/" in refusal(sb, ".git/config", for_write=True)
    assert "may not write inside .git/" in refusal(sb, "vendor/lib/.git/HEAD", for_write=True)


def test_a_nul_byte_is_refused(sb):
    assert refusal(sb, "a\0b") == "Refused 'a\\x00b': the path contains a NUL byte."


def test_must_exist_names_close_matches(sb, workspace):
    (workspace / "data.csv").write_text("x")
    (workspace / "date.py").write_text("x")
    message = refusal(sb, "dta.csv", must_exist=True)
    assert message.startswith("'dta.csv' does not exist.")
    assert "Close matches: data.csv" in message


def test_must_exist_names_the_missing_folder(sb, workspace):
    (workspace / "src").mkdir()
    message = refusal(sb, "scr/main.py", must_exist=True)
    assert message.startswith("'scr/main.py' does not exist: there is no folder 'scr'.")
    assert "Close matches: src" in message


def test_close_matches_never_suggest_refused_files(sb, workspace):
    (workspace / ".env").write_text("SECRET=1")
    assert ".env" not in refusal(sb, ".envv", must_exist=True).split("exist.")[1]


# --- atomic writes ------------------------------------------------------------------


def atomic_write_text(target, text):
    Root(target.parent).write(target.name, text.encode())


def test_atomic_write_keeps_the_permission_bits(workspace):
    target = workspace / "script.sh"
    target.write_text("old")
    target.chmod(0o750)
    atomic_write_text(target, "new")
    assert target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o750


def test_atomic_write_gives_a_new_file_the_usual_permissions(workspace):
    umask = os.umask(0)
    os.umask(umask)
    target = workspace / "new.txt"
    atomic_write_text(target, "x")
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask


def test_a_failed_rename_leaves_the_old_file_and_no_temp_file(workspace, monkeypatch):
    target = workspace / "a.txt"
    target.write_text("original")

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError):
        atomic_write_text(target, "new")
    assert target.read_text() == "original"
    assert os.listdir(workspace) == ["a.txt"]


def test_an_interrupt_mid_write_leaves_the_old_file_and_no_temp_file(workspace, monkeypatch):
    target = workspace / "a.txt"
    target.write_text("original")

    def interrupted(fd):
        raise KeyboardInterrupt  # what a kernel interrupt looks like inside the write

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        atomic_write_text(target, "new")
    assert target.read_text() == "original"
    assert os.listdir(workspace) == ["a.txt"]


# --- workspace_access --------------------------------------------------------------------


def test_tools_use_the_agents_sandbox_when_there_is_one(workspace):
    ctx = ToolContext(workspace=workspace)
    assert workspace_access(ctx).root == Path(os.path.realpath(workspace))
    custom = WorkspaceAccess(workspace, deny_globs=())
    ctx.resources.insert(custom)
    assert workspace_access(ctx) is custom
