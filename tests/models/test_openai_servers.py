"""The OpenAI-compatible model layer against what a server says back: the real ``openai``
client against the loopback Chat Completions server.

Errors the SDK gave up on (rate limits, quotas, rejected keys, unknown or unpulled models, a
prompt too long, an answer that is no event stream, no server at all) each end the run with
one clear sentence; keys and addresses come from the arguments or the environment (none for
Ollama), a key is a secret, and a missing package says what to install; Ollama's context
window is read with care, planned for, and said when it cuts the conversation.
"""

from __future__ import annotations

import http.server
import sys
import threading

import inline_snapshot
import pytest
from helpers import sent_key
from openai_runs import HI, lookup, loopback_gpt

from jupyter_agent import Agent
from jupyter_agent.errors import MissingAPIKey, ModelError, PromptTooLong
from jupyter_agent.models import ModelRequest, OpenAIModel
from jupyter_agent.models.openai import NO_KEY_SENT
from jupyter_agent.states import AgentState
from jupyter_agent.testing import Fault, Reply, text, tool_use


@pytest.fixture
def model(chat_server):
    return loopback_gpt(chat_server)


# --- errors the SDK gave up on -------------------------------------------------------------


async def test_a_rate_limit_is_retried_by_the_sdk(workspace, model, chat_server):
    chat_server.script([Fault.status(429), Fault.status(503), Reply([text("Finally.")])])
    handle = await Agent("actor", model, workspace=workspace).run("go")
    assert handle.summary == "Finally."
    assert len(chat_server.requests) == 3


async def test_a_lasting_rate_limit_says_what_was_retried(workspace, chat_server):
    model = OpenAIModel(
        "gpt-4o", api_key="k", base_url=chat_server.base_url, sdk_options={"max_retries": 1}
    )
    chat_server.script([Fault.status(429)] * 2)
    handle = await Agent("actor", model, workspace=workspace).run("go")
    assert handle.state is AgentState.error
    assert handle.stop_message.startswith(
        "The model server's rate limit was reached; retried 1 time over "
    )
    assert handle.stop_message.endswith(" s. Wait a minute, then try again.")
    assert len(chat_server.requests) == 2


async def test_an_exhausted_quota_says_so_instead_of_wait(workspace, chat_server):
    model = OpenAIModel(
        "gpt-4o", api_key="k", base_url=chat_server.base_url, sdk_options={"max_retries": 0}
    )
    message = "You exceeded your current quota, please check your plan and billing details."
    chat_server.push(Fault.status(429, "insufficient_quota", message))
    handle = await Agent("actor", model, workspace=workspace).run("go")
    assert handle.stop_message == inline_snapshot.snapshot(
        "The model server says the account has no quota left (429): You exceeded your current "
        "quota, please check your plan and billing details. Check its plan and billing."
    )


async def test_a_rejected_key_says_so_and_is_remembered(workspace, chat_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "wrong")
    monkeypatch.setenv("OPENAI_BASE_URL", chat_server.base_url)
    model = OpenAIModel("gpt-4o")
    chat_server.push(Fault.status(401))
    handle = await Agent("actor", model, workspace=workspace).run("go")
    assert handle.stop_message == (
        f"The model server at {chat_server.base_url} rejected the API key from OPENAI_API_KEY "
        "(401). Check the key in the panel's key field, or enter it again with %agent login."
    )
    assert model.key_rejected
    assert sent_key(chat_server.requests[0]) == "wrong"
    monkeypatch.setenv("OPENAI_API_KEY", "another")
    assert not model.key_rejected  # a new key has not been refused yet


@pytest.mark.parametrize("status", [401, 403])
async def test_an_auth_failure_is_said_at_once_never_retried(workspace, chat_server, status):
    """One request, even when the server (a gateway) asks for another try."""
    model = OpenAIModel("gpt-4o", api_key="wrong", base_url=chat_server.base_url)
    chat_server.script(
        [Fault.status(status, headers={"x-should-retry": "true"})] * 3
        + [Reply([text("A retried key is never sent.")])]
    )
    handle = await Agent("actor", model, workspace=workspace).run("go")
    assert len(chat_server.requests) == 1
    assert handle.state is AgentState.error
    assert f"({status}" in handle.stop_message and "retried" not in handle.stop_message


async def test_an_unknown_model_names_the_model_and_the_address(workspace, chat_server):
    model = OpenAIModel("gpt-nine", api_key="k", base_url=chat_server.base_url)
    chat_server.push(Fault.status(404))
    handle = await Agent("actor", model, workspace=workspace).run("go")
    assert handle.stop_message == (
        "The model server does not know this (404): The model `gpt-nine` does not exist or you "
        f"do not have access to it. Check the model id (now 'gpt-nine') and the address "
        f"({chat_server.base_url})."
    )


async def test_a_model_ollama_has_not_pulled_says_how_to_pull_it(workspace, chat_server):
    model = OpenAIModel("qwen3", provider="ollama", base_url=chat_server.base_url)
    chat_server.push(
        Fault.status(404, "api_error", 'model "qwen3" not found, try pulling it first')
    )
    handle = await Agent("actor", model, workspace=workspace).run("go")
    assert handle.stop_message == inline_snapshot.snapshot(
        'Ollama does not have this model (404): model "qwen3" not found, try pulling it first. '
        "Pull it first (ollama pull qwen3), or check the model id."
    )


@pytest.mark.parametrize(
    ("message", "tokens", "limit"),
    [
        (  # OpenAI, with the code context_length_exceeded
            "This model's maximum context length is 128000 tokens. However, your messages "
            "resulted in 130512 tokens. Please reduce the length of the messages.",
            130512,
            128000,
        ),
        (  # vLLM
            "This model's maximum context length is 32768 tokens. However, you requested "
            "40000 tokens (39000 in the messages, 1000 in the completion).",
            40000,
            32768,
        ),
        ("The prompt is longer than the maximum model length of 8192", None, None),
        ("the input length exceeds the context length", None, None),  # Ollama
    ],
)
async def test_a_prompt_too_long_for_the_window_is_prompt_too_long(
    message, tokens, limit, model, chat_server
):
    code = "context_length_exceeded" if "reduce" in message else "invalid_request_error"
    chat_server.push(Fault.status(400, code, message))
    with pytest.raises(PromptTooLong) as caught:
        [p async for p in model.stream(ModelRequest(system="s", messages=HI))]
    assert (caught.value.tokens, caught.value.limit) == (tokens, limit)
    assert str(caught.value).startswith("The conversation no longer fits the model's context")


async def test_an_answer_that_is_no_event_stream_says_to_check_the_address(workspace):
    class Page(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["content-length"]))
            page = b"<html>Welcome</html>"
            self.send_response(200)
            self.send_header("content-type", "text/html; charset=utf-8")
            self.send_header("content-length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args: object) -> None:
            pass

    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page) as site:
        threading.Thread(target=site.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{site.server_port}/v1"
        model = OpenAIModel("gpt-4o", api_key="k", base_url=url)
        handle = await Agent("actor", model, workspace=workspace).run("go")
        site.shutdown()
    assert handle.stop_message == (
        f"The model server at {url} answered with text/html instead of an event stream: "
        "check the base_url."
    )


async def test_a_server_that_is_not_there_says_where_it_looked(workspace):
    model = OpenAIModel("qwen3", provider="ollama", base_url="http://127.0.0.1:9/v1")
    model.check()  # no key needed
    with pytest.raises(ModelError) as caught:
        [p async for p in model.stream(ModelRequest(system="s", messages=HI))]
    assert str(caught.value).startswith("Could not reach Ollama at http://127.0.0.1:9/v1")
    assert str(caught.value).endswith(
        "Is Ollama running (ollama serve)? Check OLLAMA_HOST or the base_url."
    )


# --- keys, addresses, the package ---------------------------------------------------------


async def test_a_missing_openai_key_is_one_clear_sentence_at_start(workspace):
    agent = Agent("planner", OpenAIModel("gpt-5"), workspace=workspace)
    with pytest.raises(MissingAPIKey, match=r"^No OpenAI API key found: set OPENAI_API_KEY"):
        agent.start("go")
    assert agent.state is AgentState.idle


def test_a_compatible_server_without_an_address_says_to_give_one(monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL")
    with pytest.raises(ModelError, match=r"pass base_url= to OpenAIModel, or set OPENAI_BASE_URL"):
        OpenAIModel("llama", provider="openai-compatible").check()
    OpenAIModel("llama", provider="openai-compatible", base_url="http://127.0.0.1:9/v1").check()


async def test_ollama_needs_no_key_and_finds_the_server_at_ollama_host(
    workspace, chat_server, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "an-openai-key")  # never sent to Ollama
    monkeypatch.setenv("OLLAMA_HOST", chat_server.url.removeprefix("http://"))
    model = OpenAIModel("qwen3", provider="ollama")
    chat_server.push(Reply([text("local hello")]))
    handle = await Agent("actor", model, workspace=workspace).run("go")
    assert handle.summary == "local hello"
    assert sent_key(chat_server.requests[0]) == NO_KEY_SENT
    body = chat_server.requests[0].body
    assert body["max_tokens"] == model.max_tokens and "max_completion_tokens" not in body
    assert model.secret_values() == {}
    assert handle.usage.unpriced_calls == 1


async def test_the_environment_gives_key_and_address_and_the_key_is_a_secret(
    workspace, chat_server, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-key-0123456789")
    monkeypatch.setenv("OPENAI_BASE_URL", chat_server.base_url)
    model = OpenAIModel("gpt-5-mini")
    assert list(model.secret_values().values()) == ["sk-env-key-0123456789"]
    chat_server.script(
        [
            Reply([tool_use("lookup", {"key": "sk-env-key-0123456789"})], "tool_use"),
            Reply([text("ok")]),
        ]
    )
    agent = Agent("actor", model, workspace=workspace, tools=[lookup])
    await agent.run("go")
    assert sent_key(chat_server.requests[0]) == "sk-env-key-0123456789"
    result = chat_server.requests[1].body["messages"][-1]
    assert result["role"] == "tool"
    assert "sk-env-key-0123456789" not in result["content"]  # hidden, as Claude's key is
    assert chat_server.requests[0].body["max_completion_tokens"] == model.max_tokens


async def test_without_the_openai_package_the_message_says_what_to_install(workspace, monkeypatch):
    monkeypatch.setitem(sys.modules, "openai", None)  # as if it were not installed
    agent = Agent("actor", OpenAIModel("gpt-5", api_key="k"), workspace=workspace)
    with pytest.raises(ModelError, match=r"pip install jupyter-in-kernel-agent\[openai\]"):
        agent.start("go")


# --- Ollama's context window ---------------------------------------------------------------


def _warnings(handle) -> list[str]:
    return [e.message for e in handle.events_so_far if e.kind == "warning"]


async def test_ollama_that_cuts_the_conversation_to_its_context_is_said_once(
    workspace, chat_server, monkeypatch
):
    """Ollama's Chat Completions endpoint runs a model with the context it was started
    with (4,096 tokens by default) and cuts the rest without an error: the agent asks
    Ollama that context after a reply, and says plainly when a request filled it."""
    monkeypatch.setenv("OLLAMA_HOST", chat_server.url.removeprefix("http://"))
    chat_server.running_models = [
        {"name": "qwen3:latest", "model": "qwen3:latest", "context_length": 4096}
    ]
    model = OpenAIModel("qwen3", provider="ollama")
    filled = {"prompt_tokens": 4000, "completion_tokens": 96}
    chat_server.script(
        [
            Reply([text("I saw only the end.")], usage=filled),
            Reply([text("Again.")], usage=filled),
        ]
    )
    agent = Agent("actor", model, workspace=workspace)
    first = await agent.run("go")
    said = _warnings(first)
    assert len(said) == 1, said
    assert "Ollama runs qwen3 with a context of 4,096 tokens" in said[0]
    assert "filled it (4,096 tokens)" in said[0]
    assert "OLLAMA_CONTEXT_LENGTH" in said[0] and "num_ctx" in said[0]
    assert model.context_window is None  # too small to plan for: compaction cannot help
    second = await agent.run("again")
    assert _warnings(second) == []  # said once
    asked = [r.path for r in chat_server.requests if r.method == "GET"]
    assert asked and all(p == "/api/ps" for p in asked)


async def test_a_roomy_ollama_context_is_planned_for_and_not_warned_of(
    workspace, chat_server, monkeypatch
):
    monkeypatch.setenv("OLLAMA_HOST", chat_server.url.removeprefix("http://"))
    chat_server.running_models = [
        {"name": "llama3.2:latest", "context_length": 8192},
        {"name": "qwen3:8b", "model": "qwen3:8b", "context_length": 32768},
    ]
    model = OpenAIModel("qwen3:8b", provider="ollama")
    chat_server.push(Reply([text("Fine.")], usage={"prompt_tokens": 5000}))
    handle = await Agent("actor", model, workspace=workspace).run("go")
    assert _warnings(handle) == []
    assert model.context_window == 32768  # the gauge and compaction use Ollama's window
    # A window the user gave is theirs; an Ollama that does not say leaves all as it was.
    given = OpenAIModel("qwen3:8b", provider="ollama", context_window=20000)
    chat_server.push(Reply([text("Fine.")]))
    await Agent("actor", given, workspace=workspace).run("go")
    assert given.context_window == 20000
    chat_server.running_models = None  # an older Ollama, or no /api/ps: a 404
    silent = OpenAIModel("qwen3:8b", provider="ollama")
    chat_server.push(Reply([text("Fine.")]))
    assert _warnings(await Agent("actor", silent, workspace=workspace).run("go")) == []
    assert silent.context_window is None


async def test_a_small_ollama_context_is_said_before_it_fills(workspace, chat_server, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", chat_server.url.removeprefix("http://"))
    chat_server.running_models = [{"name": "qwen3:latest", "context_length": 8192}]
    model = OpenAIModel("qwen3", provider="ollama")
    chat_server.push(Reply([text("ok")], usage={"prompt_tokens": 4700, "completion_tokens": 5}))
    said = _warnings(await Agent("actor", model, workspace=workspace).run("go"))
    assert len(said) == 1 and "will soon outgrow" in said[0], said


def test_what_ollama_says_of_its_models_is_read_with_care(chat_server):
    from jupyter_agent.models._ollama_window import served_window

    root = chat_server.url
    for listed, found in [
        ([{"name": "qwen3:latest", "context_length": 4096}], 4096),
        ([{"model": "qwen3", "context_length": 40960}], 40960),
        ([{"name": "qwen3:8b", "context_length": 4096}], None),  # another tag
        ([{"name": "qwen3:latest", "context_length": True}], None),
        ([{"name": "qwen3:latest", "context_length": -1}], None),
        ([{"name": "qwen3:latest", "context_length": "4096"}], None),
        (["junk", 5, None], None),
    ]:
        chat_server.running_models = listed
        assert served_window(root, "qwen3") == found, listed
    chat_server.running_models = None
    assert served_window(root, "qwen3") is None  # 404
    assert served_window("http://127.0.0.1:9", "qwen3") is None  # nobody there
