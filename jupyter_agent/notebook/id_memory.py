"""The cell ids a notebook's readers were given, kept beside the sessions.

A file before nbformat 4.5 stores no cell ids, so file mode gives its cells ids derived
from their content (:func:`~jupyter_agent.notebook.ipynb.derive_ids`). Derived again by a
new session, an id could name another cell: fill the second of five empty cells, and the
third becomes "the second empty cell", with the id the filled one had. So the ids handed
out, the content each named and the ids no cell has any more are kept here, one file per
notebook in ``<workspace>/.jupyter_agent/notebook-ids/``, read back by the next session or
process: an id stays with its cell, and an id that named a cell now gone is never given to
another one (the notebook tools refuse it and name the cells holding what it held).

The file is a convenience, never a source of power: it is read through the path gate
(no link admitted), bounded, and every entry is checked; a file that fails any check is
ignored (ids are then derived as for a notebook never seen).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from ..workspace.paths import Root

log = logging.getLogger(__name__)

FOLDER = (".jupyter_agent", "notebook-ids")
"""Where the files lie, beneath the workspace."""
MAX_BYTES = 16 << 20
"""A larger file is ignored (ids for ~100,000 cells fit)."""
KEEP_RETIRED = 5_000
"""How many ids no cell has any more are remembered, newest first."""

_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_PRINT = re.compile(r"[0-9a-f]{64}")


@dataclass
class Remembered:
    """What the readers of one notebook were given, as of one version of its file."""

    digest: str
    """The SHA-256 of the file these ids and prints describe."""
    ids: list[str]
    prints: list[str]
    """Each cell's content fingerprint (``ipynb.fingerprint``), in the file's order."""
    retired: dict[str, str] = field(default_factory=dict)
    """Ids no cell has any more, each with the fingerprint of the cell it named (oldest
    first)."""
    ran: dict[str, str] = field(default_factory=dict)
    """Code cells edited since they ran: the fingerprint of the source their outputs are
    of."""


def retire(retired: dict[str, str], named: dict[str, str], ids: list[str]) -> None:
    """Add to ``retired`` the ids of ``named`` (id: fingerprint, as the cells were) that
    ``ids`` (the cells now) no longer has; drop those ``ids`` has again (an undone delete)."""
    current = set(ids)
    for cell_id, fp in named.items():
        if cell_id not in current:
            retired.pop(cell_id, None)
            retired[cell_id] = fp  # newest last
    for cell_id in current & retired.keys():
        del retired[cell_id]
    while len(retired) > KEEP_RETIRED:
        del retired[next(iter(retired))]


class IdMemory:
    """The file of one notebook's ids, in the workspace's ``.jupyter_agent`` folder."""

    def __init__(self, workspace: str | os.PathLike[str], notebook: str | os.PathLike[str]) -> None:
        self.workspace = Path(os.path.abspath(workspace))
        real = os.path.realpath(os.path.abspath(notebook))
        self.name = hashlib.sha256(real.encode(errors="surrogateescape")).hexdigest()[:32] + ".json"
        self.notebook = real

    def load(self) -> Remembered | None:
        """The ids last kept for the notebook; None when there are none or the file fails
        a check."""
        try:
            folder = Root(self.workspace).subroot(FOLDER, links="none")
            data = json.loads(folder.read(self.name, limit=MAX_BYTES))
            return _checked(data, self.notebook)
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            log.warning("ignoring the kept cell ids of %s: %s", self.notebook, exc)
            return None

    def save(self, kept: Remembered) -> None:
        """Keep ``kept`` (atomically); a failure is logged, never raised: ids are then only
        as stable as the content they are derived from."""
        data = {
            "notebook": self.notebook,
            "digest": kept.digest,
            "ids": kept.ids,
            "prints": kept.prints,
            "retired": kept.retired,
            "ran": kept.ran,
        }
        try:
            folder = Root(self.workspace).subroot(FOLDER, create=True, links="none")
            folder.write(self.name, json.dumps(data).encode(), durable=False)
        except OSError as exc:
            log.warning("could not keep the cell ids of %s: %s", self.notebook, exc)


def _checked(data: object, notebook: str) -> Remembered:
    if not isinstance(data, dict) or data.get("notebook") != notebook:
        raise ValueError("not the ids of this notebook")
    digest, ids, prints, retired, ran = (
        data.get(k) for k in ("digest", "ids", "prints", "retired", "ran")
    )
    if not isinstance(digest, str) or not _PRINT.fullmatch(digest):
        raise ValueError("no digest")
    if not isinstance(ids, list) or not isinstance(prints, list) or len(ids) != len(prints):
        raise ValueError("ids and prints do not match")
    if not all(isinstance(i, str) and _ID.fullmatch(i) for i in ids) or len(set(ids)) != len(ids):
        raise ValueError("an id is not a cell id, or repeats")
    if not all(isinstance(p, str) and _PRINT.fullmatch(p) for p in prints):
        raise ValueError("a fingerprint is not one")
    if not _prints_by_id(retired):
        raise ValueError("a retired id is not one")
    ran = {} if ran is None else ran  # kept by an earlier version
    if not _prints_by_id(ran) or not set(ran) <= set(ids):
        raise ValueError("an edited cell is not one")
    return Remembered(digest, ids, prints, cast(dict[str, str], retired), dict(ran))


def _prints_by_id(value: object) -> bool:
    return isinstance(value, dict) and all(
        isinstance(i, str) and _ID.fullmatch(i) and isinstance(p, str) and _PRINT.fullmatch(p)
        for i, p in value.items()
    )
