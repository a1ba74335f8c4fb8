from __future__ import annotations

import pytest
from helpers import PLAN
from inline_snapshot import snapshot
from pydantic import ValidationError

from jupyter_agent.plans import Plan, PlanStep, Question


def test_plan_reads_the_seed_format_and_adds_a_format_version():
    plan = Plan.model_validate({"type": "plan", **PLAN})
    assert plan.steps[1].tools_needed == ["update_cell", "run_cell"]
    assert plan.format_version == "1.0"
    again = Plan.model_validate_json(plan.model_dump_json())
    assert again == plan


def test_plan_steps_are_sorted_and_must_be_unique():
    steps = [PlanStep(step_number=2, action="b"), PlanStep(step_number=1, action="a")]
    assert [s.action for s in Plan(goal="g", steps=steps).steps] == ["a", "b"]
    with pytest.raises(ValidationError, match="unique"):
        Plan(
            goal="g",
            steps=[PlanStep(step_number=1, action="a"), PlanStep(step_number=1, action="b")],
        )
    with pytest.raises(ValidationError):
        Plan(goal="g", steps=[])


def test_plan_markdown_escapes_pipes():
    plan = Plan(goal="g", steps=[PlanStep(step_number=1, action="a | b")], risks=["r"])
    text = plan.to_markdown()
    assert "a \\| b" in text
    assert "**Risks:**" in text
    assert text == snapshot("""\
**Goal:** g

| # | Action | Reason | Tools | Time |
|---|---|---|---|---|
| 1 | a \\| b |  |  |  |

**Risks:**
- r\
""")


QUESTION = {
    "type": "question",
    "question": "Should I also update the test files to match?",
    "context": "The tests still use the old API.",
    "severity": "minor",
    "options": [
        {"label": "Yes, update tests", "value": "update_tests", "description": "Update them"},
        {"label": "No, skip tests", "value": "skip_tests", "description": "Leave them"},
    ],
    "default": "skip_tests",
    "allow_custom": False,
}


def test_question_round_trips_and_resolves_by_value_or_label():
    q = Question.model_validate(QUESTION)
    assert Question.model_validate_json(q.model_dump_json()) == q
    assert q.resolve("update_tests")[0] == "update_tests"
    value, option = q.resolve("No, skip tests")
    assert value == "skip_tests" and option is not None and option.label == "No, skip tests"
    with pytest.raises(ValueError, match="not one of the options"):
        q.resolve("maybe")


def test_question_without_options_takes_free_text():
    q = Question(question="What is the table called?")
    assert q.free_text
    assert q.resolve("  sales_2024 ") == ("sales_2024", None)
    with pytest.raises(ValueError, match="empty"):
        q.resolve("   ")


def test_question_default_must_be_an_option():
    with pytest.raises(ValidationError, match="default"):
        Question.model_validate({**QUESTION, "default": "nope"})
