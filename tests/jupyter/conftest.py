"""Fixtures of the kernel tests: ``kernel``, a real kernel with the extension loaded."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from kernels import Kernel, agent_kernel, stop_kernel


@pytest.fixture
def kernel(tmp_path: Path) -> Iterator[Kernel]:
    """A real kernel in ``tmp_path`` with ``%load_ext jupyter_agent`` run, stopped after."""
    k = agent_kernel(tmp_path)
    try:
        yield k
    finally:
        stop_kernel(k)
