"""A cloned repository plants links and special files where the agent keeps its own state,
its instructions and its notebook; nothing outside the workspace changes or is read.

Each case is a real workspace ("the clone") beside a "victim" folder that stands for the
rest of the user's machine: another project's real SQLite database and sessions, a private
notes file, a notebook. The agent runs for real (scripted model, real run loop, real files,
real SQLite). After every case the victim folder is byte for byte what it was, and nothing
of it reached the conversation (the history the model is sent and the session files).

Siblings of each planted link are covered too: a link to a folder or a file, hard links, a
FIFO or a device where a file should be (nothing may hang), and a folder swapped for a link
while the agent works.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import sqlite3
import stat
import threading
import time
from pathlib import Path

import nbformat
import pytest
from helpers import call

from jupyter_agent import Agent, ScriptedModel
from jupyter_agent.agent import Session
from jupyter_agent.errors import SessionError
from jupyter_agent.notebook.file import FileBridge
from jupyter_agent.sessions.index import INDEX_FILE, SESSIONS_DIR, SessionIndex
from jupyter_agent.sessions.store import SessionMetadata
from jupyter_agent.workspace.paths import ForeignDatabase, PathRefused, Root

pytestmark = pytest.mark.timeout(60)

PRIVATE = "the victim's private notes: do not read"


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """The rest of the machine: another project's sessions and database, private notes."""
    folder = tmp_path / "victim"
    folder.mkdir()
    db = sqlite3.connect(folder / "precious.sqlite")
    db.execute("CREATE TABLE customers (name TEXT)")
    db.execute("INSERT INTO customers VALUES ('Ada'), ('Grace')")
    db.commit()
    db.close()
    (folder / "notes.md").write_text(PRIVATE + "\n")
    other = Session.create(folder, session_id="other-project", title="the victim's secret plan")
    other.append(_user("the victim's confidential roadmap"))
    other.close()
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell("victim_code = 1"))
    nbformat.write(nb, folder / "analysis.ipynb")
    return folder


def _user(text: str):
    from jupyter_agent.messages import Message

    return Message.user(text)


def snapshot(folder: Path) -> dict[str, str]:
    """Every entry under ``folder``: a file's digest, a link's target, a folder's mark."""
    found: dict[str, str] = {}
    for root, dirs, files in os.walk(folder):
        for name in [*dirs, *files]:
            path = Path(root, name)
            rel = path.relative_to(folder).as_posix()
            if path.is_symlink():
                found[rel] = "-> " + os.readlink(path)
            elif path.is_dir():
                found[rel] = "dir"
            elif path.is_file():
                found[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                found[rel] = "special"
    return found


def conversation(agent: Agent) -> str:
    """What the model was sent and what the session files hold, as one text."""
    sent = json.dumps([r.messages for r in getattr(agent.model, "requests", [])], default=str)
    files = ""
    if agent.session.path is not None and agent.session.path.exists():
        files = "".join(p.read_text() for p in agent.session.path.iterdir() if p.is_file())
    return sent + json.dumps(agent.session.api_messages(), default=str) + files


def state_folder(workspace: Path) -> Path:
    folder = workspace / SESSIONS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    return folder


# --- the session store and its index ----------------------------------------------------


async def test_a_planted_index_link_to_another_database_is_left_alone(
    workspace: Path, victim: Path
) -> None:
    """The Planner's first search_sessions must not drop the tables of a database the
    index is a link to."""
    before = snapshot(victim)
    (state_folder(workspace) / INDEX_FILE).symlink_to(victim / "precious.sqlite")
    model = ScriptedModel([call("search_sessions", query="customers"), {"text": "ok"}])
    planner = Agent("planner", model, workspace=workspace)
    handle = await planner.run("what did we do before?")
    assert handle.state.value == "completed"
    assert snapshot(victim) == before
    with sqlite3.connect(victim / "precious.sqlite") as db:
        assert db.execute("SELECT count(*) FROM customers").fetchone() == (2,)
    (result,) = [r for m in planner.history for r in m.tool_results]
    assert not result.is_error  # searched in memory, around the planted file
    assert (workspace / SESSIONS_DIR / INDEX_FILE).is_symlink()


@pytest.mark.parametrize("kind", ["hard link", "foreign database", "not a database"])
def test_an_index_file_not_of_ours_is_never_written(
    workspace: Path, victim: Path, kind: str
) -> None:
    saved = Session.create(workspace, session_id="mine", title="tune the boosting model")
    saved.append(_user("tune the boosting model"))
    saved.close()
    index_path = workspace / SESSIONS_DIR / INDEX_FILE
    if kind == "hard link":
        os.link(victim / "precious.sqlite", index_path)
    elif kind == "foreign database":  # planted whole, as a clone brings it
        shutil.copy(victim / "precious.sqlite", workspace / "tmp.sqlite")
        os.replace(workspace / "tmp.sqlite", index_path)
    else:  # planted whole (a file written bit by bit is empty for a moment: that is ours)
        (workspace / "tmp.zip").write_bytes(b"PK\x03\x04 an archive, not a database")
        os.replace(workspace / "tmp.zip", index_path)
    before, planted = snapshot(victim), index_path.read_bytes()
    index = SessionIndex.of(workspace / SESSIONS_DIR)
    assert [h.session_id for h in index.search("boosting")] == ["mine"]
    assert index.refused and str(index_path) in index.refused
    assert index_path.read_bytes() == planted
    assert snapshot(victim) == before
    with pytest.raises(PathRefused):
        index.rebuild()  # not even on request
    assert index_path.read_bytes() == planted


@pytest.mark.parametrize("side", ["-wal", "-shm", "-journal"])
def test_a_planted_side_file_link_keeps_sqlite_from_writing_through_it(
    workspace: Path, victim: Path, side: str
) -> None:
    """SQLite opens its side files by name: one planted as a link would be written."""
    saved = Session.create(workspace, session_id="mine", title="plot the churn")
    saved.append(_user("plot the churn"))
    saved.close()
    index = SessionIndex.of(workspace / SESSIONS_DIR)
    index.search("churn")  # our own index exists now
    # The writer thread's connection gone: closing, SQLite removes its side files by name
    # (the planted link among them, had it been planted already).
    assert index.wait()
    for suffix in ("-wal", "-shm", "-journal"):
        (workspace / SESSIONS_DIR / (INDEX_FILE + suffix)).unlink(missing_ok=True)
    target = victim / "notes.md"
    (workspace / SESSIONS_DIR / (INDEX_FILE + side)).symlink_to(target)
    before = snapshot(victim)
    assert [h.session_id for h in index.search("churn")] == ["mine"]
    assert index.refused is not None and side in index.refused
    assert snapshot(victim) == before


async def test_a_planted_sessions_folder_link_keeps_sessions_in_memory(
    workspace: Path, victim: Path
) -> None:
    """Session files never land outside, and another project's conversations are never
    listed, loaded or searched."""
    (workspace / ".jupyter_agent").mkdir()
    (workspace / SESSIONS_DIR).symlink_to(victim / SESSIONS_DIR, target_is_directory=True)
    before = snapshot(victim)
    model = ScriptedModel([call("search_sessions", query="roadmap"), {"text": "Nothing."}])
    agent = Agent("planner", model, workspace=workspace)
    assert agent.session.path is None and agent.session.unsaved
    handle = await agent.run("what did we plan before?")
    assert handle.state.value == "completed"
    assert snapshot(victim) == before
    assert Agent.sessions(workspace) == []
    with pytest.raises(SessionError, match="link"):
        Session.load(workspace, "other-project")
    (result,) = [r for m in agent.history for r in m.tool_results]
    assert "confidential" not in result.text and "other-project" not in result.text
    assert "secret plan" not in conversation(agent)
    warnings = [e.message for e in handle.events_so_far if e.kind == "warning"]
    assert any("kept in memory only" in w for w in warnings), warnings


def test_a_planted_state_folder_link_stops_the_agent_with_a_clear_message(
    workspace: Path, victim: Path
) -> None:
    """The agent's own folder as a link: its settings cannot be read safely, so no agent
    starts there until the link is gone, and nothing outside is touched."""
    (workspace / ".jupyter_agent").symlink_to(victim / ".jupyter_agent", target_is_directory=True)
    before = snapshot(victim)
    with pytest.raises(Exception, match=r"\.jupyter_agent: it is a link.*Remove the link"):
        Agent("planner", ScriptedModel([{"text": "x"}]), workspace=workspace)
    assert Agent.sessions(workspace) == []
    assert snapshot(victim) == before


def test_a_sessions_file_that_is_a_second_name_of_another_file_is_refused(
    workspace: Path, victim: Path
) -> None:
    folder = state_folder(workspace) / "planted"
    folder.mkdir()
    (folder / "metadata.json").write_text(json.dumps({"session_id": "planted", "title": "x"}))
    os.link(victim / "notes.md", folder / "history.jsonl")
    before = snapshot(victim)
    with pytest.raises(SessionError, match="names"):
        Session.load(workspace, "planted")  # its content is another file's
    session = Session(Session.list(workspace)[0], [], workspace / SESSIONS_DIR)
    with pytest.raises(OSError, match="hard link"):
        session.append(_user("appended"))  # no loop running: written at once
    assert snapshot(victim) == before


@pytest.mark.parametrize("special", ["fifo", "device"])
def test_a_special_file_as_session_metadata_hangs_nothing(workspace: Path, special: str) -> None:
    if special == "device" and os.geteuid() != 0:
        special = "fifo"  # making a device node needs root; a FIFO is the same class
    good = Session.create(workspace, session_id="good", title="a real one")
    good.append(_user("a real one"))
    good.close()
    for name in ("metadata.json", "history.jsonl"):
        folder = state_folder(workspace) / f"planted-{name}"
        folder.mkdir()
        if name == "history.jsonl":
            (folder / "metadata.json").write_text(json.dumps({"session_id": folder.name}))
        if special == "fifo":
            os.mkfifo(folder / name)
        else:
            os.mknod(folder / name, stat.S_IFCHR | 0o666, os.makedev(1, 5))  # /dev/zero
    done: list[list[SessionMetadata]] = []
    thread = threading.Thread(target=lambda: done.append(Session.list(workspace)), daemon=True)
    thread.start()
    thread.join(10)
    assert done, "listing the sessions hung on a planted special file"
    assert [m.session_id for m in done[0]] == ["planted-history.jsonl", "good"] or [
        m.session_id for m in done[0]
    ] == ["good", "planted-history.jsonl"]
    with pytest.raises(SessionError, match="not a regular file"):
        Session.load(workspace, "planted-history.jsonl")
    assert [h.session_id for h in SessionIndex.of(workspace / SESSIONS_DIR).search("real")] == [
        "good"
    ]


# --- instructions and %agent remember ------------------------------------------------------


async def test_agents_md_as_a_link_out_is_neither_read_nor_written(
    workspace: Path, victim: Path, home: Path
) -> None:
    (workspace / "AGENTS.md").symlink_to(victim / "notes.md")
    before = snapshot(victim)
    agent = Agent("planner", ScriptedModel([{"text": "ok"}]), workspace=workspace)
    found = agent.read_instructions()
    assert found.files == [] and any("outside" in w for w in found.warnings)
    with pytest.raises(ValueError, match="outside"):
        agent.remember("always use polars")
    await agent.run("hello")
    assert PRIVATE not in conversation(agent)
    assert snapshot(victim) == before


def test_agents_md_as_a_fifo_is_skipped_at_once(workspace: Path, home: Path) -> None:
    os.mkfifo(workspace / "AGENTS.md")
    agent = Agent("planner", ScriptedModel(), workspace=workspace)
    done: list[object] = []
    thread = threading.Thread(target=lambda: done.append(agent.read_instructions()), daemon=True)
    thread.start()
    thread.join(10)
    assert done, "reading the instructions hung on a FIFO"
    assert any("FIFO" in w for w in done[0].warnings)  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="FIFO"):
        agent.remember("x")


# --- notebooks in file mode ----------------------------------------------------------------


async def test_a_notebook_path_that_links_out_is_not_read_or_edited(
    workspace: Path, victim: Path
) -> None:
    (workspace / "analysis.ipynb").symlink_to(victim / "analysis.ipynb")
    before = snapshot(victim)
    model = ScriptedModel(
        [
            call("read_notebook"),
            call("insert_cell", source="import os  # planted", cell_type="code"),
            {"text": "done"},
        ]
    )
    agent = Agent("actor", model, workspace=workspace, notebook=workspace / "analysis.ipynb")
    await agent.run("edit the notebook")
    results = [r for m in agent.history for r in m.tool_results]
    assert all(r.is_error and "outside" in r.text for r in results), [r.text for r in results]
    assert "victim_code" not in conversation(agent)
    assert snapshot(victim) == before


async def test_a_notebook_folder_swapped_for_a_link_during_edits_changes_nothing_outside(
    workspace: Path, victim: Path
) -> None:
    """While the agent edits ``sub/analysis.ipynb`` cell after cell, ``sub`` is swapped for
    a link to the victim's folder, which holds a notebook of the same name."""
    sub = workspace / "sub"
    sub.mkdir()
    shutil.copy(victim / "analysis.ipynb", sub / "analysis.ipynb")
    before = snapshot(victim)
    bridge = FileBridge(sub / "analysis.ipynb", root=workspace)
    [first] = await bridge.read()
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            with_link = workspace / "sub.link"
            with_link.symlink_to(victim, target_is_directory=True)
            os.replace(with_link, workspace / "sub.swapped")  # a link beside it
            try:
                os.rename(sub, workspace / "sub.real")
                os.rename(workspace / "sub.swapped", sub)
                time.sleep(0.001)
                os.rename(sub, workspace / "sub.swapped")
                os.rename(workspace / "sub.real", sub)
                time.sleep(0.001)  # as long real as swapped
            except OSError:
                pass
            (workspace / "sub.swapped").unlink(missing_ok=True)

    thread = threading.Thread(target=swap, daemon=True)
    thread.start()
    outcomes = {"written": 0, "refused": 0}
    try:
        for n in range(200):
            try:
                await bridge.update(first.id, f"x = {n}")
                outcomes["written"] += 1
            except Exception:
                outcomes["refused"] += 1
                bridge = FileBridge(workspace / "sub" / "analysis.ipynb", root=workspace)
                try:
                    [first] = await bridge.read()
                except Exception:
                    await asyncio.sleep(0.001)
    finally:
        stop.set()
        thread.join(5)
    assert snapshot(victim) == before
    assert outcomes["written"] > 0  # the edits went on, in the workspace


# --- the file tools under a swapped folder --------------------------------------------------


async def test_read_file_never_reads_through_a_folder_swapped_for_a_link(
    workspace: Path, victim: Path
) -> None:
    data = workspace / "data"
    data.mkdir()
    (data / "notes.md").write_text("the workspace's own notes\n")
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            try:
                os.rename(data, workspace / "data.real")
                (workspace / "data").symlink_to(victim, target_is_directory=True)
                time.sleep(0.0005)
                (workspace / "data").unlink()
                os.rename(workspace / "data.real", data)
                time.sleep(0.0005)  # as long real as swapped
            except OSError:
                pass

    thread = threading.Thread(target=swap, daemon=True)
    thread.start()
    turns = [call("read_file", path="data/notes.md") for _ in range(150)] + [{"text": "ok"}]
    try:
        agent = Agent("planner", ScriptedModel(turns), workspace=workspace, max_steps=200)
        await agent.run("read the notes, many times")
    finally:
        stop.set()
        thread.join(5)
    texts = [r.text for m in agent.history for r in m.tool_results]
    assert any("the workspace's own notes" in t for t in texts)
    assert not any(PRIVATE in t for t in texts)


# --- the gate itself ---------------------------------------------------------------------


def test_links_inside_the_root_are_followed_and_links_out_refused(
    workspace: Path, victim: Path
) -> None:
    (workspace / "real.txt").write_text("inside")
    (workspace / "alias.txt").symlink_to("real.txt")
    (workspace / "deep").mkdir()
    (workspace / "deep" / "up.txt").symlink_to("../real.txt")
    (workspace / "out.txt").symlink_to(victim / "notes.md")
    (workspace / "climb.txt").symlink_to("../victim/notes.md")
    (workspace / "loop").symlink_to("loop")
    root = Root(workspace)
    assert root.read("alias.txt") == b"inside"
    assert root.read("deep/up.txt") == b"inside"
    for name in ("out.txt", "climb.txt", "../victim/notes.md", str(victim / "notes.md")):
        with pytest.raises(PathRefused, match="outside"):
            root.read(name)
    with pytest.raises(PathRefused, match="links"):
        root.read("loop")
    state = Root(workspace, links="none")
    with pytest.raises(PathRefused, match="no link"):
        state.read("alias.txt")


def test_a_database_is_opened_only_when_it_is_ours(workspace: Path, victim: Path) -> None:
    root = Root(workspace, links="none")
    db = root.database("mine.sqlite", application_id=7, create=True)
    db.execute("CREATE TABLE t (x)")
    db.close()
    root.database("mine.sqlite", application_id=7, create=False).close()
    with pytest.raises(ForeignDatabase):
        root.database("mine.sqlite", application_id=8, create=False)
    shutil.copy(victim / "precious.sqlite", workspace / "copy.sqlite")
    with pytest.raises(ForeignDatabase):
        root.database("copy.sqlite", application_id=7, create=True)
