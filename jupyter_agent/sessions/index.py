"""The search index of a workspace's sessions: SQLite FTS5 over what they said.

One file, ``<workspace>/.jupyter_agent/sessions/index.sqlite``, beside the sessions it
indexes: it goes where they go (a copied or deleted workspace takes it along) and every
kernel working in the workspace finds the same one. It holds, per message, the user's
words, the assistant's text, plans (goal and steps), summaries (``task_complete``), tool
names with their input cut short, and the first few hundred characters of tool results.

Three jobs, three modules, each stating the invariants it keeps:

- :mod:`.index_rows`: what a message becomes in the index (cut, masked, keyed so that
  writing twice adds nothing), and the schema.
- :mod:`.index_store`: the file, opened through the path gate (only a database of ours),
  rebuilt when damaged or older, caught up from the histories, and searched.
- :mod:`.index_writer`: the one thread per process that writes what sessions append,
  never on the event loop and never failing a session's write.

This module keeps the names the package and its users import.
"""

from .index_rows import (
    APPLICATION_ID,
    MARK_END,
    MARK_START,
    RESULT_CHARS,
    SCHEMA_VERSION,
    TEXT_CHARS,
    TOOL_INPUT_CHARS,
)
from .index_store import (
    INDEX_FILE,
    MAX_LIMIT,
    OUTCOME_CHARS,
    QUERY_TERMS,
    SEARCH_BUDGET,
    SESSIONS_DIR,
    NoIndex,
    SearchError,
    SessionHit,
    SessionIndex,
    fts5_missing,
    index_records,
    match_expression,
    sessions_folder,
)

__all__ = [
    "APPLICATION_ID",
    "INDEX_FILE",
    "MARK_END",
    "MARK_START",
    "MAX_LIMIT",
    "OUTCOME_CHARS",
    "QUERY_TERMS",
    "RESULT_CHARS",
    "SCHEMA_VERSION",
    "SEARCH_BUDGET",
    "SESSIONS_DIR",
    "TEXT_CHARS",
    "TOOL_INPUT_CHARS",
    "NoIndex",
    "SearchError",
    "SessionHit",
    "SessionIndex",
    "fts5_missing",
    "index_records",
    "match_expression",
    "sessions_folder",
]
