"""A server's ``envFile``: ``NAME=value`` lines read through the path gate.

Invariants:

- **Through the gate, bounded.** The file is opened beneath the agent's folder (an entry
  of the user's own settings, or of settings given in code, may also name one beneath the
  home folder; a workspace's entry may not) by :class:`~jupyter_agent.workspace.paths.Root`,
  which follows a link only while it stays beneath that folder and opens only a regular
  file, at most :data:`MAX_BYTES` of it.
- **Its values are secrets.** They go into the server's environment and into the secret
  redaction, nowhere else: no message of this module quotes a line or a value (a line that
  cannot be read is named by its number), and nothing here writes them.
"""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path

from ..workspace.paths import FileTooLarge, PathRefused, Root

MAX_BYTES = 256 * 1024
MAX_VARIABLES = 1000
_LINE = re.compile(r"(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]{0,127})\s*=\s*(.*)")
_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", '"': '"', "\\": "\\", "$": "$"}


class EnvFileError(ValueError):
    """The file cannot be read; the message names the file and why, never a value."""


def parse(text: str, shown: str) -> dict[str, str]:
    """``NAME=value`` lines (``export`` allowed, ``#`` comments, values in single quotes
    kept as written, in double quotes with ``\\n``-style escapes) as a mapping."""
    found: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        match = _LINE.fullmatch(line)
        if match is None:
            raise EnvFileError(f"{shown}, line {number}: not a NAME=value line")
        name, value = match[1], match[2].strip()
        if value[:1] in ("'", '"'):
            quote = value[0]
            end = _closing(value, quote)
            if end is None:
                raise EnvFileError(f"{shown}, line {number}: the quoted value is not closed")
            inner = value[1:end]
            value = (
                inner
                if quote == "'"
                else re.sub(r"\\(.)", lambda m: _ESCAPES.get(m[1], "\\" + m[1]), inner)
            )
        else:
            value = re.split(r"\s+#", value, maxsplit=1)[0].rstrip()
        found[name] = value
        if len(found) > MAX_VARIABLES:
            raise EnvFileError(f"{shown}: more than {MAX_VARIABLES:,} variables")
    return found


def _closing(value: str, quote: str) -> int | None:
    i = 1
    while i < len(value):
        if value[i] == "\\" and quote == '"':
            i += 2
            continue
        if value[i] == quote:
            return i
        i += 1
    return None


class EnvFile:
    """One entry's ``envFile``, read again only when it changed (the secret redaction asks
    for its values at every pass)."""

    def __init__(self, path: str, workspace: Path, *, home_too: bool) -> None:
        self.given = path
        """The path as the entry gives it (its variables filled in)."""
        given = Path(os.path.expanduser(path))
        self.path = given if given.is_absolute() else workspace / given
        """Where it is (relative to the agent's folder)."""
        self._bases = [workspace] + ([Path.home()] if home_too else [])
        self._lock = threading.Lock()
        self._seen: tuple[tuple[int, int, int, int], dict[str, str]] | None = None

    def read(self) -> dict[str, str]:
        """Its variables; :class:`EnvFileError` says why they cannot be read."""
        root, parts = self._place()
        try:
            try:
                info = root.stat(parts)
                stamp = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)
                with self._lock:
                    if self._seen is not None and self._seen[0] == stamp:
                        return dict(self._seen[1])
                raw = root.read(parts, limit=MAX_BYTES)
            except FileTooLarge:
                raise EnvFileError(
                    f"envFile {self.path} is larger than {MAX_BYTES // 1024} KB"
                ) from None
            except FileNotFoundError:
                raise EnvFileError(f"envFile {self.path} does not exist") from None
            except PathRefused as exc:
                raise EnvFileError(f"envFile {self.path} was refused: {exc}") from None
            except OSError as exc:
                raise EnvFileError(
                    f"envFile {self.path} cannot be read: {exc.strerror or type(exc).__name__}"
                ) from None
        finally:
            root.close()
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise EnvFileError(f"envFile {self.path} is not UTF-8 text") from None
        values = parse(text, f"envFile {self.path}")
        with self._lock:
            self._seen = (stamp, values)
        return dict(values)

    def _place(self) -> tuple[Root, tuple[str, ...]]:
        """The folder it lies beneath (opened), and its names there."""
        for base in self._bases:
            try:
                root = Root(base)
            except OSError:
                continue
            try:
                return root, root.parts(self.path)
            except PathRefused:
                root.close()
        where = " or ".join(str(b) for b in self._bases)
        raise EnvFileError(f"envFile {self.path} is not inside {where}, where it may be read")

    def quietly(self) -> dict[str, str]:
        """Its variables, or none when it cannot be read (for the redaction)."""
        try:
            return self.read()
        except (EnvFileError, OSError):
            return {}
