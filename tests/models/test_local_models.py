"""The model picker lists what Ollama serves on this machine, asked in a thread with a short
timeout: a server that is not Ollama, answers nonsense or never answers lists nothing and
holds nothing up."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from jupyter_agent import Agent
from jupyter_agent.jupyter.panel.setup import model_choices
from jupyter_agent.models import _local
from jupyter_agent.models._local import LocalModels, ollama_url


class _Ollama(BaseHTTPRequestHandler):
    answer: bytes = b""
    hang = 0.0

    def do_GET(self) -> None:
        time.sleep(self.hang)
        self.send_response(200 if self.path == "/api/tags" else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(self.answer)))
        self.end_headers()
        self.wfile.write(self.answer)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def ollama(monkeypatch: pytest.MonkeyPatch) -> Iterator[type[_Ollama]]:
    handler = type("Handler", (_Ollama,), {})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{server.server_address[1]}")
    yield handler
    server.shutdown()
    server.server_close()


def _ask(models: LocalModels) -> bool:
    changed = threading.Event()
    models.refresh(changed.set)
    return changed.wait(3)


def test_the_models_ollama_serves_are_listed_as_model_strings(ollama, workspace, monkeypatch):
    ollama.answer = json.dumps(
        {"models": [{"name": "qwen3:8b"}, {"name": "llama3.2:latest"}, {"name": "bad name"}]}
    ).encode()
    models = LocalModels(every=0)
    assert _ask(models)
    assert models.known() == ["ollama:qwen3:8b", "ollama:llama3.2:latest"]
    # The picker lists them beside the model in use.
    monkeypatch.setattr(_local, "LOCAL_MODELS", models)
    monkeypatch.setattr("jupyter_agent.jupyter.panel.setup.LOCAL_MODELS", models)
    listed = [c["id"] for c in model_choices(Agent(workspace=workspace, model="scripted"))]
    assert listed == ["scripted", "ollama:qwen3:8b", "ollama:llama3.2:latest"]


@pytest.mark.parametrize("answer", [b"<html>not ollama</html>", b'{"models": 3}', b"[]"])
def test_a_server_that_is_not_ollama_lists_nothing(ollama, answer):
    ollama.answer = answer
    models = LocalModels(every=0)
    models._known = ["ollama:stale"]
    assert _ask(models)  # the list changed: to nothing
    assert models.known() == []


def test_a_server_that_never_answers_holds_nothing_up(ollama):
    ollama.hang = 5.0
    models = LocalModels(every=0, timeout=1.0)
    models.refresh(lambda: None)
    assert models._asking  # the caller is back while the probe still waits on the server
    deadline = time.monotonic() + 5
    while models._asking and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not models._asking and models.known() == []


def test_ollama_host_is_read_as_ollama_reads_it(monkeypatch):
    for given, url in [
        ("", "http://localhost:11434"),
        ("0.0.0.0", "http://localhost:11434"),  # where it listens, not where to ask
        ("0.0.0.0:8080", "http://localhost:8080"),
        ("gpu-box:8080", "http://gpu-box:8080"),
        ("https://ollama.example/", "https://ollama.example"),
        ("[::1]", "http://[::1]:11434"),
        ("http://10.0.0.5:11434", "http://10.0.0.5:11434"),
    ]:
        monkeypatch.setenv("OLLAMA_HOST", given)
        assert ollama_url() == url, given
