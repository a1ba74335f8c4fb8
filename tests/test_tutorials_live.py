"""The tutorials on the real-model path: with ANTHROPIC_API_KEY set they use Claude.

No real API is reachable here, so each tutorial runs (headless, with nbclient) against
the loopback Messages API server, which answers with the turns of the tutorial's own
replay script, in order. That is the path a user with a key takes: the real
``anthropic`` client, streaming, Stop closing a stream mid-way, and kernels the
tutorial starts itself inheriting the key. The cells marked ``# NBVAL_CHECK_OUTPUT`` must
print what is stored (sanitised by ``tests/nbval_sanitize.cfg``): the same text on a real
client as on the offline replay the outputs were stored from. This is the one headless run
of the tutorials; ``tests/browser/test_tutorials.py`` runs them on the replays in JupyterLab.
"""

from __future__ import annotations

import configparser
import inspect
import json
import re
import shutil
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

from jupyter_agent.models import scripted
from jupyter_agent.models.scripted import ScriptedModel, turn_content
from jupyter_agent.testing import MessagesServer, Reply

pytestmark = pytest.mark.slow  # real kernels on a real client

NOTEBOOKS = Path(__file__).parent.parent / "notebooks"
TUTORIALS = sorted(p.name for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
REPLAY_CHUNK: int = inspect.signature(ScriptedModel).parameters["chunk_size"].default
"""Text streamed in the offline replay's pieces, so a checked cell that counts the stream's
events prints what the replay printed."""
REPLAY_MODEL = f"scripted — {scripted.LABEL}"
"""How a printed run names the offline replay's model."""


def replies(script: Path) -> list[Reply]:
    """Every part of a replay script, in file order, as Messages API replies: the same
    content blocks the scripted model would stream."""
    out = []
    data = json.loads(script.read_text(encoding="utf-8"))
    for turn in (t for part in data.values() if isinstance(part, list) for t in part):
        blocks = [block.to_api() for block in turn_content(turn)]
        long = len(turn.get("text", "")) > 500  # streamed slowly, so a Stop lands mid-way
        out.append(
            Reply(
                blocks,
                "tool_use" if turn.get("tool_calls") else "end_turn",
                chunk_size=8 if long else REPLAY_CHUNK,
                delay=0.02 if long else 0.0,
            )
        )
    return out


def scripted_with_summaries(server: MessagesServer, answers: list[Reply]) -> Any:
    """The script's answers in order; a request to compact the conversation (a long
    tutorial's small window) is answered apart with a summary, as a model would."""
    queue = list(answers)

    def respond(body: dict[str, Any]) -> Reply:
        last = body["messages"][-1]["content"][-1]
        if last.get("type") == "text" and last["text"].startswith("[Compaction"):
            server.summaries += 1  # type: ignore[attr-defined]
            return Reply([{"type": "text", "text": "Summary of the work so far."}])
        return queue.pop(0)

    server.summaries = 0  # type: ignore[attr-defined]
    return respond


CHECK = "# NBVAL_CHECK_OUTPUT"


def _sanitisers() -> list[tuple[re.Pattern[str], str]]:
    config = configparser.ConfigParser()
    config.read(Path(__file__).with_name("nbval_sanitize.cfg"))
    return [(re.compile(config[s]["regex"]), config[s]["replace"]) for s in config.sections()]


SANITISERS = _sanitisers()


def checked_stdout(cell: Any) -> str:
    """What a checked cell printed, with run-to-run differences (ids, counts) sanitised."""
    text = "".join(o.get("text", "") for o in cell.outputs if o.get("name") == "stdout")
    for pattern, replacement in SANITISERS:
        text = pattern.sub(replacement, text)
    return text


def outputs_text(nb: Any) -> str:
    parts = []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            parts.append(output.get("text", ""))
            parts.append(output.get("data", {}).get("text/plain", ""))
    return "\n".join(parts)


def test_every_tutorial_has_a_replay_script_beside_it_and_no_saved_widget_state() -> None:
    assert len(TUTORIALS) >= 5
    for name in TUTORIALS:
        assert (NOTEBOOKS / name.replace(".ipynb", ".replay.json")).is_file(), name
        # Saved widget state would bring back an old panel's code and CSS when the
        # notebook opens, and its CSS would replace the current panel's.
        assert "widgets" not in nbformat.read(NOTEBOOKS / name, as_version=4).metadata, name


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", TUTORIALS)
def test_a_tutorial_runs_top_to_bottom_on_the_real_client(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = name.replace(".ipynb", ".replay.json")
    shutil.copy(NOTEBOOKS / name, tmp_path / name)
    shutil.copy(NOTEBOOKS / script, tmp_path / script)
    answers = replies(tmp_path / script)
    with MessagesServer() as server:
        server.responder = scripted_with_summaries(server, answers)
        # The kernels (and any the tutorial starts) inherit these: the real-model path.
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-tutorial-test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.delenv("JUPYTER_AGENT_MODEL", raising=False)
        nb = nbformat.read(tmp_path / name, as_version=4)
        client = NotebookClient(
            nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
        )
        client.execute()  # raises CellExecutionError, naming the cell, if any cell fails
        server.wait_idle()
        served = list(server.requests)
        assert not server.errors
    # Every turn of the script was asked for, and no more: the tutorial went all the way
    # through, and the one run it stops (the quickstart's) closed its stream mid-way.
    assert len(served) - server.summaries == len(answers)  # type: ignore[attr-defined]
    assert [r.outcome for r in served].count("disconnected") == (name == "01_quickstart.ipynb")
    assert all(r.body["model"].startswith("claude") for r in served)
    assert "Scripted replay" not in outputs_text(nb)
    # Each checked cell printed what is stored, and no cell raised.
    stored = nbformat.read(NOTEBOOKS / name, as_version=4)
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors, errors
    # The stored outputs name the replay where a model is named; here it is the real one.
    model = served[0].body["model"]
    checked = [
        (checked_stdout(now), checked_stdout(before).replace(REPLAY_MODEL, model), before.source)
        for now, before in zip(nb.cells, stored.cells, strict=True)
        if before.cell_type == "code" and before.source.startswith(CHECK)
    ]
    assert len(checked) >= 3
    for now, before, source in checked:
        assert now == before, source
