"""File time stamps, and what they can tell: the clock a new file's stamp is read from
(:func:`file_clock_ns`), whether a stamp may be of a change at or after a time on a file
system that keeps coarse stamps (:func:`stamped_since`), and whether a file's status is
settled, so that what is remembered by it stands for the content (:func:`settled`).
"""

from __future__ import annotations

import os
import sys
import time

_COARSEST_STEP_NS = 2_000_000_000
"""The coarsest step of the time stamps file systems keep, cut down: even seconds (FAT),
whole seconds (HFS+, ext3, many network file systems)."""


def settled(st: os.stat_result) -> bool:
    """Whether no later write can leave the file's status as ``st`` has it: its last
    change is more than a time stamp's coarsest step ago. Until then a rewrite of the same
    length can carry the same times, and what is remembered by status (a digest, "no
    secret in it") would stand for content it was never computed from."""
    return file_clock_ns() - max(st.st_mtime_ns, st.st_ctime_ns) > _COARSEST_STEP_NS


def stamped_since(stamp_ns: int, since_ns: int) -> bool:
    """Whether a file stamped ``stamp_ns`` may have changed at or after ``since_ns``. A
    stamp in whole seconds is taken as cut down to its file system's step: a write in the
    agent's first second or two can carry a stamp from before the start (a fine stamp
    falls on a whole second once in 10^9, and then asks once more)."""
    if stamp_ns % 1_000_000_000 == 0:
        since_ns -= since_ns % _COARSEST_STEP_NS
    return stamp_ns >= since_ns


_FILE_CLOCK = 5 if sys.platform.startswith("linux") else None
"""Linux stamps a file from its coarse clock (CLOCK_REALTIME_COARSE, not named in Python
3.11), a tick or more behind ``time.time()``, or from a later fine-grained time."""
_MARGIN_NS = 50_000_000
"""Elsewhere, how far behind ``time.time()`` a file's stamp may be (Windows stamps from a
clock that moves in 15.6 ms steps)."""


def file_clock_ns() -> int:
    """A time no stamp of a later write is earlier than. Read from ``time.time()``, a
    script written a moment after the agent started could carry an earlier stamp and count
    as there before, and an "Always allow" would cover code nobody saw. A file written a
    moment before the start may count as changed: it asks once more, which is safe."""
    if _FILE_CLOCK is None:
        return time.time_ns() - _MARGIN_NS
    return time.clock_gettime_ns(_FILE_CLOCK)
