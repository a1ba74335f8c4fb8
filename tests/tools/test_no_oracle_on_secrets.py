"""No tool answers a question about what the redaction hides.

A hostile model — any tool call, any input, adapting to every answer — tries to rebuild a
secret from the tools that compute their answer from content: grep's match or no match
and its counts, update_file's found / not found / found twice and its "closest text"
likeness, a notebook cell's find, a read of a range of lines, a diff, a glob, a search
of past sessions. Each attack may learn what a read of the same text shows (the few
characters a mask keeps, ``ghp_•••``), and nothing more; and each one rebuilt the secret,
or part of it, when those tools worked on the real text. What the attacker sees of an
answer is what the model sees: the tool's text after the dispatcher's redaction.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from helpers import call

from jupyter_agent import Agent, AnthropicModel, ScriptedModel
from jupyter_agent.errors import ToolError
from jupyter_agent.notebook.file import FileBridge
from jupyter_agent.secrets.redaction import Secrets
from jupyter_agent.testing import MessagesServer, Reply, text, tool_use
from jupyter_agent.tools import Tool, ToolContext
from jupyter_agent.tools.files import delete_file, grep, read_file, update_file
from jupyter_agent.tools.notebook import update_cell
from jupyter_agent.tools.sessions import search_sessions

TOKEN = "Xq9zT4k1Lm8Rw2Vb7Nc5Hd3Gf6Js0Pa4Qe1"  # 36 characters, known by value
NAME = "WAREHOUSE_TOKEN"
PAT = "ghp_" + "Kd83hfQ0zPl2mW9xYv4tR7sB1nC6aE5uJ8gH"  # known by its shape only
ALPHABET = string.ascii_letters + string.digits + "_-"

Probe = Generator[str, bool, str]
"""An attack: it yields a question, is sent whether the answer said yes, and returns
what it rebuilt."""


def _secrets() -> Secrets:
    return Secrets(lambda: {NAME: TOKEN})


def _context(workspace: Path, **resources: Any) -> ToolContext:
    ctx = ToolContext(workspace=workspace)
    ctx.resources.insert(_secrets())
    for value in resources.values():
        ctx.resources.insert(value)
    return ctx


async def _seen(tool: Tool, ctx: ToolContext, **args: Any) -> str:
    """What the model reads of a call: the result, or the refusal, redacted."""
    try:
        out = await tool.call(ctx, args)
        said = out.text
    except ToolError as exc:
        said = str(exc)
    return _secrets().redact(said)


def by_halves(head: str, escape: Callable[[str], str] = re.escape) -> Probe:
    """Character by character, halving the candidates with a regex class each time (about
    six questions a character: the issue's 213 calls for 36 characters)."""
    known = ""
    while len(known) < 64:
        chars = ALPHABET
        if not (yield f"{escape(head + known)}[{re.escape(chars)}]"):
            return known
        while len(chars) > 1:
            half = chars[: len(chars) // 2]
            asked = f"{escape(head + known)}[{re.escape(half)}]"
            chars = half if (yield asked) else chars[len(half) :]
        known += chars
    return known


def one_by_one(head: str, alphabet: str = ALPHABET, start: str = "") -> Probe:
    """Character by character, trying each candidate as literal text."""
    known = start
    while len(known) < 64:
        for ch in alphabet:
            if (yield head + known + ch):
                known += ch
                break
        else:
            return known
    return known


async def _attack(probe: Probe, ask: Callable[[str], Any]) -> tuple[str, int]:
    """Drive ``probe`` with ``ask`` (an async yes/no); what it rebuilt and how many calls."""
    calls = 0
    question = next(probe)
    try:
        while True:
            calls += 1
            question = probe.send(await ask(question))
    except StopIteration as done:
        return done.value, calls


# --- grep: match or no match, counts ------------------------------------------------------


@pytest.fixture
def planted(workspace: Path) -> Path:
    (workspace / "warehouse.env").write_text(
        f"# connection\n{NAME}={TOKEN}\nGITHUB={PAT}\nREGION=eu-west-1\n"
    )
    return workspace


@pytest.mark.parametrize(("head", "secret"), [(f"{NAME}=", TOKEN), ("GITHUB=", PAT)])
async def test_grep_answers_nothing_about_a_masked_value(planted, head, secret):
    ctx = _context(planted)
    read = await _seen(read_file, ctx, path="warehouse.env")
    assert secret not in read

    async def matched(pattern: str) -> bool:
        said = await _seen(grep, ctx, pattern=pattern, path="warehouse.env")
        return not said.startswith("No matches")

    rebuilt, _ = await _attack(by_halves(head), matched)
    assert head + rebuilt in read  # no more than the read shows (ghp_ of ghp_•••)


async def test_a_secret_written_into_a_file_grep_found_clean_is_masked(workspace, coarse_stamps):
    # A file whose text showed nothing hidden is not masked again until its status changes.
    # Where stamps keep whole or even seconds, a rewrite of the same length within that
    # step leaves the status as it was: grep must not search it unmasked then.
    ctx = _context(workspace)
    notes = workspace / "notes.txt"
    notes.write_text(f"GITHUB={'x' * len(PAT)}\n")
    said = await _seen(grep, ctx, pattern="GITHUB=x", path="notes.txt")
    assert not said.startswith("No matches")
    notes.write_text(f"GITHUB={PAT}\n")
    said = await _seen(grep, ctx, pattern=re.escape(PAT[:12]), path="notes.txt")
    assert said.startswith("No matches"), said


async def test_grep_counts_and_ignore_case_answer_nothing_either(planted):
    ctx = _context(planted)
    said = [
        await _seen(grep, ctx, pattern=p, path=".", ignore_case=ic)
        for p, ic in [
            (f"{TOKEN[:5]}", False),
            (f"{TOKEN[:5].lower()}", True),
            (f"(?={TOKEN[:3]})", False),
            ("Xq9", False),
            ("X", False),  # matches the visible text only
        ]
    ]
    assert all(s.startswith("No matches") for s in said[:4]), said
    assert "1 match" not in said[4] or TOKEN[:2] not in said[4]


async def test_a_glob_answers_nothing_about_a_masked_file_name(workspace):
    (workspace / f"{PAT}.txt").write_text("hello\n")
    ctx = _context(workspace)

    async def matched(pattern: str) -> bool:
        said = await _seen(grep, ctx, pattern="hello", glob=pattern + "*")
        return not said.startswith("No matches")

    rebuilt, _ = await _attack(one_by_one("ghp_", start=""), matched)
    assert rebuilt == ""


async def test_the_planner_rebuilds_nothing_with_213_greps_through_the_real_client(
    planted, monkeypatch
):
    """The attack as it happened: the read-only Planner, a hostile model behind the real
    Anthropic client, grep after grep, nothing asked."""
    monkeypatch.setenv(NAME, TOKEN)
    probe = by_halves(f"{NAME}=")
    rebuilt: list[str] = []
    asked = 0

    def respond(body: dict[str, Any]) -> Reply:
        nonlocal asked
        last = body["messages"][-1]["content"]
        answer = _result_text(last)
        try:
            question = next(probe) if answer is None else probe.send(_matched(answer))
        except StopIteration as done:
            rebuilt.append(done.value)
            return Reply([text(f"I rebuilt {len(done.value)} characters.")])
        asked += 1
        return Reply([tool_use("grep", {"pattern": question, "path": "warehouse.env"})], "tool_use")

    with MessagesServer() as server:
        server.responder = respond
        model = AnthropicModel("claude-test", base_url=server.url, api_key="k", retry_delay=0)
        agent = Agent("planner", model, workspace=planted, max_steps=400)
        handle = await agent.run("look around")
    assert handle.state.value == "completed", handle.stop_message
    assert rebuilt == [""], (rebuilt, asked)
    assert not any(e.kind == "permission_request" for e in handle.events_so_far)


def _result_text(content: Any) -> str | None:
    if not isinstance(content, list):
        return None
    for block in content:
        if block.get("type") == "tool_result":
            inner = block.get("content")
            if isinstance(inner, list):
                return "".join(b.get("text", "") for b in inner)
            return str(inner)
    return None


def _matched(said: str) -> bool:
    return not said.startswith("No matches")


# --- update_file: found, not found, found twice, and how close ----------------------------


@pytest.mark.parametrize(("head", "secret"), [(f"{NAME}=", TOKEN), ("GITHUB=", PAT)])
async def test_update_file_answers_nothing_about_a_masked_value(planted, head, secret):
    ctx = _context(planted)
    before = (planted / "warehouse.env").read_text()

    async def found(old_text: str) -> bool:
        # new_text differs, so a match would edit: the hostile model does not care.
        said = await _seen(
            update_file, ctx, path="warehouse.env", old_text=old_text, new_text=old_text + "#"
        )
        if said.startswith("Updated"):
            (planted / "warehouse.env").write_text(before)  # put it back, ask again
            return True
        return "occurs" in said

    rebuilt, _ = await _attack(one_by_one(head), found)
    read = await _seen(read_file, ctx, path="warehouse.env")
    assert head + rebuilt in read  # no more than the read shows (ghp_ of ghp_•••)
    assert (planted / "warehouse.env").read_text() == before


async def test_update_files_closest_text_says_the_same_whatever_the_hidden_value(workspace):
    """The not-found message shows the closest lines and how similar they are: computed
    from the real text, the likeness would climb as a guess nears the secret. The same
    guess against two files that differ only in the hidden value gets the same answer."""
    other = "Bq7yS3j0Kl9Tv1Wc8Mb6Ge2Hd5Ir9Oz3Pf0Rx"
    guess = f"{NAME}={TOKEN[:20]}!"
    said = []
    for value in (TOKEN, other):
        (workspace / "warehouse.env").write_text(f"# connection\n{NAME}={value}\n")
        ctx = ToolContext(workspace=workspace)

        def read_secrets(v: str = value) -> dict[str, str]:
            return {NAME: v}

        ctx.resources.insert(Secrets(read_secrets))
        try:
            await update_file.call(
                ctx, {"path": "warehouse.env", "old_text": guess, "new_text": ""}
            )
        except ToolError as exc:
            said.append(str(exc))
    assert len(said) == 2 and said[0] == said[1], said
    assert "not found" in said[0]


# --- notebook cells: find ------------------------------------------------------------------


async def test_a_cells_find_answers_nothing_about_a_masked_value(tmp_path):
    path = tmp_path / "work" / "analysis.ipynb"
    path.parent.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(f'{NAME} = "{TOKEN}"\nconnect({NAME})', id="conn")]
    nbformat.write(nb, path)
    ctx = _context(path.parent, bridge=FileBridge(path))
    from jupyter_agent.notebook.bridge import NotebookBridge

    ctx.resources.insert(FileBridge(path), NotebookBridge)

    async def found(piece: str) -> bool:
        said = await _seen(update_cell, ctx, cell_id="conn", find=piece, replace=piece)
        return "does not occur" not in said  # found once, or "occurs N times"

    rebuilt, _ = await _attack(one_by_one(f'{NAME} = "'), found)
    assert rebuilt == ""
    assert TOKEN in nbformat.read(path, 4).cells[0].source  # untouched


# --- reading a range, cutting a long line ------------------------------------------------


PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEA7bq4V3rYw9h2c5zZkV8xJ2nL0pQm\n"
    "t5Wq1Zs9Xc2Vb3Nm4Kj8Hg6Fd7Sa0Qw1Er2Ty3Ui4Op5\n"
    "-----END RSA PRIVATE KEY-----\n"
)


async def test_a_range_that_starts_inside_a_private_key_shows_none_of_it(workspace):
    (workspace / "deploy_notes.md").write_text("# key\n" + PEM + "# end\n")
    ctx = _context(workspace)
    for start, end in [(3, 3), (3, 4), (4, 6), (1, 7)]:
        said = await _seen(read_file, ctx, path="deploy_notes.md", start_line=start, end_line=end)
        assert "MIIEow" not in said and "t5Wq1Z" not in said, (start, said)


async def test_a_value_split_over_lines_shows_in_no_range_and_no_diff(workspace):
    source = f'x = 1\n{NAME.lower()} = ("{TOKEN[:18]}"\n    "{TOKEN[18:]}")\ny = 2\n'
    (workspace / "conf.py").write_text(source)
    ctx = _context(workspace)
    for start in (1, 2, 3):
        said = await _seen(read_file, ctx, path="conf.py", start_line=start)
        assert TOKEN[:18] not in said and TOKEN[18:] not in said, said
    said = await _seen(delete_file, ctx, path="conf.py")
    out = await delete_file.call(_context_restored(workspace, source), {"path": "conf.py"})
    for shown in (said, _secrets().redact(out.diff or "")):
        assert TOKEN[:18] not in shown and TOKEN[18:] not in shown, shown


def _context_restored(workspace: Path, source: str) -> ToolContext:
    (workspace / "conf.py").write_text(source)
    return _context(workspace)


async def test_a_line_cut_for_length_never_shows_part_of_a_value(workspace):
    for pad in (1990, 1995, 2000 - len(TOKEN) // 2):
        (workspace / "wide.txt").write_text("x" * pad + TOKEN + "\n")
        said = await _seen(read_file, _context(workspace), path="wide.txt")
        assert TOKEN[:6] not in said, pad
        assert "more characters on this line" in said


# --- search_sessions: a word's prefix ------------------------------------------------------


async def test_search_sessions_answers_nothing_about_a_masked_value(workspace, monkeypatch):
    hex_token = "4f9a0c7e2b5d8f1a3c6e9b2d5f8a1c4e"
    past = Agent("planner", ScriptedModel([{"text": "Noted."}]), workspace=workspace)
    await past.run(f"the warehouse answers to {hex_token} from now on")
    ctx = ToolContext(workspace=workspace, session_id="another")
    ctx.resources.insert(Secrets(lambda: {NAME: hex_token}))
    redact = Secrets(lambda: {NAME: hex_token}).redact

    async def found(query: str) -> bool:
        try:
            said = (await search_sessions.call(ctx, {"query": query})).text
        except ToolError as exc:
            said = str(exc)
        return "No past session" not in redact(said)

    assert await found("warehouse answers")  # what the session shows is found
    rebuilt, _ = await _attack(one_by_one("", "0123456789abcdef", start="4"), found)
    assert rebuilt == "4"  # the first character was given; no other was learned


# --- legitimate work goes on ---------------------------------------------------------------


async def test_ordinary_searches_and_edits_near_a_secret_still_work(planted):
    ctx = _context(planted)
    said = await _seen(grep, ctx, pattern=r"REGION=\w+", path=".")
    assert "warehouse.env:4: REGION=eu-west-1" in said
    said = await _seen(grep, ctx, pattern=f"{NAME}=", path=".")
    assert f"warehouse.env:2: {NAME}=‹secret:{NAME}›" in said  # the masked line is found
    said = await _seen(
        update_file, ctx, path="warehouse.env", old_text="REGION=eu-west-1", new_text="REGION=us"
    )
    assert said.startswith("Updated")
    # The line above the secret, and the secret's line kept as read: the value stays.
    said = await _seen(
        update_file,
        ctx,
        path="warehouse.env",
        old_text=f"# connection\n{NAME}=‹secret:{NAME}›",
        new_text=f"# warehouse connection\n{NAME}=‹secret:{NAME}›",
    )
    assert said.startswith("Updated"), said
    assert (planted / "warehouse.env").read_text() == (
        f"# warehouse connection\n{NAME}={TOKEN}\nGITHUB={PAT}\nREGION=us\n"
    )
    assert TOKEN not in said and PAT not in said


async def test_a_secret_can_be_removed_but_not_cut_copied_or_shown(planted):
    ctx = _context(planted)
    path = planted / "warehouse.env"
    before = path.read_text()
    refusals = {
        # cuts through the masked text
        "cuts through": {"old_text": "GITHUB=ghp_•", "new_text": "GITHUB=x"},
        # copies the masked value into a changed line
        "not on a line of old_text": {
            "old_text": "REGION=eu-west-1",
            "new_text": f"REGION=eu-west-1\nCOPY=‹secret:{NAME}›",
        },
        # changes what marks it as a secret: ghp_ would show the rest
        "would show a value": {"old_text": "GITHUB=ghp_", "new_text": "GITHUB=xhp_"},
    }
    for said_part, args in refusals.items():
        said = await _seen(update_file, ctx, path="warehouse.env", **args)
        assert said_part in said, said
        assert path.read_text() == before
    said = await _seen(
        update_file,
        ctx,
        path="warehouse.env",
        old_text=f"{NAME}=‹secret:{NAME}›\n",
        new_text="",
    )
    assert said.startswith("Updated"), said
    assert TOKEN not in path.read_text() and PAT in path.read_text()


async def test_an_edit_through_the_real_run_loop_keeps_a_secret_it_never_saw(workspace):
    (workspace / "settings.py").write_text(f'DEBUG = True\n{NAME} = "{TOKEN}"\n')
    model = ScriptedModel(
        [
            call("read_file", path="settings.py"),
            call(
                "update_file",
                path="settings.py",
                old_text=f'DEBUG = True\n{NAME} = "‹secret:{NAME}›"',
                new_text=f'import os\n\n{NAME} = "‹secret:{NAME}›"\nDEBUG = False',
            ),
            {"text": "done"},
        ]
    )
    from jupyter_agent.config.rules import Everything, Rule, Rules

    agent = Agent("actor", model, workspace=workspace, policy=Rules([Rule.allow(Everything())]))
    agent.secrets.add(TOKEN, NAME)
    await agent.run("tidy settings")
    results = [r.text for m in agent.history for r in m.tool_results]
    assert results[1].startswith("Updated settings.py"), results[1]
    assert (workspace / "settings.py").read_text() == (
        f'import os\n\n{NAME} = "{TOKEN}"\nDEBUG = False\n'
    )
    assert TOKEN not in json.dumps(results)


# --- ids derived from a cell's content ----------------------------------------------------


async def test_a_cells_derived_id_says_nothing_of_a_masked_password(tmp_path):
    """Most notebooks store no cell ids; the ones derived for them from content are shown
    to the model. A hash of a cell holding a short password would let it be guessed
    offline, so the id is the same whatever the password."""
    from jupyter_agent.notebook.file import FileBridge

    ids = []
    for password in ("hunter22", "hunter23"):
        path = tmp_path / f"{password}.ipynb"
        nb = nbformat.v4.new_notebook()
        nb.nbformat_minor = 4  # before cell ids
        nb.cells = [nbformat.v4.new_code_cell(f'password = "{password}"\nconnect(password)')]
        for cell in nb.cells:
            cell.pop("id", None)
        nbformat.write(nb, path)
        ids.append([c.id for c in await FileBridge(path).read()])
    assert ids[0] == ids[1]


async def test_a_past_sessions_passage_is_quoted_from_what_it_shows(workspace):
    """A match inside a value would be marked in the quote (**…**), cutting the value in
    pieces the redaction no longer knows whole: the quote is taken from the passage as
    the model may read it."""
    value = "4f9a0c7e-2b5d8f1a-3c6e9b2d"
    past = Agent("planner", ScriptedModel([{"text": "Noted."}]), workspace=workspace)
    await past.run(f"the warehouse answers to {value} from now on")
    ctx = ToolContext(workspace=workspace, session_id="another")
    secrets = Secrets(lambda: {NAME: value})
    ctx.resources.insert(secrets)
    said = secrets.redact((await search_sessions.call(ctx, {"query": "warehouse 2b5d8f1a"})).text)
    _, _, found = said.partition("\n")  # after the line that echoes the query
    assert "**warehouse**" in found
    for piece in value.split("-"):
        assert piece not in found, found
