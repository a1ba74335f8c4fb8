"""Sessions on disk: ``<workspace>/.jupyter_agent/sessions/<id>/``.

``metadata.json`` is rewritten atomically (temp file + rename) so a crash leaves
the old or the new version, never half of one. ``history.jsonl`` is append-only,
one message per line, each batch of records appended whole; a torn last line (a crash
mid-write) is skipped on load. Nothing secret is ever written: messages and metadata only.

Every file here is opened through the path gate (:mod:`jupyter_agent.workspace.paths`), from the
workspace down, in a folder that admits no link: a cloned repository that plants
``.jupyter_agent/sessions`` (or a session's files) as links gets a refusal, never our writes
and never another project's conversations. A session that cannot be kept on disk for that
reason is kept in memory, and :attr:`Session.unsaved` says why. Session files are read only
when they are regular files, and within :data:`METADATA_LIMIT` / :data:`HISTORY_LIMIT` bytes.

Inside an event loop the writes wait for the loop's next turn, so what a step records
(the reply, the tool results, the metadata) goes to disk in one batch when the run next
waits. A run also holds the writes while it sends a request (:meth:`Session.hold_writes`)
and lets them go once the request is out: the disk work then overlaps with the model
composing its answer instead of delaying the question. A run's end writes at once.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import json
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from ..errors import SessionError
from ..messages import STOPPED_NOTE, Message, MessageAdapter, MessageType, encodable, new_id
from ..models import Usage
from ..plans import Plan, StepProgress
from ..workspace.paths import FileTooLarge, PathRefused, Root
from .context_view import ContextView, ModelView
from .index import SESSIONS_DIR, index_records, sessions_folder
from .notebooks import moved_note

log = logging.getLogger(__name__)

HOLD_LIMIT = 0.5
"""Seconds writes are held at most: a request that cannot go out (no connection yet, the
SDK backing off before a retry) does not keep the records in memory for longer."""
FORMAT_VERSION = "1.0"
METADATA_LIMIT = 16 << 20
"""Bytes of a ``metadata.json`` read at most (a plan and counters: far less in practice)."""
HISTORY_LIMIT = 1 << 30
"""Bytes of a ``history.jsonl`` loaded at most."""


class NotebookMove(BaseModel):
    """The session went on in another notebook than the one it worked on (see
    :mod:`.notebooks`): the cell ids of its earlier messages are that notebook's."""

    from_notebook: str
    """The notebook it worked on before, relative to the workspace."""
    messages: int
    """How many messages of the history were held there."""
    told: bool = False
    """The model was told: its next task began with :func:`~.notebooks.moved_note`."""


class SessionMetadata(BaseModel):
    session_id: str
    agent_type: str = "planner"
    """The role the session was last run as."""
    title: str = ""
    parent_session_id: str | None = None
    parent_tool_use_id: str | None = None
    child_session_ids: list[str] = Field(default_factory=list)
    model: str = ""
    provider: str = ""
    model_string: str | None = None
    """The model as chosen (``gateway:gpt-4o``); empty when no string can make it again
    (a replay, a ``base_url`` of the caller's); None in sessions saved before it was kept."""
    created_at: float = Field(default_factory=time.time)
    updated_at: float = Field(default_factory=time.time)
    state: str = "idle"
    stop_reason: str | None = None
    runs: int = 0
    usage: Usage = Field(default_factory=Usage)
    plan: Plan | None = None
    plan_progress: list[StepProgress] = Field(default_factory=list)
    notebook: str | None = None
    """The notebook the session works on, relative to the workspace (POSIX); empty when it
    has none; None in sessions saved before it was kept ("notebook unknown")."""
    moved: NotebookMove | None = None
    """The last time the session went on in another notebook (None: never)."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    format_version: str = FORMAT_VERSION


class Session:
    """A conversation and its metadata, persisted under a workspace (or kept in memory)."""

    def __init__(
        self, metadata: SessionMetadata, history: list[Message], root: Path | None
    ) -> None:
        self.metadata = metadata
        self.history = history
        self.root = root
        """The sessions folder; None for a session kept in memory only."""
        self._log: Any = None
        self._model_view = ModelView()
        self._unwritten: list[Message] = []
        self._metadata_changed = False
        self._write_scheduled = False
        self._hold: object | None = None
        self._folder: Root | None = None
        """The sessions folder, opened through the path gate when first written or read."""
        self.unsaved: str | None = None
        """Why a session meant to be kept on disk is kept in memory only (None: it is kept,
        or was never meant to be)."""

    # --- creation and lookup ----------------------------------------------------

    @classmethod
    def create(
        cls,
        workspace: Path | None,
        *,
        persist: bool = True,
        session_id: str | None = None,
        **fields: Any,
    ) -> Session:
        """A new session, kept under ``workspace`` (in memory only without one, or when its
        sessions folder is refused: see :attr:`unsaved`)."""
        sid = session_id or new_id()
        root = (workspace / SESSIONS_DIR) if (persist and workspace is not None) else None
        session = cls(SessionMetadata(session_id=sid, **fields), [], root)
        if root is not None:
            try:
                folder = session._store(create=True)
                if folder.exists(sid):
                    raise SessionError(f"session {sid} already exists in {root}")
                session.save(now=True)  # listed and loadable from the moment it exists
            except PathRefused as exc:
                log.warning("session %s is kept in memory only: %s", sid, exc)
                session.root, session._folder = None, None
                session.unsaved = str(exc)
        return session

    @classmethod
    def load(cls, workspace: Path, session_id: str) -> Session:
        root = workspace / SESSIONS_DIR
        try:
            folder = sessions_folder(root, create=False)
            raw = folder.read((session_id, "metadata.json"), limit=METADATA_LIMIT)
            metadata = SessionMetadata.model_validate_json(raw)
            history = _read_history(folder, session_id)
        except (FileNotFoundError, NotADirectoryError):
            known = ", ".join(m.session_id for m in cls.list(workspace)[:10]) or "none"
            raise SessionError(f"no session {session_id!r} in {root} (known: {known})") from None
        except ValidationError as exc:
            raise SessionError(
                f"{root / session_id / 'metadata.json'} is not valid: {exc}"
            ) from exc
        except (PathRefused, FileTooLarge) as exc:
            raise SessionError(f"session {session_id!r} cannot be read: {exc}") from None
        session = cls(metadata, history, root)
        session._folder = folder
        return session

    @staticmethod
    def metadata_of(workspace: Path, session_id: str) -> SessionMetadata:
        """A saved session's metadata alone (its history is not read); raises
        :class:`SessionError` when there is no such session or it cannot be read."""
        root = workspace / SESSIONS_DIR
        try:
            folder = sessions_folder(root, create=False)
            raw = folder.read((session_id, "metadata.json"), limit=METADATA_LIMIT)
            return SessionMetadata.model_validate_json(raw)
        except (FileNotFoundError, NotADirectoryError):
            raise SessionError(f"no session {session_id!r} in {root}") from None
        except (ValidationError, PathRefused, FileTooLarge, OSError) as exc:
            raise SessionError(f"session {session_id!r} cannot be read: {exc}") from None

    # From here on `list` in the class body is this method: annotations say builtins.list.
    @staticmethod
    def list(workspace: Path) -> builtins.list[SessionMetadata]:
        """Sessions under ``workspace``, most recently updated first. A session whose files
        are not regular files (or are links) is not listed."""
        try:
            folder = sessions_folder(workspace / SESSIONS_DIR, create=False)
            entries = folder.entries()
        except (FileNotFoundError, NotADirectoryError):
            return []
        except PathRefused as exc:
            log.warning("no sessions listed: %s", exc)
            return []
        found = []
        for entry in entries:
            if not entry.is_dir():
                continue
            try:
                raw = folder.read((entry.name, "metadata.json"), limit=METADATA_LIMIT)
                found.append(SessionMetadata.model_validate_json(raw))
            except (OSError, ValidationError):
                continue  # a session being created, damaged, or planted: not listable
        return sorted(found, key=lambda m: m.updated_at, reverse=True)

    # --- state ------------------------------------------------------------------

    @property
    def id(self) -> str:
        return self.metadata.session_id

    @property
    def path(self) -> Path | None:
        return None if self.root is None else self.root / self.id

    def _store(self, *, create: bool) -> Root:
        """The sessions folder through the path gate (opened once, then pinned)."""
        if self._folder is None:
            assert self.root is not None
            self._folder = sessions_folder(self.root, create=create)
        return self._folder

    @property
    def usage(self) -> Usage:
        return self.metadata.usage

    def api_messages(self) -> builtins.list[dict[str, Any]]:
        """What the model sees of the history, as the Messages API takes it: cleared
        results as stubs, compacted turns as their summary (see :mod:`..context_view`)."""
        return self._model_view.api_messages(self.history)

    def view(self) -> ContextView:
        """What the model sees of the history, as messages."""
        return self._model_view(self.history)

    def append(self, message: Message) -> None:
        """Add a message to the history, and soon to ``history.jsonl`` (see :meth:`flush`)."""
        self.history.append(message)
        if self.root is not None:
            self._unwritten.append(message)
            self._write_soon()

    def last_sent(self) -> Message | None:
        """The last message the user sent (not a tool result), if any."""
        for message in reversed(self.history):
            if message.role == "user" and not message.tool_results and message.text.strip():
                return message
        return None

    def work_on(self, notebook: str, *, renamed: bool = False) -> str | None:
        """Record that the session works on ``notebook`` (relative to the workspace; empty:
        none) from now on. When its conversation was held in another notebook (not the
        same one ``renamed``), the move is recorded (:attr:`SessionMetadata.moved`) and that
        notebook's name returned."""
        meta = self.metadata
        before = meta.notebook
        if before == notebook:
            return None
        meta.notebook = notebook
        moved = None
        if before and notebook and self.history and not renamed:
            meta.moved = NotebookMove(from_notebook=before, messages=len(self.history))
            moved = before
        try:
            self.save(now=True)  # listed as this notebook's from now on
        except OSError as exc:  # kept, and written at the next write
            log.warning("could not write session %s: %s", self.id, exc)
        return moved

    def begin_turn(
        self,
        task: str,
        *,
        model: tuple[str, str, str],
        kind: MessageType | None,
    ) -> None:
        """Record a run starting on ``task`` with ``model`` (name, provider, model string):
        the session is running, titled after its first task, and ``task`` is the user's
        message of ``kind`` (``None``: no turn of the conversation, nothing is added). A
        task after a run that did not complete says so first, so the model knows; so does
        the first task after the session went on in another notebook."""
        meta = self.metadata
        text = task.strip()
        if meta.stop_reason not in (None, "completed"):
            text = f"{STOPPED_NOTE}\n\n{text}"
        moved = meta.moved
        if moved is not None and not moved.told and kind is not None:
            text = f"{moved_note(moved.from_notebook, meta.notebook or '')}\n\n{text}"
            moved.told = True
        if not meta.title and kind is not None:
            meta.title = task.strip().splitlines()[0][:80]
        meta.model, meta.provider, meta.model_string = model
        meta.state = "running"
        self.save()
        if kind is not None:
            self.append(Message.user(text, message_type=kind))

    def save(self, *, now: bool = False) -> None:
        """Mark the metadata changed: ``metadata.json`` is rewritten soon (see :meth:`flush`),
        or at once with everything unwritten if ``now`` (raising ``OSError`` as flush does)."""
        self.metadata.updated_at = time.time()
        if self.root is not None:
            self._metadata_changed = True
            if now:
                self.flush()
            else:
                self._write_soon()

    def hold_writes(self, limit: float = HOLD_LIMIT) -> Callable[[], None]:
        """Keep what is recorded in memory, unwritten, until the returned function is
        called (then it is written at once; calling it again does nothing) or ``limit``
        seconds have passed. A run holds the writes while a request goes out and releases
        them once it is sent. A later hold, or a :meth:`flush`, ends this one."""
        hold = self._hold = object()

        def release() -> None:
            if self._hold is hold:
                self._hold = None
                self._flush_later()

        with contextlib.suppress(RuntimeError):  # no loop: only an explicit release
            asyncio.get_running_loop().call_later(limit, release)
        return release

    def _write_soon(self) -> None:
        if self._write_scheduled or self._hold is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.flush()  # no loop: nothing to overlap with
            return
        self._write_scheduled = True
        loop.call_soon(self._flush_later)

    def _flush_later(self) -> None:
        if self._hold is not None:  # whoever holds the writes lets them go
            self._write_scheduled = False
            return
        try:
            self.flush()
        except OSError as exc:  # kept, and tried again at the next write or the run's end
            log.warning("could not write session %s: %s", self.id, exc)
        except Exception:  # the same, for a fault of ours: it must not end the run
            log.exception("could not write session %s", self.id)

    def flush(self) -> None:
        """Write what changed now: new records to ``history.jsonl`` (appended in order and
        flushed), then ``metadata.json`` (atomically). Raises ``OSError`` if the disk
        refuses; the unwritten part is kept for the next try."""
        self._write_scheduled = False
        self._hold = None
        if self.root is None:
            return
        store = self._store(create=True)
        records, end, metadata = b"", 0, None
        if self._unwritten:
            if self._log is None:
                self._log = _open_log(store, self.id)
            records = b"".join(map(_record, self._unwritten))
            _append_whole(self._log, records)
            end = self._log.tell()
            self._unwritten.clear()
        if self._metadata_changed:
            metadata = self.metadata.model_dump_json(indent=1).encode()
            # Atomic, so a crash never leaves half a file; not fsynced, like history.jsonl:
            # it is rewritten at every run's start and end, and an fsync there would cost
            # each run milliseconds to guard against a power cut, not a crash.
            store.write((self.id, "metadata.json"), metadata, make_folders=True, durable=False)
            self._metadata_changed = False
        if records or metadata is not None:
            self._index(records, end, metadata)

    def _index(self, records: bytes, end: int, metadata: bytes | None) -> None:
        """Hand what was just written to the search index (queued: a thread indexes it).
        Whatever goes wrong there is logged; the write itself has succeeded."""
        try:
            index_records(self.root, self.id, records, end, metadata)
        except Exception:
            log.exception("could not queue session %s for the search index", self.id)

    def close(self) -> None:
        self.flush()
        if self._log is not None:
            self._log.close()
            self._log = None


def _record(message: Message) -> bytes:
    """A line of history.jsonl."""
    try:
        return MessageAdapter.dump_json(message) + b"\n"
    except ValueError:  # a lone surrogate in its text: stored as U+FFFD (see encodable)
        data = MessageAdapter.dump_python(message, mode="json")
        return encodable(json.dumps(data, ensure_ascii=False)).encode() + b"\n"


def _open_log(store: Root, session_id: str) -> Any:
    """Open history.jsonl for appending, first cutting off a torn last line."""
    store.make_folder(session_id)
    # Unbuffered: each write goes straight to the file, so a failed one can be undone.
    log = store.append((session_id, "history.jsonl"))
    log.seek(0)
    data = log.read()
    if data and not data.endswith(b"\n"):
        log.truncate(data.rfind(b"\n") + 1)
    log.seek(0, os.SEEK_END)
    return log


def _append_whole(log: Any, data: bytes) -> None:
    """Append ``data`` entirely or not at all: a write the disk refuses half-way is cut
    off again, so a retry cannot leave a torn record in the middle of the history."""
    start = log.seek(0, os.SEEK_END)
    try:
        view = memoryview(data)
        while view:
            view = view[log.write(view) :]
    except BaseException:
        with contextlib.suppress(OSError):
            log.truncate(start)
        raise


def _read_history(store: Root, session_id: str) -> list[Message]:
    path = store.absolute((session_id, "history.jsonl"))
    try:
        lines = store.read((session_id, "history.jsonl"), limit=HISTORY_LIMIT).splitlines()
    except FileNotFoundError:
        return []
    history = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            history.append(MessageAdapter.validate_json(line))
        except (ValidationError, json.JSONDecodeError) as exc:
            if number == len(lines):
                break  # torn last record from a crash mid-write: the rest is intact
            raise SessionError(f"{path}:{number} is not a valid message: {exc}") from exc
    return history
