"""Runs the agent makes itself rather than the model: remembering a line, compacting.

Invariant: such a run still goes through the run engine (its steps, events and permission
rules), so the user sees it and can stop it like any other run; it only calls no model
(remember) or calls it only to summarise (compact).
"""

from __future__ import annotations

from pathlib import Path

from ..config.instructions import REMEMBER_HEADER, REMEMBER_LIMIT
from ..messages import Message, ToolUseBlock, new_id
from ..workspace.paths import Root
from ._context import Context
from ._loops import Loop
from ._run import Run


def remember_loop(workspace: Path, text: str) -> tuple[str, Loop]:
    """The line ``text`` becomes in ``workspace``'s ``AGENTS.md``, and the loop of a run
    whose one call is ``create_file`` adding it. Raises ValueError for an empty text or
    an ``AGENTS.md`` that cannot be added to."""
    line = " ".join(text.split())
    if not line:
        raise ValueError("say what to remember: %agent remember TEXT")
    path = workspace / "AGENTS.md"
    try:  # through the path gate: a link out of the workspace or a FIFO is refused
        old = Root(workspace).read("AGENTS.md", limit=REMEMBER_LIMIT).decode()
        exists = True
    except FileNotFoundError:
        old, exists = "", False
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not UTF-8 text: edit it yourself") from None
    except OSError as exc:  # a link out, not a regular file, too large
        raise ValueError(f"{path} cannot be added to: {exc}. Edit it yourself.") from None
    head = old if not old or old.endswith("\n") else old + "\n"
    content = (head if exists else REMEMBER_HEADER) + f"- {line}\n"
    call = ToolUseBlock(
        id=f"toolu_remember_{new_id()}",
        name="create_file",
        input={"path": "AGENTS.md", "content": content, "overwrite": exists},
    )

    async def write(run: Run) -> None:
        await run.begin_step()
        run.append(Message(role="assistant", content=[call], message_type="tool_call"))
        [result] = await run.execute([call])
        if result.is_error:
            run.complete(f"Not remembered: {result.text}")
        else:
            run.complete(f"Remembered in {path}: {line}")

    return line, write


def compact_loop(context: Context) -> Loop:
    """The loop of a run that makes the conversation smaller now (``manual`` compaction)."""

    async def compact(run: Run) -> None:
        await run.begin_step()
        changed = await context.make_room(run, "manual")
        run.complete("Compacted the conversation." if changed else "There was nothing to compact.")

    return compact
