"""The two built-in loops and a programmer-written one."""

from __future__ import annotations

from typing import Any

from helpers import assert_valid, call

from jupyter_agent import Agent, ScriptedModel, tool
from jupyter_agent.agent import Run, parse_control
from jupyter_agent.events import AgentStartEvent
from jupyter_agent.messages import Message


@tool
def count_rows(table: str) -> str:
    """Count the rows of a table."""
    return f"{table}: 120 rows"


def reason(text: str, finish: bool = False, **extra: Any) -> dict[str, Any]:
    import json

    block = json.dumps(
        {"plan": text, "tools_to_consider": ["count_rows"], "finish": finish, **extra}
    )
    return {"text": f"{text}\n\n```json\n{block}\n```"}


def observe(text: str, should_continue: bool = True, final_answer: str = "") -> dict[str, Any]:
    import json

    block = json.dumps(
        {"observation": text, "should_continue": should_continue, "final_answer": final_answer}
    )
    return {"text": f"{text}\n```json\n{block}\n```"}


async def test_roa_runs_reason_act_observe_in_order_with_phase_events(workspace):
    model = ScriptedModel(
        [
            reason("I should count the rows first."),
            call("count_rows", table="sales"),
            observe("There are 120 rows."),
            reason("Now I can answer."),
            {"text": "No tool needed."},
            observe("Done.", should_continue=False, final_answer="The table has 120 rows."),
        ]
    )
    agent = Agent("actor", model, workspace=workspace, tools=[count_rows], loop="roa")
    handle = await agent.run("How many rows has sales?")
    assert handle.state.value == "completed"
    assert handle.summary == "The table has 120 rows."
    phases = [
        e.kind
        for e in handle.events_so_far
        if e.kind in ("reason", "tool_start", "observe", "turn_start")
    ]
    assert phases == [
        "turn_start",
        "reason",
        "tool_start",
        "observe",
        "turn_start",
        "reason",
        "observe",
    ]
    first_reason = next(e for e in handle.events_so_far if e.kind == "reason")
    assert first_reason.text == "I should count the rows first."  # control block split off
    assert first_reason.control is not None
    assert first_reason.control["tools_to_consider"] == ["count_rows"]
    # reason and observe are plain calls: no tool use allowed; act may use tools
    assert [r.tool_choice for r in model.requests] == [
        "none",
        "auto",
        "none",
        "none",
        "auto",
        "none",
    ]
    # each phase's prompt comes from prompts/ and is part of the conversation
    prompts = [m for m in agent.history if m.role == "user" and m.phase]
    assert [m.phase for m in prompts] == ["reason", "act", "observe"] * 2
    assert "[Reason — step 1 of at most 30]" in prompts[0].text
    assert "Last observation: There are 120 rows." in prompts[3].text
    deltas = {e.phase for e in handle.events_so_far if e.kind == "text_delta"}
    assert deltas == {"reason", "act", "observe"}
    assert_valid(agent.history)


async def test_roa_reason_can_finish(workspace):
    model = ScriptedModel([reason("Nothing to do.", finish=True, final_answer="Already clean.")])
    handle = await Agent("actor", model, workspace=workspace, loop="roa").run("check")
    assert handle.summary == "Already clean."
    assert len(model.requests) == 1


async def test_roa_malformed_control_blocks_are_kept_as_text_and_the_loop_goes_on(workspace):
    model = ScriptedModel(
        [
            {"text": "Thinking... ```json\n{not json```"},
            {"text": "acting"},
            {"text": 'Observed {"should_continue": tru'},
            reason("ok", finish=True, final_answer="fine"),
        ]
    )
    handle = await Agent("actor", model, workspace=workspace, loop="roa").run("x")
    reasons = [e for e in handle.events_so_far if e.kind == "reason"]
    assert reasons[0].control is None
    assert reasons[0].text == "Thinking... ```json\n{not json```"
    assert handle.summary == "fine"


async def test_roa_respects_max_steps(workspace):
    model = ScriptedModel([reason("a"), {"text": "b"}, observe("c")] * 5)
    handle = await Agent("actor", model, workspace=workspace, loop="roa", max_steps=2).run("x")
    assert handle.stop_reason == "iteration_limit"
    assert handle.step == 2
    assert_valid(handle.history)


async def test_roa_task_complete_in_act_ends_the_run(workspace):
    model = ScriptedModel([reason("finish"), call("task_complete", summary="all good")])
    handle = await Agent("actor", model, workspace=workspace, loop="roa").run("x")
    assert handle.summary == "all good"
    assert len(model.requests) == 2


def test_parse_control_finds_the_last_top_level_object():
    text, block = parse_control('Some {"a": 1} text then {"finish": true, "nested": {"b": 2}}')
    assert block == {"finish": True, "nested": {"b": 2}}
    assert text == 'Some {"a": 1} text then'
    assert parse_control("no json here") == ("no json here", None)
    assert parse_control('quote "{" inside {"x": "}"}')[1] == {"x": "}"}


async def test_a_programmer_written_loop_uses_the_same_pieces(workspace):
    async def two_shot(run: Run) -> None:
        """Ask twice, keep the second answer."""
        await run.begin_step()
        await run.call_model()
        run.append(Message.user("Answer again, shorter."))
        await run.begin_step()
        turn = await run.call_model()
        run.complete(turn.text)

    model = ScriptedModel([{"text": "A long first answer."}, {"text": "Short."}])
    handle = await Agent("planner", model, workspace=workspace, loop=two_shot).run("q")
    assert handle.summary == "Short."
    start = handle.events_so_far[1]
    assert isinstance(start, AgentStartEvent)
    assert start.loop == "two_shot"
    assert_valid(handle.history)


async def test_max_tokens_inside_a_tool_call_asks_for_a_smaller_step(workspace):
    from jupyter_agent.messages import ToolUseBlock
    from jupyter_agent.models import ModelResponse, StreamDone, Usage

    class CutOff(ScriptedModel):
        async def stream(self, request):
            if not self.requests:
                self.requests.append(request)
                block = ToolUseBlock(id="toolu_cut", name="count_rows", input={})
                yield StreamDone(
                    ModelResponse([block], "max_tokens", Usage(calls=1), "m", ["toolu_cut"])
                )
                return
            async for part in super().stream(request):
                yield part

    model = CutOff([{"text": "ok, smaller"}])
    agent = Agent("actor", model, workspace=workspace, tools=[count_rows])
    handle = await agent.run("x")
    result = agent.history[2].tool_results[0]
    assert result.is_error
    assert "hit the output token limit" in result.text
    assert handle.state.value == "completed"
    assert_valid(agent.history)


async def test_max_tokens_in_text_asks_the_model_to_continue(workspace):
    model = ScriptedModel([{"text": "part one", "stop_reason": "max_tokens"}, {"text": "part two"}])
    agent = Agent("actor", model, workspace=workspace)
    handle = await agent.run("x")
    assert handle.summary == "part two"
    assert "cut off at the output token limit" in agent.history[2].text


async def test_refusal_ends_the_run_with_an_error(workspace):
    model = ScriptedModel([{"text": "I can't help with that.", "stop_reason": "refusal"}])
    handle = await Agent("actor", model, workspace=workspace).run("x")
    assert handle.state.value == "error"
    assert "declined" in handle.stop_message
