"""The session index on disk, opened through the path gate, and searched.

Invariants kept here (the rows are :mod:`.index_rows`'s, the writer thread
:mod:`.index_writer`'s):

- **The index is derived.** ``history.jsonl`` files are the record; the index is rebuilt
  from them when it is missing, damaged, or of an older schema, and catches up on any
  session that grew behind its back (another kernel, an older version, a failed write) by
  comparing each file's size with what it indexed. A torn or invalid line is skipped.
- **Made by the first search, then kept up to date.** A search makes the index from the
  histories; from then on :meth:`SessionIndex.add` only queues the bytes just written for
  the writer thread, which never makes an index: a workspace nobody searches gets no file.
- **Searches run in the caller's thread** (a tool sends them to a worker thread) under a
  time budget: SQLite's progress handler stops a slow query.
- **Only a database of ours is written.** The index is opened through the path gate
  (:meth:`jupyter_agent.workspace.paths.Root.database`), in a sessions folder that admits no link: a
  regular file with one name carrying :data:`~.index_rows.APPLICATION_ID` in its header (or
  one made by an older version, recognised by its exact schema). Anything else at that place
  — a planted link, a hard link, a foreign database, a file that is not a database — is
  refused, named and left alone, and searches run on an index made in memory instead.
- **The query is text, not syntax.** Words are taken out of it and each is quoted, so FTS5
  operators (``NEAR(``, ``*``, ``-``, quotes, parentheses) are matched as words or dropped,
  never parsed; a query with no words gets a clear message.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import sqlite3
import stat
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

from ..errors import AgentError
from ..workspace.paths import SQLITE_HEADER, ForeignDatabase, PathRefused, Root
from . import index_rows as session_rows
from .index_rows import MARK_END, MARK_START, Batch, cut, in_memory, write_batches
from .index_writer import writer

log = logging.getLogger(__name__)

SESSIONS_DIR = Path(".jupyter_agent") / "sessions"
INDEX_FILE = "index.sqlite"
QUERY_CHARS = 2000
QUERY_TERMS = 16
"""Words of a query searched for at most (the rest of a long query is left out)."""
SEARCH_BUDGET = 2.0
"""Seconds a search may take before SQLite is told to stop it."""
PROGRESS_STEPS = 10_000
"""SQLite instructions between two checks of the search's time budget."""
BUSY_TIMEOUT_MS = 5000
"""How long a write waits for another kernel's write to the same index."""
MAX_LIMIT = 50
METADATA_BYTES = 16 << 20
"""Bytes of a session's metadata.json read at most."""
OUTCOME_CHARS = 400
"""Characters of a hit's outcome given (the index holds up to TEXT_CHARS of it)."""
OUTCOME_KINDS = {"summary": "summary", "plan": "plan", "assistant": "answer"}
"""The passages that say what a session came to, by role, and what each is called."""

_WORD = re.compile(r"\w+", re.UNICODE)


class SearchError(AgentError):
    """A search that cannot be made: its message says why, in words for the user."""


class NoIndex(SearchError):
    """There is no index yet, and none was to be made."""


_FTS5_MISSING: str | None = None


def fts5_missing() -> str | None:
    """Why this Python's SQLite cannot index sessions, or ``None`` when it can."""
    global _FTS5_MISSING
    if _FTS5_MISSING is None:
        try:
            with contextlib.closing(sqlite3.connect(":memory:")) as db:
                db.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
            _FTS5_MISSING = ""
        except sqlite3.Error as exc:
            _FTS5_MISSING = (
                f"Searching past sessions needs SQLite's FTS5 extension, which this Python's "
                f"SQLite {sqlite3.sqlite_version} lacks ({exc}). Install a Python built with "
                "FTS5 (python.org, conda and most distributions' builds have it)."
            )
    return _FTS5_MISSING or None


# --- queries --------------------------------------------------------------------------


def match_expression(query: str, *, every: bool = True) -> str:
    """``query`` as an FTS5 expression that is only words: each word quoted (so nothing in
    it is syntax), all of them required (or, not ``every``, any of them), the last one also
    matching as a prefix (for a search box that searches while the user types). Raises
    :class:`SearchError` when the query has no words."""
    words = _WORD.findall(query[:QUERY_CHARS])[:QUERY_TERMS]
    if not words:
        raise SearchError(
            f"Nothing to search for in {cut(query, 60)!r}: give one or more words "
            "(letters or digits); search syntax such as quotes, * or NEAR( is not used."
        )
    terms = [f'"{w}"' for w in words]  # \w+ holds no quote: nothing to escape
    if query.rstrip() == query and len(words[-1]) >= 2:
        terms[-1] += "*"
    return (" " if every else " OR ").join(terms)


@dataclass(frozen=True, slots=True)
class SessionHit:
    """A past session that matches a search, with its best-matching passage."""

    session_id: str
    title: str
    updated_at: float
    """When the session was last written."""
    said_at: float
    """When the matching message was written."""
    role: str
    """Who said the passage: user, assistant, plan, summary, question, tool call, tool result."""
    label: str
    """The tool's name, for a tool call or result."""
    snippet: str
    """The passage, each matched word between :data:`MARK_START` and :data:`MARK_END`."""
    matches: int
    """How many of the session's passages match."""
    notebook: str | None = None
    """The notebook the session worked on, relative to the workspace (None: not known)."""
    stop_reason: str | None = None
    """How its last run ended (completed, manual_stop…; None: it never ended one)."""
    outcome: str = ""
    """What the session came to, cut to :data:`OUTCOME_CHARS`: its last completion summary,
    plan or answer, whichever came last (empty: none yet)."""
    outcome_kind: str = ""
    """What :attr:`outcome` is: summary, plan or answer."""

    def marked(self, start: str = "**", end: str = "**") -> str:
        """The snippet with matches between ``start`` and ``end``, on one line."""
        text = self.snippet.replace(MARK_START, start).replace(MARK_END, end)
        return " ".join(text.split())

    def parts(self) -> list[str]:
        """The snippet cut at its marks: plain text at even places, matches at odd ones."""
        return re.split(f"[{MARK_START}{MARK_END}]", " ".join(self.snippet.split()))


# --- the index ------------------------------------------------------------------------


class SessionIndex:
    """The FTS5 index of the sessions under one sessions folder (see the module's text).

    >>> index = SessionIndex.of(workspace / SESSIONS_DIR)
    >>> index.search("sales cleanup", limit=5)
    """

    _known: ClassVar[dict[Path, SessionIndex]] = {}
    _known_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, root: Path) -> None:
        self.root = root
        """The sessions folder."""
        self.path = root / INDEX_FILE

    @classmethod
    def of(cls, root: Path) -> SessionIndex:
        """The one index of ``root`` in this process (so its writes share one queue)."""
        with cls._known_lock:
            index = cls._known.get(root)
            if index is None:
                index = cls._known[root] = cls(root)
            return index

    # --- writing ----------------------------------------------------------------------

    def add(self, session_id: str, records: bytes, end: int, metadata: bytes | None = None) -> None:
        """Index ``records``, just appended to the session's history so that the file now
        ends at byte ``end``, and its ``metadata`` (``metadata.json``'s bytes) when they
        changed. Returns at once: the writer thread does the work."""
        if fts5_missing():
            return
        writer.put(self, Batch(session_id, records, end, metadata))

    def wait(self, timeout: float = 10.0) -> bool:
        """Wait until everything queued so far is indexed; ``False`` if ``timeout`` passed."""
        return writer.wait(timeout)

    def write_queued(self, batches: Sequence[Batch]) -> None:
        """The writer thread's: write ``batches`` if a search made the index; a failure
        is logged (the next search catches up), never raised."""
        try:
            db = self.connect(create=False)
        except NoIndex:
            return  # none searched here yet: the first search builds it from the files
        except Exception as exc:
            log.warning("could not open the session index %s: %s", self.path, exc)
            return
        try:
            write_batches(db, batches)
        except Exception as exc:  # never the session's problem: logged, caught up later
            log.warning("could not index sessions in %s: %s", self.path, exc)
        finally:
            db.close()

    # --- opening, rebuilding, catching up ---------------------------------------------

    def folder(self, *, create: bool = False) -> Root:
        """The sessions folder through the path gate (a link there is refused)."""
        return sessions_folder(self.root, create=create)

    def connect(self, *, create: bool = True, folder: Root | None = None) -> sqlite3.Connection:
        """A connection to an index in the current schema: made when missing (unless not
        ``create``: the writer only keeps an index a search made up to date), rebuilt when
        damaged or older. Raises :class:`SearchError` when it cannot be, or is missing
        and not to be made, and :class:`~jupyter_agent.workspace.paths.PathRefused` (a
        :class:`~jupyter_agent.workspace.paths.ForeignDatabase`, a link) when the file there is not
        ours to open: it is left alone."""
        problem = fts5_missing()
        if problem:
            raise SearchError(problem)
        try:
            folder = folder or self.folder(create=create)
        except (FileNotFoundError, NotADirectoryError):
            raise NoIndex(f"There is no session index {self.path} yet.") from None
        try:
            return self._open_waiting(folder, create)
        except sqlite3.OperationalError as exc:  # locked, read-only, no space: not damage
            if not create and not folder.exists(INDEX_FILE):
                raise NoIndex(f"There is no session index {self.path} yet.") from None
            raise SearchError(f"The session index {self.path} cannot be opened: {exc}") from exc
        except sqlite3.DatabaseError as exc:  # malformed, though ours: derived, so rebuilt
            log.warning("the session index %s is damaged (%s): rebuilding it", self.path, exc)
            self._remove(folder)
            try:
                return self._open_waiting(folder, create)
            except sqlite3.Error as again:
                raise SearchError(
                    f"The session index {self.path} cannot be made: {again}"
                ) from again

    def _open_waiting(self, folder: Root, create: bool) -> sqlite3.Connection:
        """:meth:`_open`, tried again while another kernel holds the index: SQLite answers
        some lock conflicts (two connections making the file at once) at once with "locked"
        rather than waiting its busy timeout."""
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        while True:
            try:
                return self._open(folder, create)
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def _open(self, folder: Root, create: bool) -> sqlite3.Connection:
        # Without `create`, a missing file is an error rather than a new one, also if the
        # workspace is deleted between a check and the open.
        try:
            db = folder.database(
                INDEX_FILE,
                application_id=session_rows.APPLICATION_ID,
                create=create,
                timeout=BUSY_TIMEOUT_MS / 1000,
            )
        except FileNotFoundError:
            raise sqlite3.OperationalError("unable to open database file") from None
        except ForeignDatabase:
            if not _older_index_of_ours(folder):
                raise
            # An index an older version made (no application id yet): derived, so made again.
            log.info("the session index %s predates its application id: rebuilding", self.path)
            self._remove(folder)
            db = folder.database(
                INDEX_FILE,
                application_id=session_rows.APPLICATION_ID,
                create=True,
                timeout=BUSY_TIMEOUT_MS / 1000,
            )
        try:
            db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":  # kept in the file
                db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
            if not session_rows.is_current(db):
                self._create(db)
            return db
        except BaseException:
            db.close()
            raise

    def _create(self, db: sqlite3.Connection) -> None:
        """Make the schema, dropping whatever else the file holds (an older schema, triggers
        or views someone added to our file), in one transaction; another kernel or thread
        doing the same waits, then finds it made. Only ever on a file of ours (see
        :meth:`_open`): the file stays, so no one else's connection loses it."""
        with db:
            db.execute("BEGIN IMMEDIATE")
            if session_rows.is_current(db):
                return
            current = db.execute("PRAGMA user_version").fetchone()[0]
            if current > session_rows.SCHEMA_VERSION:
                raise SearchError(
                    f"The session index {self.path} was made by a newer jupyter_agent "
                    f"(schema {current}); delete it to let this version rebuild it."
                )
            log.info("the session index %s is not in the current schema: rebuilding", self.path)
            tables = db.execute(
                "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'trigger', 'view') "
                "AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'entries_fts_%'"
            ).fetchall()
            for kind, name in tables:
                db.execute(f'DROP {kind.upper()} IF EXISTS "{name}"')
            for statement in session_rows.statements(session_rows.SCHEMA):
                db.execute(statement)

    def _remove(self, folder: Root) -> None:
        """Remove the index and its side files (called only for a file of ours)."""
        for suffix in ("", "-wal", "-shm", "-journal"):
            with contextlib.suppress(FileNotFoundError):
                folder.remove(INDEX_FILE + suffix)

    def catch_up(self, db: sqlite3.Connection, folder: Root | None = None) -> int:
        """Index what the histories on disk hold beyond what the index has seen (every
        session, for a new index); returns how many sessions were read."""
        folder = folder or self.folder()
        seen = dict(db.execute("SELECT session_id, indexed_bytes FROM sessions").fetchall())
        read = 0
        for sid in _session_folders(folder):
            try:
                size = folder.stat((sid, "history.jsonl")).st_size
            except FileNotFoundError:
                size = 0
            except OSError:
                continue  # planted, or changing: skipped
            done = seen.get(sid)
            if done is not None and done == size:
                continue
            start = done if done and done < size else 0
            try:
                records = _read_from(folder, sid, start)
                meta = folder.read((sid, "metadata.json"), limit=METADATA_BYTES)
                json.loads(meta)
            except (OSError, ValueError):
                continue  # being created, damaged, or not a regular file: skipped, not fatal
            try:
                write_batches(db, [Batch(sid, records, start + len(records), meta)])
            except (ValueError, TypeError) as exc:
                log.warning("session %s could not be indexed: %s", sid, exc)
                continue
            read += 1
        return read

    # --- searching --------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        limit: int = 10,
        exclude: Iterable[str] = (),
        budget: float = SEARCH_BUDGET,
        visible: Callable[[str], str] | None = None,
    ) -> list[SessionHit]:
        """Past sessions matching ``query``, best first, each with its best passage, its
        notebook, and what it came to (its outcome: the last summary, plan or answer).

        ``visible``: the passages as the reader may see them (a model: secrets hidden);
        then a passage matches, ranks and is quoted only by what it shows, so no answer
        tells of what it hides (:func:`_as_seen`).

        Blocking (SQLite, and a catch-up read of new history): call it from a thread when
        on an event loop. Raises :class:`SearchError` with a message for the user when the
        query has no words, the index cannot be opened, or the search runs over ``budget``
        seconds. When the index file is not ours to open (see the module's text), the
        search runs on an index made in memory, and :attr:`refused` says why."""
        expressions = [match_expression(query)]
        if " " in expressions[0]:  # no passage has every word: passages with any, ranked
            expressions.append(match_expression(query, every=False))
        limit = max(1, min(limit, MAX_LIMIT))
        try:
            folder = self.folder()
        except (FileNotFoundError, NotADirectoryError):
            return []  # no sessions yet: nothing to find, and nothing is made
        except PathRefused as exc:
            raise SearchError(f"Past sessions cannot be searched: {exc}") from None
        left_out = set(exclude)
        try:
            db = self.connect(folder=folder)
            self.refused = None
        except PathRefused as exc:
            self.refused = str(exc)
            log.warning("searching sessions in memory: %s", exc)
            db = in_memory()
        deadline = float("inf")
        try:
            self.catch_up(db, folder)  # bounded by what was written, not by the query: no budget
            deadline = time.monotonic() + budget
            db.set_progress_handler(lambda: int(time.monotonic() > deadline), PROGRESS_STEPS)
            for expression in expressions:
                rows = db.execute(
                    "SELECT e.session_id, e.role, e.label, e.created_at, "
                    f"snippet(entries_fts, 0, '{MARK_START}', '{MARK_END}', '…', 16), "
                    "s.title, s.updated_at, s.notebook, s.stop_reason, e.text "
                    "FROM entries_fts JOIN entries e ON e.id = entries_fts.rowid "
                    "JOIN sessions s ON s.session_id = e.session_id "
                    "WHERE entries_fts MATCH ? ORDER BY bm25(entries_fts) LIMIT ?",
                    (expression, (limit + len(left_out)) * 20),
                ).fetchall()
                if visible is not None:
                    rows = _as_seen(rows, expression, visible, deadline)
                if rows:
                    break
            hits = self._best_per_session(rows, left_out, limit, folder)
            return [_with_outcome(db, hit, visible) for hit in hits]
        except sqlite3.OperationalError as exc:
            if "interrupted" in str(exc) or time.monotonic() > deadline:
                raise SearchError(
                    f"The search for {cut(query, 60)!r} took over {budget:g} s and was "
                    "stopped: search for fewer or longer words."
                ) from None
            raise SearchError(f"The search for {cut(query, 60)!r} failed: {exc}") from exc
        except sqlite3.DatabaseError as exc:
            if self.refused is None:
                self._remove(folder)  # ours, damaged under our feet: the next search rebuilds it
            raise SearchError(f"The session index was damaged and will be rebuilt: {exc}") from exc
        finally:
            db.close()

    refused: str | None = None
    """Why the last search ran on an index made in memory (the file was not ours), or None."""

    def _best_per_session(
        self, rows: Sequence[tuple[Any, ...]], left_out: set[str], limit: int, folder: Root
    ) -> list[SessionHit]:
        hits: dict[str, SessionHit] = {}
        counts: dict[str, int] = {}
        for sid, role, label, said_at, snippet, title, updated_at, notebook, ended, *_ in rows:
            if sid in left_out:
                continue
            counts[sid] = counts.get(sid, 0) + 1
            if sid not in hits:
                if not _is_folder(folder, sid):  # deleted since it was indexed
                    left_out.add(sid)
                    continue
                hits[sid] = SessionHit(
                    sid, title, updated_at, said_at, role, label, snippet, 0, notebook, ended
                )
        return [replace(h, matches=counts[h.session_id]) for h in hits.values()][:limit]

    def rebuild(self) -> int:
        """Throw the index away and make it again from the histories; returns how many
        sessions it holds. An index file that is not ours is left alone (refused)."""
        folder = self.folder(create=True)
        self.connect(folder=folder).close()  # ours, or made now: only then is it removed
        self._remove(folder)
        db = self.connect(folder=folder)
        try:
            return self.catch_up(db, folder)
        finally:
            db.close()


def _with_outcome(
    db: sqlite3.Connection, hit: SessionHit, visible: Callable[[str], str] | None
) -> SessionHit:
    """``hit`` with what its session came to: the last completion summary (not a
    compaction's), plan or answer it holds, as the reader may see it, cut short."""
    found = db.execute(
        "SELECT role, text FROM entries WHERE session_id = ? AND (role IN ('assistant', 'plan') "
        "OR (role = 'summary' AND label = 'task_complete')) "
        "ORDER BY created_at DESC, id DESC LIMIT 1",
        (hit.session_id,),
    ).fetchone()
    if found is None:
        return hit
    role, text = found
    shown = visible(text) if visible is not None else text
    outcome = cut(" ".join(shown.split()), OUTCOME_CHARS)
    return replace(hit, outcome=outcome, outcome_kind=OUTCOME_KINDS[role])


def _as_seen(
    rows: Sequence[tuple[Any, ...]],
    expression: str,
    visible: Callable[[str], str],
    deadline: float,
) -> list[tuple[Any, ...]]:
    """The found ``rows`` (their text last) matched again as the reader sees their text:
    the ones that still match, best first by what they show, each quoted from it."""
    seen = sqlite3.connect(":memory:")
    try:
        seen.set_progress_handler(lambda: int(time.monotonic() > deadline), PROGRESS_STEPS)
        seen.execute(
            "CREATE VIRTUAL TABLE passages USING fts5(text, "
            "tokenize='porter unicode61 remove_diacritics 2')"
        )
        seen.executemany(
            "INSERT INTO passages (rowid, text) VALUES (?, ?)",
            ((i, visible(row[-1])) for i, row in enumerate(rows)),
        )
        found = seen.execute(
            f"SELECT rowid, snippet(passages, 0, '{MARK_START}', '{MARK_END}', '…', 16) "
            "FROM passages WHERE passages MATCH ? ORDER BY bm25(passages)",
            (expression,),
        ).fetchall()
    finally:
        seen.close()
    return [(*rows[i][:4], snippet, *rows[i][5:]) for i, snippet in found]


def sessions_folder(path: Path, *, create: bool) -> Root:
    """The sessions folder ``path`` (``<workspace>/.jupyter_agent/sessions``) through the
    path gate: reached from the workspace without following a link, admitting none inside
    (made with the folders on the way when ``create``)."""
    tail = SESSIONS_DIR.parts
    if path.parts[-len(tail) :] == tail:
        base, inner = path.parents[len(tail) - 1], tail
    else:
        base, inner = path.parent, (path.name,)
    return Root(base).subroot(inner, create=create, links="none")


def _session_folders(folder: Root) -> Iterator[str]:
    """The sessions in ``folder`` (real folders, not links, holding a metadata.json)."""
    try:
        entries = folder.entries()
    except FileNotFoundError:
        return
    for entry in entries:
        if entry.is_dir() and folder.exists((entry.name, "metadata.json")):
            yield entry.name


def _is_folder(folder: Root, name: str) -> bool:
    try:
        return stat.S_ISDIR(folder.stat(name, follow=False).st_mode)
    except OSError:
        return False


def _older_index_of_ours(folder: Root) -> bool:
    """Whether the index file is one an older jupyter_agent made: a SQLite file with one name
    and no application id whose schema is exactly ours (read without changing it)."""
    try:
        info = folder.stat(INDEX_FILE, follow=False)
        fd = folder.open_file(INDEX_FILE)
    except OSError:
        return False
    try:
        if info.st_nlink > 1:
            return False
        header = os.pread(fd, 100, 0)
        if not header.startswith(SQLITE_HEADER) or header[68:72] != b"\0\0\0\0":
            return False
        via = f"/proc/self/fd/{fd}"
        if not os.path.exists(via):
            return False
        # immutable: SQLite reads the file as it is and creates no side file.
        db = sqlite3.connect(f"file:{via}?mode=ro&immutable=1", uri=True)  # path gate: via its fd
        try:
            return session_rows.is_current(db)
        finally:
            db.close()
    except sqlite3.Error:
        return False
    finally:
        os.close(fd)


def _read_from(folder: Root, session_id: str, start: int) -> bytes:
    """A session's history from byte ``start`` (a line's start) on, up to its last whole line."""
    try:
        data, _ = folder.read_head((session_id, "history.jsonl"), None, start=start)
    except FileNotFoundError:
        return b""
    return data[: data.rfind(b"\n") + 1]


def index_records(
    root: Path | None, session_id: str, records: bytes, end: int, metadata: bytes | None
) -> None:
    """The hook a session calls after a write (see :meth:`SessionIndex.add`)."""
    if root is not None:
        SessionIndex.of(root).add(session_id, records, end, metadata)
