"""The built-in loops. A loop is any ``async def loop(run: Run) -> None``.

``tool_use_loop`` is the model's native loop: its text is the reasoning, its tool
calls the actions, their results the observations. ``roa_loop`` makes the three
phases explicit calls of their own (reason → act → observe), each prompted by a
file under prompts/ and each emitting its own events.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

from ..errors import ModelError
from ..events import ObserveEvent, ReasonEvent
from ..messages import Message
from ._model_call import Turn
from ._prompts import load_prompt, render
from ._run import Run

Loop = Callable[[Run], Awaitable[None]]

CUT_OFF = "[Your reply was cut off at the output token limit. Continue exactly where it stopped.]"
WINDOW_FULL = (
    "[Your reply was cut off: the context window was full. The conversation was compacted; "
    "continue.]"
)


async def tool_use_loop(run: Run) -> None:
    """Call the model, run its tools, repeat until it finishes or a limit ends the run."""
    while not run.ended:
        await run.begin_step()
        turn = await run.call_model()
        if not await _act(run, turn):
            return


async def _act(run: Run, turn: Turn) -> bool:
    """Carry out one reply; False when the reply ends the run."""
    if turn.stop_reason == "refusal":
        raise ModelError("The model declined to continue with this request (refusal).")
    if turn.stop_reason == "model_context_window_exceeded":
        if not await run.agent.context.make_room(run, "too_long"):
            raise ModelError("The conversation no longer fits the model's context window.")
        if not turn.tool_uses:
            run.append(Message.user(WINDOW_FULL))
            return True
    if turn.tool_uses:
        await run.execute(turn.tool_uses, turn.truncated_tool_ids)
        return not run.ended
    if turn.stop_reason == "max_tokens":
        run.append(Message.user(CUT_OFF))
        return True
    if turn.stop_reason == "pause_turn":
        return True  # a server tool paused the turn; sending the history again resumes it
    run.complete(turn.text)
    return False


# --- reason → act → observe -----------------------------------------------------------

ACT_PROMPT = "agent_act_prompt"
REASON_PROMPT = "agent_reason_prompt"
OBSERVE_PROMPT = "agent_observe_prompt"


async def roa_loop(run: Run) -> None:
    """Strict reason → act → observe steps, until a phase says the task is finished."""
    observation = ""
    while not run.ended:
        step = await run.begin_step()
        values = {"task": run.task, "step": step, "max_steps": run.limits.max_steps}

        run.append(
            Message.user(
                render(
                    load_prompt(REASON_PROMPT),
                    last_observation=observation or "(none yet)",
                    **values,
                ),
                phase="reason",
            )
        )
        turn = await run.call_model(phase="reason", tool_choice="none")
        text, control = parse_control(turn.text)
        run.emit(ReasonEvent(step=step, text=text, control=control))
        if control and control.get("finish") is True:
            run.complete(str(control.get("final_answer") or text))
            return

        run.append(Message.user(render(load_prompt(ACT_PROMPT), **values), phase="act"))
        turn = await run.call_model(phase="act")
        if turn.stop_reason in ("refusal", "model_context_window_exceeded"):
            await _act(run, turn)
        if turn.tool_uses:
            await run.execute(turn.tool_uses, turn.truncated_tool_ids)
        if run.ended:
            return

        run.append(Message.user(render(load_prompt(OBSERVE_PROMPT), **values), phase="observe"))
        turn = await run.call_model(phase="observe", tool_choice="none")
        observation, control = parse_control(turn.text)
        run.emit(ObserveEvent(step=step, text=observation, control=control))
        if control and control.get("should_continue") is False:
            run.complete(str(control.get("final_answer") or observation))
            return


_FENCED = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL)


def parse_control(text: str) -> tuple[str, dict[str, Any] | None]:
    """Find the phase's JSON control block; return (text without it, the block).

    Lenient by design: a missing or malformed block leaves the text as it is and
    returns None, and the loop goes on.
    """
    for match in reversed(list(_FENCED.finditer(text))):
        block = _loads(match.group(1))
        if block is not None:
            return (text[: match.start()] + text[match.end() :]).strip(), block
    found: tuple[int, int, dict[str, Any]] | None = None
    start = text.find("{")
    while start != -1:
        end = _balanced_end(text, start)
        block = _loads(text[start:end]) if end is not None else None
        if block is not None and end is not None:
            found = (start, end, block)  # keep the last top-level object
            start = text.find("{", end)
        else:
            start = text.find("{", start + 1)
    if found is not None:
        start, end, block = found
        return (text[:start] + text[end:]).strip(), block
    return text, None


def _loads(candidate: str) -> dict[str, Any] | None:
    try:
        value = json.loads(candidate)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _balanced_end(text: str, start: int) -> int | None:
    depth = 0
    in_string = escaped = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


LOOPS: dict[str, Loop] = {"tool_use": tool_use_loop, "roa": roa_loop}
