"""What the session index holds: its rows, cut from the messages, and its schema.

Invariants kept here:

- **Never more than the history.** A row is a piece of one message's content block, cut to
  a few hundred or thousand characters and run through :func:`mask_secrets` before the cut
  (a secret cut through is still seen whole and masked).
- **Idempotent.** A row is keyed by (session, message id, block): writing a batch twice adds
  nothing, so two kernels writing one index cannot duplicate a passage.
- **One schema, and nothing else.** An index holds exactly what :data:`SCHEMA` makes
  (:func:`is_current`); anything more or older is dropped and made again, because the
  index is derived from the histories.
"""

from __future__ import annotations

import functools
import json
import re
import sqlite3
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from ..messages import (
    STOPPED_NOTE,
    Message,
    MessageAdapter,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from ..secrets.shapes import mask_secrets
from .notebooks import without_notes

SCHEMA_VERSION = 2
"""Kept in ``PRAGMA user_version``; an index of an older version is rebuilt (2: sessions
name their notebook and how their last run ended)."""
APPLICATION_ID = 0x4A414749
"""Kept in the database header (``PRAGMA application_id``, "JAGI"): marks the file as ours."""

TEXT_CHARS = 4000
"""Characters of one message's text (or a plan, a summary) indexed; the rest is not."""
TOOL_INPUT_CHARS = 200
RESULT_CHARS = 300
"""Characters of a tool result indexed: enough to find it, never the whole output."""
SECRET_WINDOW = 4096
"""Characters past a cut that are masked with the text, so a secret cut through is seen whole."""
MARK_START, MARK_END = "\x02", "\x03"
"""Around each matched word in a snippet (control characters: never in indexed text)."""

_MARKS = re.compile(f"[{MARK_START}{MARK_END}]")

SCHEMA = f"""
CREATE TABLE sessions (
    session_id TEXT PRIMARY KEY,
    title TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL DEFAULT 0,
    updated_at REAL NOT NULL DEFAULT 0,
    agent_type TEXT NOT NULL DEFAULT '',
    parent_session_id TEXT,
    notebook TEXT,
    stop_reason TEXT,
    indexed_bytes INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE entries (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    part INTEGER NOT NULL,
    role TEXT NOT NULL,
    label TEXT NOT NULL DEFAULT '',
    ref TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL,
    text TEXT NOT NULL,
    UNIQUE (session_id, message_id, part)
);
CREATE INDEX entries_ref ON entries (session_id, ref);
CREATE VIRTUAL TABLE entries_fts USING fts5(
    text, content='entries', content_rowid='id',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER entries_added AFTER INSERT ON entries BEGIN
    INSERT INTO entries_fts (rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER entries_removed AFTER DELETE ON entries BEGIN
    INSERT INTO entries_fts (entries_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;
PRAGMA user_version = {SCHEMA_VERSION};
PRAGMA application_id = {APPLICATION_ID};
"""


# --- what is indexed ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Row:
    message_id: str
    part: int
    role: str
    """user, assistant, plan, summary, question, tool call, tool result."""
    label: str
    """The tool's name, for tool calls and results."""
    ref: str
    """The tool_use id, which ties a result to its call."""
    created_at: float
    text: str


def rows_of(message: Message) -> Iterator[Row]:
    """What of ``message`` the index holds, one row per content block worth finding."""
    if message.message_type == "execute_plan":
        return  # the prompt a button sent, not the user's words: every executed plan has it
    # A context record holds a compaction's summary (the model's words) or nothing.
    speaker = "summary" if message.message_type == "context" else message.role
    for part, block in enumerate(message.content):
        row = _row(message, part, block, speaker)
        if row is not None and row.text.strip():
            yield row


def _row(message: Message, part: int, block: object, speaker: str) -> Row | None:
    def make(role: str, text: str, limit: int, label: str = "", ref: str = "") -> Row:
        # Masked before it is cut, so a cut through a secret cannot hide it from the mask
        # (a window past the cut, wide enough for a private key, keeps the work bounded).
        clean = cut(mask_secrets(_MARKS.sub("", text[: limit + SECRET_WINDOW])), limit)
        return Row(message.id, part, role, label, ref, message.created_at, clean)

    if isinstance(block, TextBlock):
        if block.text.strip() == STOPPED_NOTE:
            return None
        # The notes a session puts before a task are not the user's words.
        text = without_notes(block.text) if speaker == "user" else block.text
        return make(speaker, text, TEXT_CHARS)
    if isinstance(block, ToolUseBlock):
        args = block.input
        if block.name == "submit_plan":
            return make("plan", _plan_text(args), TEXT_CHARS, block.name, block.id)
        if block.name == "task_complete":
            return make("summary", str(args.get("summary", "")), TEXT_CHARS, block.name, block.id)
        if block.name == "ask_user":
            return make("question", _question_text(args), TEXT_CHARS, block.name, block.id)
        shown = json.dumps(args, ensure_ascii=False, default=str)
        text = f"{block.name} {cut(shown, TOOL_INPUT_CHARS)}"
        return make("tool call", text, TOOL_INPUT_CHARS * 2, block.name, block.id)
    if isinstance(block, ToolResultBlock):
        return make("tool result", block.text, RESULT_CHARS, ref=block.tool_use_id)
    return None  # thinking, images: not what anyone searches for


def _plan_text(args: dict[str, Any]) -> str:
    lines = [str(args.get("goal", ""))]
    steps = args.get("steps")
    for step in steps if isinstance(steps, list) else ():
        if isinstance(step, dict):
            reason = f" ({step['reason']})" if step.get("reason") else ""
            lines.append(f"{step.get('step_number', '')}. {step.get('action', '')}{reason}")
    return "\n".join(lines)


def _question_text(args: dict[str, Any]) -> str:
    options = args.get("options")
    labels = [
        str(o.get("label", ""))
        for o in (options if isinstance(options, list) else ())
        if isinstance(o, dict)
    ]
    return "\n".join([str(args.get("question", "")), str(args.get("context", "")), *labels])


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def messages_in(data: bytes) -> Iterator[Message]:
    """The messages in a piece of ``history.jsonl``; invalid or torn lines are skipped."""
    for line in data.splitlines():
        if not line.strip():
            continue
        try:
            yield MessageAdapter.validate_json(line)
        except (ValidationError, ValueError):
            continue


# --- writing rows ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Batch:
    """Bytes just appended to a session's history, which now ends at byte ``end``, and its
    ``metadata.json`` when it changed."""

    session_id: str
    records: bytes
    end: int
    metadata: bytes | None


def write_batches(db: sqlite3.Connection, batches: Sequence[Batch]) -> None:
    """Write ``batches`` into the index ``db`` in one transaction."""
    with db:
        db.execute("BEGIN IMMEDIATE")
        for batch in batches:
            if batch.metadata is not None:
                _write_metadata(db, batch.session_id, json.loads(batch.metadata))
            if not batch.records:
                continue
            _write_records(db, batch.session_id, batch.records)
            # The file is indexed up to `end` only if this batch began where the index
            # had got to: a batch lost before it leaves a gap that catch_up reads.
            start = batch.end - len(batch.records)
            db.execute(
                "INSERT INTO sessions (session_id, indexed_bytes) VALUES (?, ?) "
                "ON CONFLICT (session_id) DO UPDATE SET indexed_bytes = CASE "
                "WHEN indexed_bytes >= ? THEN max(indexed_bytes, ?) ELSE indexed_bytes END",
                (batch.session_id, batch.end if start <= 0 else 0, start, batch.end),
            )


def _write_metadata(db: sqlite3.Connection, session_id: str, meta: dict[str, Any]) -> None:
    db.execute(
        "INSERT INTO sessions (session_id, title, created_at, updated_at, agent_type, "
        "parent_session_id, notebook, stop_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (session_id) DO UPDATE SET "
        "title = excluded.title, created_at = excluded.created_at, "
        "updated_at = excluded.updated_at, agent_type = excluded.agent_type, "
        "parent_session_id = excluded.parent_session_id, notebook = excluded.notebook, "
        "stop_reason = excluded.stop_reason",
        (
            session_id,
            mask_secrets(str(meta.get("title") or "")),
            float(meta.get("created_at") or 0),
            float(meta.get("updated_at") or 0),
            str(meta.get("agent_type") or ""),
            meta.get("parent_session_id"),
            _text_or_none(meta.get("notebook")),
            _text_or_none(meta.get("stop_reason")),
        ),
    )


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _write_records(db: sqlite3.Connection, session_id: str, records: bytes) -> None:
    for message in messages_in(records):
        time.sleep(0)  # let the event loop's thread have the GIL between messages
        for row in rows_of(message):
            label = row.label
            if row.role == "tool result" and row.ref:
                found = db.execute(
                    "SELECT label FROM entries WHERE session_id = ? AND ref = ? "
                    "AND label != '' LIMIT 1",
                    (session_id, row.ref),
                ).fetchone()
                label = found[0] if found else ""
            db.execute(
                "INSERT OR IGNORE INTO entries (session_id, message_id, part, role, label, "
                "ref, created_at, text) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    session_id,
                    row.message_id,
                    row.part,
                    row.role,
                    label,
                    row.ref,
                    row.created_at,
                    row.text,
                ),
            )


# --- the schema -----------------------------------------------------------------------


def in_memory() -> sqlite3.Connection:
    """An index in memory, for a search when the file cannot be used."""
    db = sqlite3.connect(":memory:", isolation_level=None)  # path gate: no file
    for statement in statements(SCHEMA):
        db.execute(statement)
    return db


def is_current(db: sqlite3.Connection) -> bool:
    """Whether ``db`` holds the current schema and nothing else."""
    version = db.execute("PRAGMA user_version").fetchone()[0]
    return version == SCHEMA_VERSION and schema_of(db) == _our_schema()


def schema_of(db: sqlite3.Connection) -> set[tuple[str, str, str]]:
    """The objects of a database's schema: (type, name, SQL), SQLite's own left out."""
    rows = db.execute(
        "SELECT type, name, coalesce(sql, '') FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"
    )
    return {(kind, name, sql) for kind, name, sql in rows}


@functools.cache
def _our_schema() -> frozenset[tuple[str, str, str]]:
    """What :data:`SCHEMA` makes, read back from a database in memory."""
    db = sqlite3.connect(":memory:")
    try:
        for statement in statements(SCHEMA):
            db.execute(statement)
        return frozenset(schema_of(db))
    finally:
        db.close()


def statements(script: str) -> Iterator[str]:
    """The statements of ``script`` one by one (``executescript`` would commit the
    transaction they must run in); a trigger's inner ``;`` does not end it."""
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            yield pending.strip()
            pending = ""
