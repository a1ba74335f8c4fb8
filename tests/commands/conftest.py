"""Fixtures of the command tests: a folder beside the workspace (``outside``), sandboxes on
the workspace (``make_sandbox``), and a git repository with its places (``place``) and
sandboxes on it (``sandbox``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import git_places
import pytest
import sandbox_runs
from git_places import Place

from jupyter_agent.os_sandbox.launch import OsSandbox


@pytest.fixture
def outside() -> Iterator[Path]:
    with sandbox_runs.outside_folder() as folder:
        yield folder


@pytest.fixture
def make_sandbox(workspace: Path) -> Iterator[Callable[..., OsSandbox]]:
    with sandbox_runs.sandbox_maker(workspace) as make:
        yield make


@pytest.fixture
def place(monkeypatch: pytest.MonkeyPatch) -> Iterator[Place]:
    with git_places.git_place(monkeypatch) as p:
        yield p


@pytest.fixture
def sandbox(place: Place) -> Iterator[Callable[..., OsSandbox]]:
    with git_places.sandbox_maker(place) as make:
        yield make
