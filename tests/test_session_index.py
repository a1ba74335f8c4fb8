"""The session search index: derived from the histories on disk, and only from them.

Whatever happens to ``index.sqlite`` (never made, deleted, damaged, of an older schema,
written twice by two kernels), a search finds what the sessions' ``history.jsonl`` files
hold, once each; a session write never fails because of the index; and what the model or
the user types is searched for as words, never run as FTS5 syntax, in bounded time.
"""

from __future__ import annotations

import json
import logging
import shutil
import sqlite3
import threading
import time
from pathlib import Path

import pytest
from helpers import PLAN, call

from jupyter_agent import Agent, ScriptedModel
from jupyter_agent.agent import Session
from jupyter_agent.messages import Message, MessageAdapter
from jupyter_agent.sessions import index as si
from jupyter_agent.sessions import index_rows as session_rows
from jupyter_agent.sessions import index_store as session_store
from jupyter_agent.sessions.index import (
    INDEX_FILE,
    SESSIONS_DIR,
    SearchError,
    SessionIndex,
    match_expression,
)


def index_of(workspace: Path) -> SessionIndex:
    return SessionIndex.of(workspace / SESSIONS_DIR)


def rows(workspace: Path, *, search_first: bool = True) -> list[tuple[str, str, str]]:
    """(session, role, text) of every indexed passage, read straight from the file; after
    a search (which makes the index, or catches it up) unless not ``search_first``."""
    index = index_of(workspace)
    assert index.wait()
    if search_first:
        index.search("anything")
    with sqlite3.connect(index.path) as db:
        return db.execute("SELECT session_id, role, text FROM entries ORDER BY id").fetchall()


def saved(workspace: Path, sid: str, *texts: str, title: str = "") -> Session:
    session = Session.create(workspace, session_id=sid, title=title or texts[0])
    for text in texts:
        session.append(Message.user(text))
    session.close()
    return session


def write_by_hand(workspace: Path, sid: str, lines: list[bytes], title: str = "old") -> None:
    """A session as a version without the index left it: only its two files."""
    folder = workspace / SESSIONS_DIR / sid
    folder.mkdir(parents=True)
    meta = {"session_id": sid, "title": title, "created_at": 1.0, "updated_at": 2.0}
    (folder / "metadata.json").write_text(json.dumps(meta))
    (folder / "history.jsonl").write_bytes(b"".join(line + b"\n" for line in lines))


def record(text: str) -> bytes:
    return MessageAdapter.dump_json(Message.user(text))


# --- built, kept up to date, rebuilt ----------------------------------------------------


def test_sessions_written_before_the_index_existed_are_found(workspace: Path) -> None:
    write_by_hand(workspace, "older", [record("forecast the quarterly revenue")])
    assert not (workspace / SESSIONS_DIR / INDEX_FILE).exists()
    (hit,) = index_of(workspace).search("quarterly revenue")
    assert (hit.session_id, hit.title, hit.role) == ("older", "old", "user")
    assert hit.marked() == "forecast the **quarterly** **revenue**"
    assert hit.parts() == ["forecast the ", "quarterly", " ", "revenue", ""]


async def test_no_index_is_made_until_a_search_which_finds_what_was_written(
    workspace: Path,
) -> None:
    agent = Agent("planner", ScriptedModel([{"text": "Forty rows."}]), workspace=workspace)
    await agent.run("count the rows")
    assert index_of(workspace).wait()
    assert sorted(p.name for p in (workspace / SESSIONS_DIR).iterdir()) == [agent.session.id]
    (hit,) = index_of(workspace).search("forty")
    assert (hit.session_id, hit.role) == (agent.session.id, "assistant")
    assert (workspace / SESSIONS_DIR / INDEX_FILE).exists()


async def test_a_run_is_indexed_as_it_writes_plan_and_summary_included(workspace: Path) -> None:
    (workspace / SESSIONS_DIR).mkdir(parents=True)
    index_of(workspace).rebuild()  # a search made the index: the writer keeps it up to date
    planner = Agent("planner", ScriptedModel([call("submit_plan", **PLAN)]), workspace=workspace)
    await planner.run("plan the cleanup of sales.csv")
    found = rows(workspace, search_first=False)  # the writer thread's work, no catch-up
    assert ("user" in {r[1] for r in found}) and ("plan" in {r[1] for r in found})
    plan = next(text for _, role, text in found if role == "plan")
    assert "Clean the sales data" in plan and "2. Drop duplicate rows" in plan

    actor = Agent(
        "actor",
        ScriptedModel(
            [call("list_directory", path="."), call("task_complete", summary="Removed 42 dupes")]
        ),
        workspace=workspace,
    )
    await actor.run("do it")
    indexed = rows(workspace, search_first=False)
    roles = {(r[1], r[2].split(" ")[0]) for r in indexed if r[0] == actor.session.id}
    assert ("tool call", "list_directory") in roles
    assert ("summary", "Removed") in roles
    result = next(h for h in index_of(workspace).search("dupes"))
    assert (result.session_id, result.role) == (actor.session.id, "summary")
    listed = index_of(workspace).search("list_directory")
    assert {h.role for h in listed} <= {"tool call", "tool result"}


async def test_a_compactions_summary_is_found_as_a_summary(workspace: Path) -> None:
    model = ScriptedModel(
        [{"text": "First."}, {"text": "Second."}],
        summaries=["Earlier the user measured the zephyr latency."],
    )
    agent = Agent("planner", model, workspace=workspace)
    await agent.run("one")
    await agent.run("two")
    await agent.compact().wait()
    [hit] = index_of(workspace).search("zephyr")
    assert hit.role == "summary"


@pytest.mark.parametrize("damage", ["deleted", "truncated", "older schema", "before its id"])
def test_a_missing_damaged_or_older_index_is_rebuilt_from_the_histories(
    workspace: Path, damage: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    saved(workspace, "s1", "tune the gradient boosting model")
    saved(workspace, "s2", "plot the churn cohort")
    path = workspace / SESSIONS_DIR / INDEX_FILE
    before = rows(workspace)
    assert path.exists()
    for suffix in ("-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)
    if damage == "deleted":
        path.unlink()
    elif damage == "garbage":
        path.write_bytes(b"this is not a database" * 500)
    elif damage == "truncated":
        path.write_bytes(path.read_bytes()[:1500])
    elif damage == "before its id":  # as a version that did not mark its files made it
        with sqlite3.connect(path) as db:
            db.execute("PRAGMA application_id = 0")
        db.close()
    else:
        version = session_rows.SCHEMA_VERSION
        monkeypatch.setattr(session_rows, "SCHEMA_VERSION", version + 1)
        monkeypatch.setattr(
            session_rows,
            "SCHEMA",
            session_rows.SCHEMA.replace(
                f"user_version = {version}", f"user_version = {version + 1}"
            ),
        )
    assert [h.session_id for h in index_of(workspace).search("churn cohort")] == ["s2"]
    assert [h.session_id for h in index_of(workspace).search("boosting")] == ["s1"]
    assert sorted(rows(workspace)) == sorted(before)


@pytest.mark.parametrize(
    "planted",
    [
        "CREATE TRIGGER spy AFTER INSERT ON entries BEGIN "
        "INSERT INTO sessions (session_id, title) VALUES ('spy', new.text); END",
        "CREATE VIEW spy AS SELECT * FROM entries",
        "CREATE TABLE spy (x)",
    ],
)
def test_an_index_with_a_schema_of_someone_elses_is_made_again(
    workspace: Path, planted: str
) -> None:
    """The index sits in the workspace, so a cloned repository may ship one (the right
    schema version, plus triggers or views of its own): it is derived, so it is rebuilt
    from the histories, never used."""
    saved(workspace, "s1", "tune the gradient boosting model")
    index_of(workspace).search("boosting")  # the index is made, then planted into
    path = workspace / SESSIONS_DIR / INDEX_FILE
    db = sqlite3.connect(path)
    db.execute(planted)
    db.commit()
    db.close()
    assert [h.session_id for h in index_of(workspace).search("boosting")] == ["s1"]
    db = sqlite3.connect(path)
    try:
        names = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
    finally:
        db.close()
    assert "spy" not in names


def test_a_file_that_is_not_an_index_of_ours_is_left_alone_and_searched_around(
    workspace: Path,
) -> None:
    """Something else at the index's place (not a database, another program's database)
    is not ours to rebuild: it stays byte for byte, and searches run on an index in memory."""
    saved(workspace, "s1", "tune the gradient boosting model")
    path = workspace / SESSIONS_DIR / INDEX_FILE
    for content in (b"this is not a database" * 500, _foreign_database(workspace)):
        path.write_bytes(content)
        index = index_of(workspace)
        assert [h.session_id for h in index.search("boosting")] == ["s1"]
        assert index.refused is not None and str(path) in index.refused
        assert path.read_bytes() == content
        assert [p.name for p in path.parent.iterdir() if p.name.startswith(INDEX_FILE)] == [
            INDEX_FILE
        ]


def _foreign_database(workspace: Path) -> bytes:
    other = workspace.parent / "other.sqlite"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE entries (x)")
        db.execute("INSERT INTO entries VALUES ('precious')")
    db.close()
    return other.read_bytes()


def test_a_torn_or_invalid_session_is_skipped_not_fatal(workspace: Path) -> None:
    write_by_hand(workspace, "good", [record("join the weather table")])
    write_by_hand(workspace, "torn", [record("weather in a torn file"), b'{"role": "us'])
    write_by_hand(workspace, "bad", [b"not json at all", record("weather after a bad line")])
    (workspace / SESSIONS_DIR / "broken").mkdir()
    (workspace / SESSIONS_DIR / "broken" / "metadata.json").write_text("{not json")
    found = {h.session_id for h in index_of(workspace).search("weather")}
    assert found == {"good", "torn", "bad"}


def test_indexing_twice_never_duplicates(workspace: Path) -> None:
    saved(workspace, "s1", "normalise the sensor readings", "then resample them hourly")
    once = rows(workspace)
    index = index_of(workspace)
    with sqlite3.connect(index.path) as db:
        db.execute("UPDATE sessions SET indexed_bytes = 0")  # as if never seen: read again
    index.search("sensor")
    assert rows(workspace) == once
    index.rebuild()
    assert sorted(r for r in rows(workspace)) == sorted(once)


def test_two_writers_on_one_index_neither_fail_nor_duplicate(workspace: Path) -> None:
    for n in range(20):
        saved(workspace, f"s{n}", f"experiment {n} on the lidar point cloud")
    assert index_of(workspace).wait()
    assert not (workspace / SESSIONS_DIR / INDEX_FILE).exists()  # both threads make it
    errors: list[BaseException] = []

    def rebuild() -> None:
        try:
            SessionIndex(workspace / SESSIONS_DIR).search("lidar", limit=50)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=rebuild) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(rows(workspace)) == 20
    assert len(index_of(workspace).search("lidar", limit=50)) == 20


def test_a_failure_to_index_never_breaks_a_session_write(
    workspace: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (workspace / SESSIONS_DIR / INDEX_FILE).mkdir(parents=True)  # SQLite cannot open it
    with caplog.at_level(logging.WARNING, logger="jupyter_agent.sessions.index"):
        session = saved(workspace, "s1", "still saved")
        assert index_of(workspace).wait()
    assert [m.text for m in Session.load(workspace, "s1").history] == ["still saved"]
    assert session.path is not None and (session.path / "metadata.json").exists()
    assert "could not open the session index" in caplog.text
    index = index_of(workspace)
    assert [h.session_id for h in index.search("still")] == ["s1"]  # in memory
    assert index.refused is not None and "is a folder" in index.refused


def test_the_index_holds_no_more_than_the_history_secrets_masked(workspace: Path) -> None:
    key = "sk-ant-api03-" + "Zx9" * 20
    saved(workspace, "s1", f"my key is {key} please use it", "x" * 50_000)
    index_of(workspace).wait()
    (hit,) = index_of(workspace).search("please use")
    assert key not in hit.snippet
    raw = b"".join(p.read_bytes() for p in (workspace / SESSIONS_DIR).glob(INDEX_FILE + "*"))
    assert key.encode() not in raw
    assert max(len(text) for _, _, text in rows(workspace)) <= si.TEXT_CHARS + 1


def test_a_private_key_cut_through_by_the_length_limit_is_still_masked(workspace: Path) -> None:
    body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7" * 10
    pem = f"-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----"
    saved(workspace, "s1", "y" * (si.TEXT_CHARS - 100) + "\n" + pem)
    rows(workspace)
    raw = b"".join(p.read_bytes() for p in (workspace / SESSIONS_DIR).glob(INDEX_FILE + "*"))
    assert b"MIIEvQIBADANBgkq" not in raw


def test_a_deleted_session_is_not_offered(workspace: Path) -> None:
    saved(workspace, "gone", "the anomaly detector")
    saved(workspace, "kept", "the anomaly detector again")
    index_of(workspace).wait()
    shutil.rmtree(workspace / SESSIONS_DIR / "gone")
    assert [h.session_id for h in index_of(workspace).search("anomaly")] == ["kept"]


def test_a_workspace_without_sessions_gets_no_results_and_no_files(workspace: Path) -> None:
    assert index_of(workspace).search("anything") == []
    assert list(workspace.iterdir()) == []


# --- what is typed is text ---------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    [
        '"unbalanced quote',
        'cohort"',
        "cohort*",
        "*",
        "NEAR(cohort churn",
        "NEAR(cohort churn, 2)",
        "-churn",
        "churn NOT cohort",
        "churn OR",
        "AND",
        "((churn",
        "churn)))",
        "col:churn",
        "^churn",
        "{churn cohort}",
        "churn + cohort",
        "",
        "   ",
        "😀",
        "ö" * 3 + "\x00churn",
        "churn " * 20_000,  # 120 KB
        "x" * 100_000,
    ],
)
def test_search_syntax_in_a_query_gets_results_or_a_clear_message(
    workspace: Path, query: str
) -> None:
    saved(workspace, "s1", "churn by cohort, and NOT the AND operator")
    start = time.monotonic()
    if not any(c.isalnum() for c in query):
        with pytest.raises(SearchError, match="Nothing to search for"):
            index_of(workspace).search(query)
    else:
        hits = index_of(workspace).search(query)
        assert all(h.session_id == "s1" for h in hits)
        if "churn" in query.lower():
            assert hits, query
    assert time.monotonic() - start < 5


def test_every_word_is_quoted_and_the_last_may_be_a_prefix() -> None:
    assert match_expression('NEAR("a" bc*') == '"NEAR" "a" "bc"*'
    assert match_expression("(a b") == '"a" "b"'
    assert match_expression("sales data ") == '"sales" "data"'
    assert match_expression("sales data", every=False) == '"sales" OR "data"*'
    assert len(match_expression("w " * 1000).split()) == si.QUERY_TERMS


def test_a_search_over_its_time_budget_is_stopped_with_a_message(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    saved(workspace, "s1", "a slow search")
    index_of(workspace).wait()
    monkeypatch.setattr(session_store, "PROGRESS_STEPS", 1)
    with pytest.raises(SearchError, match=r"took over 0 s and was stopped"):
        index_of(workspace).search("slow", budget=0)


def test_a_hit_names_its_notebook_and_what_its_session_came_to(workspace: Path) -> None:
    """A hit carries the session's notebook, how its last run ended, and its outcome: the
    last completion summary, plan or answer (not a compaction's summary), as the reader
    may see it, cut short."""
    from jupyter_agent.messages import ContextChange, TextBlock, ToolUseBlock

    done = Session.create(workspace, session_id="done", title="tidy the sales")
    done.append(Message.user("tidy the sales table"))
    done.append(
        Message(
            role="assistant",
            content=[
                TextBlock(text="Dropping the duplicates."),
                ToolUseBlock(id="t1", name="task_complete", input={"summary": "Dropped 12 rows."}),
            ],
        )
    )
    done.append(
        Message(
            role="user",
            content=[TextBlock(text="[Summary of the earlier conversation]\n\nthe sales")],
            message_type="context",
            context=ContextChange(compacted_through=None),
        )
    )
    done.metadata.notebook, done.metadata.stop_reason = "sales/a.ipynb", "completed"
    done.save()
    done.close()
    answered = Session.create(workspace, session_id="answered", title="sales median")
    answered.append(Message.user("what is the sales median"))
    answered.append(Message.assistant("The median is " + "4.2 " * 200))
    answered.metadata.stop_reason = "manual_stop"
    answered.save()
    answered.close()
    saved(workspace, "asked", "sales question never answered")

    hits = {h.session_id: h for h in index_of(workspace).search("sales", limit=5)}
    assert (hits["done"].notebook, hits["done"].stop_reason) == ("sales/a.ipynb", "completed")
    assert (hits["done"].outcome_kind, hits["done"].outcome) == ("summary", "Dropped 12 rows.")
    answer = hits["answered"]
    assert (answer.notebook, answer.stop_reason, answer.outcome_kind) == (
        None,
        "manual_stop",
        "answer",
    )
    assert answer.outcome.startswith("The median is 4.2 4.2")
    assert len(answer.outcome) == si.OUTCOME_CHARS + 1 and answer.outcome.endswith("…")
    assert (hits["asked"].outcome, hits["asked"].outcome_kind) == ("", "")
    # As the reader sees it.
    (seen,) = index_of(workspace).search("tidy", visible=lambda t: t.replace("12", "••"))
    assert seen.outcome == "Dropped •• rows."
