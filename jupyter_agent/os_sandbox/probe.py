"""Whether a sandbox works on this machine: one trivial confined command, run once.

Invariant: each configuration (the key) is probed once per process; a probe that hangs is
given up after :data:`PROBE_TIMEOUT` seconds and counts as a failure, never as a success.
"""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

PROBE_TIMEOUT = 5.0

_probe_lock = threading.Lock()
_probes: dict[object, tuple[bool, str]] = {}


def probe(key: object, argv: list[str], pass_fds: tuple[int, ...]) -> tuple[bool, str]:
    """Run a trivial confined command once per process and key: (worked, why not)."""
    with _probe_lock:
        if key not in _probes:
            _probes[key] = _run_probe(argv, pass_fds)
        return _probes[key]


def _run_probe(argv: list[str], pass_fds: tuple[int, ...]) -> tuple[bool, str]:
    try:
        done = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=PROBE_TIMEOUT,
            pass_fds=pass_fds,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return False, f"{Path(argv[0]).name} did not answer within {PROBE_TIMEOUT:g} s"
    except OSError as e:
        return False, str(e)
    if done.returncode == 0:
        return True, ""
    reason = done.stderr.decode(errors="replace").strip() or f"exit status {done.returncode}"
    return False, reason
