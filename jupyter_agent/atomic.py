"""Atomic file writes: readers see the old file or the new one, never a mix."""

from __future__ import annotations

from pathlib import Path

from . import beneath


def atomic_write_bytes(
    path: Path, data: bytes, *, durable: bool = True, mode: int | None = None
) -> None:
    """Replace ``path`` with ``data`` so readers see the old or the new file, never a mix.

    The data goes to a temporary file in the same folder, which then replaces the file
    (keeping its permission bits). Anything raised on the way — an I/O error, a kernel
    interrupt — leaves the old file as it was and no temporary file behind.
    ``durable`` also waits for the data to reach the disk (fsync) before the rename, so
    the new file survives a power cut too; that costs milliseconds on most disks.
    ``mode``: the new file's permission bits (e.g. 0o600 for a secret), set from its
    creation on rather than kept from the old file.
    """
    path = Path(path)
    beneath.write_bytes(path.parent, (path.name,), data, durable=durable, mode=mode)


def atomic_write_text(path: Path, text: str, encoding: str = "utf-8") -> None:
    """:func:`atomic_write_bytes` for text (no newline translation)."""
    atomic_write_bytes(path, text.encode(encoding))
