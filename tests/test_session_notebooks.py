"""Sessions name the notebook they worked on, and a session that goes on in another notebook
keeps its conversation but not its cell references.

Invariants: a session's notebook is recorded relative to the workspace; a session saved
before that reads as "notebook unknown" and is never taken for another notebook's; going
on in another notebook records the move once (how many messages were held there) and tells
the model once, in a note that neither the transcript nor the search index takes for the
user's words; a rename is not a move.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from inline_snapshot import snapshot

from jupyter_agent import Agent, ScriptedModel
from jupyter_agent.agent import Session
from jupyter_agent.jupyter.panel.transcript import history_entries
from jupyter_agent.messages import STOPPED_NOTE, Message
from jupyter_agent.notebook.file import FileBridge
from jupyter_agent.sessions.index import SESSIONS_DIR, SessionIndex
from jupyter_agent.sessions.notebooks import (
    ThisNotebook,
    moved_note,
    notebook_name,
    where,
    without_notes,
)
from jupyter_agent.sessions.store import SessionMetadata


def touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{}")
    return path


# --- naming notebooks -------------------------------------------------------------------


def test_a_notebook_is_named_relative_to_the_workspace(tmp_path: Path) -> None:
    assert notebook_name(tmp_path, tmp_path / "sub" / "a.ipynb") == "sub/a.ipynb"
    outside = tmp_path.parent / "elsewhere.ipynb"
    assert notebook_name(tmp_path, outside) == outside.as_posix()


def test_this_notebook_tells_its_sessions_from_other_notebooks_and_unknown_ones(
    tmp_path: Path,
) -> None:
    work = tmp_path / "projects" / "sales"
    touch(work / "a.ipynb")
    here = ThisNotebook.of(work, touch(work / "b.ipynb"), "projects/sales/b.ipynb")
    assert (here.name, here.server_folder) == ("b.ipynb", "projects/sales")
    assert [here.where(n) for n in ("b.ipynb", "a.ipynb", None, "")] == [
        "here",
        "other",
        "unknown",
        "unknown",
    ]
    assert where(None, "a.ipynb") == "unknown"  # a kernel that does not know its notebook
    # Named as the server names it, to be opened; not when it is gone or outside the server.
    assert here.server_path("a.ipynb") == "projects/sales/a.ipynb"
    assert here.server_path("gone.ipynb") == ""
    assert here.server_path("../../../x.ipynb") == ""
    # A frontend that names notebooks by absolute path (VS Code): nothing can be opened.
    absolute = ThisNotebook.of(work, work / "b.ipynb", str(work / "b.ipynb"))
    assert (absolute.name, absolute.server_path("a.ipynb")) == ("b.ipynb", "")
    # At the server's root.
    root = ThisNotebook.of(work, work / "b.ipynb", "b.ipynb")
    assert (root.server_folder, root.server_path("a.ipynb")) == ("", "a.ipynb")
    # Renamed in the frontend: the same notebook, by its new name.
    renamed = here.renamed("projects/sales/c.ipynb")
    assert (renamed.name, renamed.server_folder) == ("c.ipynb", "projects/sales")
    assert absolute.renamed("whatever.ipynb") is absolute


# --- recording the notebook and moving ----------------------------------------------------


def test_a_session_saved_before_sessions_named_their_notebook_reads_as_unknown(
    workspace: Path,
) -> None:
    session = Session.create(workspace, title="old")
    path = workspace / SESSIONS_DIR / session.id / "metadata.json"
    data = json.loads(path.read_text())
    del data["notebook"], data["moved"]
    path.write_text(json.dumps(data))
    (meta,) = Session.list(workspace)
    assert meta.notebook is None and meta.moved is None
    assert Session.metadata_of(workspace, session.id) == meta
    # Taken up by a notebook: recorded, but no move (where it was held is not known).
    loaded = Session.load(workspace, session.id)
    loaded.append(Message.user("hello"))
    assert loaded.work_on("a.ipynb") is None
    assert loaded.metadata.moved is None


async def test_going_on_in_another_notebook_is_recorded_once_and_the_model_told_once(
    workspace: Path,
) -> None:
    model = ScriptedModel([{"text": "Read cell c1."}, {"text": "Read this one."}, {"text": "ok"}])
    agent = Agent("planner", model, workspace=workspace)
    assert agent.session.work_on("a.ipynb") is None  # a new session: nothing to move
    await agent.run("Look at cell c1")
    held = len(agent.history)
    assert agent.session.work_on("a.ipynb") is None  # the same notebook: no move

    resumed = Agent.resume(agent.session.id, workspace=workspace, model=model)
    assert resumed.session.work_on("b.ipynb") == "a.ipynb"
    saved = Session.metadata_of(workspace, agent.session.id)
    assert saved.notebook == "b.ipynb"
    assert saved.moved is not None and (saved.moved.from_notebook, saved.moved.messages) == (
        "a.ipynb",
        held,
    )
    await resumed.run("Now this notebook")
    await resumed.run("And again")
    asked = [m.text for m in resumed.history if m.role == "user"]
    assert asked[1] == moved_note("a.ipynb", "b.ipynb") + "\n\nNow this notebook"
    assert asked[2] == "And again"  # told once
    assert moved_note("a.ipynb", "b.ipynb") == snapshot(
        "[The conversation so far was held in the notebook 'a.ipynb'; it continues now in "
        "'b.ipynb'. The cells it named are cells of 'a.ipynb', not of this notebook: read "
        "this notebook before working on its cells.]"
    )

    # The transcript shows the user's words, and where the conversation moved.
    entries = history_entries(resumed.history, resumed)
    users = [e["text"] for e in entries if e["kind"] == "user"]
    assert users == ["Look at cell c1", "Now this notebook", "And again"]
    notes = [i for i, e in enumerate(entries) if e.get("cells_of")]
    (at,) = notes
    assert entries[at]["cells_of"] == "a.ipynb"
    assert [e["kind"] for e in entries[:at]] == ["user", "text"]
    assert entries[at + 1] == {"kind": "user", "text": "Now this notebook"}

    # The index neither: the note's words are not found as the user's.
    index = SessionIndex.of(workspace / SESSIONS_DIR)
    assert index.wait()
    (hit,) = index.search("now this notebook")
    assert hit.role == "user" and hit.marked() == "**Now** **this** **notebook**"


def test_a_session_started_from_code_records_its_notebook(workspace: Path) -> None:
    """Not only a kernel's agent: one given a notebook in code (a path, or a bridge) lists
    its session with that notebook; one given none leaves it unknown."""
    (workspace / "sub").mkdir()
    nbformat = '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'
    (workspace / "sub" / "a.ipynb").write_text(nbformat)
    file = workspace / "sub" / "a.ipynb"
    by_path = Agent("planner", ScriptedModel([]), workspace=workspace, notebook=file)
    assert Session.metadata_of(workspace, by_path.session.id).notebook == "sub/a.ipynb"
    later = Agent("planner", ScriptedModel([]), workspace=workspace)
    assert later.session.metadata.notebook is None
    later.attach_notebook(FileBridge(file))
    assert Session.metadata_of(workspace, later.session.id).notebook == "sub/a.ipynb"


async def test_a_subagents_session_records_its_parents_notebook(workspace: Path) -> None:
    turns: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "delegate", "input": {"task": "look around"}}]},
        {"text": "looked"},
        {"text": "done"},
    ]
    agent = Agent("planner", ScriptedModel(turns), workspace=workspace)
    agent.session.work_on("a.ipynb")
    handle = await agent.run("go")
    (child,) = handle.children
    assert Session.metadata_of(workspace, child.session_id).notebook == "a.ipynb"


def test_a_rename_is_not_a_move(workspace: Path) -> None:
    session = Session.create(workspace)
    session.work_on("a.ipynb")
    session.append(Message.user("hi"))
    assert session.work_on("renamed.ipynb", renamed=True) is None
    assert session.metadata.notebook == "renamed.ipynb" and session.metadata.moved is None


def test_a_just_moved_session_shows_the_note_at_its_end(workspace: Path) -> None:
    agent = Agent("planner", ScriptedModel([]), workspace=workspace)
    agent.session.work_on("a.ipynb")
    agent.session.append(Message.user("Read cell c1"))
    agent.session.work_on("b.ipynb")
    entries = history_entries(agent.history, agent)
    assert [e["kind"] for e in entries] == ["user", "note", "note"]
    assert entries[1]["cells_of"] == "a.ipynb" and "cells_of" not in entries[2]


def test_notes_before_a_task_are_not_the_users_words() -> None:
    moved = moved_note("a [1].ipynb", "b.ipynb")
    assert without_notes(f"{moved}\n\n{STOPPED_NOTE}\n\nGo on") == "Go on"
    assert without_notes(f"{STOPPED_NOTE}\n\nGo on") == "Go on"
    assert without_notes("[The conversation so far] is mine") == "[The conversation so far] is mine"


def test_metadata_round_trips_the_notebook_and_the_move() -> None:
    meta = SessionMetadata(
        session_id="s",
        notebook="b.ipynb",
        moved={"from_notebook": "a.ipynb", "messages": 4},  # type: ignore[arg-type]
    )
    again = SessionMetadata.model_validate_json(meta.model_dump_json())
    assert again == meta and again.moved is not None and not again.moved.told
