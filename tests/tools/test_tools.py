from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel

from jupyter_agent.errors import ToolError
from jupyter_agent.tools import ResourceMap, Tool, ToolContext, ToolOutput, ToolRegistry, tool
from jupyter_agent.tools.control import CONTROL_TOOLS


class Point(BaseModel):
    x: int
    y: int = 0


@tool(category="read", permissions={"read_files"}, summary="Read {path}")
async def read_lines(
    ctx: ToolContext, path: str, start: int = 1, mode: Literal["a", "b"] = "a"
) -> str:
    """Read lines of a file.

    Longer description on a second paragraph.

    Args:
        path: File to read,
            relative to the workspace.
        start: First line (1-based).
        mode: Reading mode.
    """
    return f"{ctx.tool_use_id}:{path}:{start}:{mode}"


def test_schema_comes_from_signature_and_docstring():
    spec = read_lines.spec()
    assert spec["name"] == "read_lines"
    assert spec["description"].startswith("Read lines of a file.")
    assert "Args:" not in spec["description"]
    schema = spec["input_schema"]
    assert schema["type"] == "object"
    assert schema["required"] == ["path"]
    assert schema["properties"]["path"] == {
        "type": "string",
        "description": "File to read, relative to the workspace.",
    }
    assert schema["properties"]["start"]["default"] == 1
    assert schema["properties"]["mode"]["enum"] == ["a", "b"]
    assert schema["additionalProperties"] is False


def test_hidden_context_never_appears_in_the_schema():
    assert "ctx" not in read_lines.input_schema["properties"]
    assert read_lines.takes_context


def test_nested_models_are_inlined_without_refs():
    @tool
    def place(points: list[Point]) -> str:
        """Place points."""
        return str(points)

    text = str(place.input_schema)
    assert "$ref" not in text and "$defs" not in text
    assert (
        place.input_schema["properties"]["points"]["items"]["properties"]["x"]["type"] == "integer"
    )


async def test_call_validates_and_passes_context():
    out = await read_lines.call(ToolContext(tool_use_id="t1"), {"path": "a.txt", "start": "3"})
    assert out.text == "t1:a.txt:3:a"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "path: Field required"),
        ({"path": "a", "start": "x"}, "start: Input should be a valid integer"),
        ({"path": "a", "mode": "c"}, "mode: Input should be 'a' or 'b'"),
        ({"path": "a", "bogus": 1}, "bogus: unexpected argument"),
    ],
)
async def test_invalid_arguments_say_what_is_wrong(args, message):
    with pytest.raises(ToolError, match="Invalid arguments for read_lines") as info:
        await read_lines.call(ToolContext(), args)
    assert message in str(info.value)


async def test_sync_tools_and_return_values():
    @tool
    def plain(n: int) -> dict[str, int]:
        """Return a dict."""
        return {"n": n}

    @tool
    def nothing() -> None:
        """Nothing."""

    @tool
    def rich() -> ToolOutput:
        """Rich output."""
        return ToolOutput("text", diff="-a\n+b")

    assert (await plain.call(ToolContext(), {"n": 2})).text == '{\n "n": 2\n}'
    assert (await nothing.call(ToolContext(), {})).text == "Done."
    assert (await rich.call(ToolContext(), {})).diff == "-a\n+b"


def test_summary_from_template_callable_or_default():
    assert read_lines.summary({"path": "x.csv"}) == "Read x.csv"

    @tool(summary=lambda a: f"n={a['n']}")
    def f(n: int) -> str:
        """F."""
        return ""

    @tool
    def g(text: str, n: int = 1) -> str:
        """G."""
        return ""

    assert f.summary({"n": 3}) == "n=3"
    assert g.summary({"text": "x" * 100, "n": 2}).startswith("g(text='xxxxx")
    assert len(g.summary({"text": "x" * 100})) < 60


def test_tools_need_type_hints_and_valid_names():
    def untyped(x):
        """No hints."""

    with pytest.raises(TypeError, match="needs a type hint"):
        Tool(untyped)
    with pytest.raises(ValueError, match="must match"):
        Tool(lambda: None, name="bad name")


def test_registry_filters_by_permission_and_refuses_duplicates():
    reg = ToolRegistry([read_lines, *CONTROL_TOOLS])
    assert reg.names()[0] == "read_lines"
    assert [t.name for t in reg.allowed(frozenset())] == [t.name for t in CONTROL_TOOLS]
    assert "read_lines" in [t.name for t in reg.allowed(frozenset({"read_files"}))]
    with pytest.raises(ValueError, match="already registered"):
        reg.register(read_lines)


def test_resource_map_is_typed():
    class Bridge:
        pass

    resources = ResourceMap()
    bridge = Bridge()
    resources.insert(bridge)
    assert resources[Bridge] is bridge
    assert Bridge in resources
    with pytest.raises(KeyError, match="no int resource"):
        resources[int]


def test_control_tool_names_are_the_contract():
    assert [t.name for t in CONTROL_TOOLS] == [
        "submit_plan",
        "ask_user",
        "send_update",
        "task_complete",
        "update_plan_step",
    ]
    plan_schema = CONTROL_TOOLS[0].input_schema
    assert set(plan_schema["required"]) == {"goal", "steps"}
    step = plan_schema["properties"]["steps"]["items"]["properties"]
    assert {"step_number", "action", "reason", "tools_needed", "estimated_time"} <= set(step)


# --- the run as tools see it ------------------------------------------------------------


class FakeRun:
    """A RunControl without the engine: what the control tools did, in order."""

    id = "run-1"

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[object, ...]]] = []

    async def ask(self, question):
        self.calls.append(("ask", (question.question,)))
        return "yes", None

    def submit_plan(self, plan):
        self.calls.append(("submit_plan", (plan.goal,)))

    def update_plan_step(self, step_number, status, note=""):
        self.calls.append(("update_plan_step", (step_number, status, note)))

    def send_update(self, message):
        self.calls.append(("send_update", (message,)))

    def warn(self, message):
        self.calls.append(("warn", (message,)))

    def complete(self, summary, message=None):
        self.calls.append(("complete", (summary, message)))

    def tool_progress(self, tool_use_id, output):
        self.calls.append(("tool_progress", (tool_use_id, output)))

    async def spawn(self, task, *, role="planner", tool_use_id=None, **options):
        raise NotImplementedError


async def test_control_tools_steer_the_run_only_through_run_control():
    from jupyter_agent.agent import Run
    from jupyter_agent.tools import RunControl

    members = {name for name in RunControl.__dict__ if not name.startswith("_")}
    assert members - set(dir(Run)) == {"id"}  # an attribute each Run sets in __init__
    run = FakeRun()
    ctx = ToolContext(tool_use_id="t1", run=run)
    tools = {t.name: t for t in CONTROL_TOOLS}
    step = {"step_number": 1, "action": "Look around"}
    await tools["submit_plan"].call(ctx, {"goal": "Tidy", "steps": [step]})
    await tools["ask_user"].call(ctx, {"question": "Go on?"})
    await tools["update_plan_step"].call(ctx, {"step_number": 1, "status": "done"})
    await tools["send_update"].call(ctx, {"message": "Half way"})
    await ctx.progress("50%")
    await tools["task_complete"].call(ctx, {"summary": "Tidied"})
    assert run.calls == [
        ("submit_plan", ("Tidy",)),
        ("complete", ("Plan: Tidy", "Submitted a plan with 1 step for review.")),
        ("ask", ("Go on?",)),
        ("update_plan_step", (1, "done", "")),
        ("send_update", ("Half way",)),
        ("tool_progress", ("t1", "50%")),
        ("complete", ("Tidied", None)),
    ]
