"""One event of every kind: what the event, renderer and panel protocol tests run each kind
through."""

from __future__ import annotations

from jupyter_agent import events as ev
from jupyter_agent.plans import Plan, PlanStep, Question, QuestionOption
from jupyter_agent.states import AgentState

PLAN = Plan(goal="g", steps=[PlanStep(step_number=1, action="a")])
QUESTION = Question(question="q?", options=[QuestionOption(label="Yes", value="y")], default="y")

SAMPLES: list[ev.Event] = [
    ev.AgentStartEvent(task="t", role="planner", model="m", loop="tool_use", max_steps=3),
    ev.TurnStartEvent(step=1),
    ev.TextDeltaEvent(text="he", phase="reason"),
    ev.TextEvent(text="hello", interrupted=True),
    ev.ThinkingDeltaEvent(text="hmm"),
    ev.ReasonEvent(step=1, text="r", control={"finish": False}),
    ev.ObserveEvent(step=1, text="o", control=None),
    ev.ToolStartEvent(tool_use_id="t", name="read_file", input={"path": "a"}, summary="Read a"),
    ev.ToolProgressEvent(tool_use_id="t", output="line"),
    ev.ToolEndEvent(tool_use_id="t", name="read_file", result="x\ny", is_error=True, diff="-a\n+b"),
    ev.PlanEvent(plan=PLAN),
    ev.PlanStepEvent(step_number=1, status="done", note="ok"),
    ev.QuestionEvent(question_id="q", question=QUESTION, timeout=3.0),
    ev.AnswerEvent(question_id="q", value="y", label="Yes"),
    ev.RequestInputTimeoutEvent(question_id="q", timeout=3.0),
    ev.PermissionRequestEvent(request_id="r", tool_use_id="t", tool_name="x", summary="s"),
    ev.PermissionResponseEvent(
        request_id="r", tool_name="x", allowed=True, remember=True, rule="r1"
    ),
    ev.UpdateEvent(message="working"),
    ev.StateEvent(state=AgentState.thinking, previous=AgentState.running),
    ev.UsageEvent(input_tokens=3, run_input_tokens=3, run_cache_read_input_tokens=1),
    ev.ContextEvent(used_tokens=120_000, window=200_000, cached_tokens=90_000),
    ev.CompactionEvent(
        reason="auto", cleared=3, summarised=12, tokens_before=170_000, tokens_after=40_000
    ),
    ev.RetryEvent(attempt=1, reason="overloaded_error", delay=0.1),
    ev.WarningEvent(message="careful"),
    ev.StoppedEvent(reason="manual_stop", message="Stopped by the user."),
    ev.CompletedEvent(summary="done"),
    ev.ErrorEvent(message="boom", error_type="ModelError"),
    ev.SubagentSpawnedEvent(child_session_id="c", agent_type="planner", task="t"),
    ev.SubagentOutputEvent(
        child_session_id="c",
        event=ev.ToolStartEvent(tool_use_id="t", name="n", input={}, summary="s"),
    ),
    ev.SubagentCompleteEvent(child_session_id="c", result="r", state=AgentState.completed),
]
