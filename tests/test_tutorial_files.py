"""The tutorials' files: each has the replay script its offline model reads, and none keeps
saved widget state. ``tests/browser/test_tutorials.py`` runs them (once each, in
JupyterLab, on the real client against a loopback Messages API server)."""

from __future__ import annotations

from pathlib import Path

import nbformat

NOTEBOOKS = Path(__file__).parent.parent / "notebooks"
TUTORIALS = sorted(p.name for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


def test_every_tutorial_has_a_replay_script_beside_it_and_no_saved_widget_state() -> None:
    assert len(TUTORIALS) >= 5
    for name in TUTORIALS:
        assert (NOTEBOOKS / name.replace(".ipynb", ".replay.json")).is_file(), name
        # Saved widget state would bring back an old panel's code and CSS when the
        # notebook opens, and its CSS would replace the current panel's.
        assert "widgets" not in nbformat.read(NOTEBOOKS / name, as_version=4).metadata, name
