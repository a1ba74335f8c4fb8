"""Plans and questions: the two structured things an agent shows the user.

The shapes follow the project's plan and question formats (seed 000, Decisions 4
and 5), versioned with ``format_version`` so later formats can still read them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

FORMAT_VERSION = "1.0"

StepStatus = Literal["pending", "in_progress", "done", "skipped"]
Severity = Literal["critical", "major", "minor"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class PlanStep(_Model):
    step_number: int = Field(ge=1, description="1-based position of the step in the plan.")
    action: str = Field(description="What will be done, in one sentence.")
    reason: str = Field(default="", description="Why this step is needed.")
    tools_needed: list[str] = Field(default_factory=list, description="Tools the step will use.")
    estimated_time: str = Field(default="", description="Rough estimate, e.g. '~1 minute'.")


class Plan(_Model):
    type: Literal["plan"] = "plan"
    goal: str = Field(description="The user's objective in one or two sentences.")
    steps: list[PlanStep] = Field(min_length=1, description="Ordered steps.")
    estimated_total_time: str = Field(default="", description="Total time estimate.")
    risks: list[str] = Field(default_factory=list, description="What could go wrong.")
    prerequisites: list[str] = Field(
        default_factory=list, description="What the user must prepare first."
    )
    format_version: str = FORMAT_VERSION

    @field_validator("steps")
    @classmethod
    def _unique_step_numbers(cls, steps: list[PlanStep]) -> list[PlanStep]:
        numbers = [s.step_number for s in steps]
        if len(set(numbers)) != len(numbers):
            raise ValueError(f"step_number values must be unique, got {numbers}")
        return sorted(steps, key=lambda s: s.step_number)

    def step(self, number: int) -> PlanStep:
        for s in self.steps:
            if s.step_number == number:
                return s
        raise KeyError(number)

    def to_markdown(self) -> str:
        """The plan as a readable markdown table (for text frontends and prompts)."""
        lines = [f"**Goal:** {self.goal}", "", "| # | Action | Reason | Tools | Time |"]
        lines.append("|---|---|---|---|---|")
        for s in self.steps:
            cells = [str(s.step_number), s.action, s.reason, ", ".join(s.tools_needed)]
            cells.append(s.estimated_time)
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
        if self.estimated_total_time:
            lines += ["", f"**Estimated total:** {self.estimated_total_time}"]
        if self.risks:
            lines += ["", "**Risks:**", *(f"- {r}" for r in self.risks)]
        if self.prerequisites:
            lines += ["", "**Prerequisites:**", *(f"- {p}" for p in self.prerequisites)]
        return "\n".join(lines)


class StepProgress(_Model):
    """Live status of one plan step while an Actor works through it."""

    step_number: int
    status: StepStatus = "pending"
    note: str = ""


class QuestionOption(_Model):
    label: str = Field(description="Short button label.")
    value: str = Field(description="Machine value returned when chosen.")
    description: str = Field(default="", description="Longer explanation, shown as a tooltip.")


class Question(_Model):
    type: Literal["question"] = "question"
    question: str = Field(description="The question, clear and self-contained.")
    context: str = Field(default="", description="Why you ask / what you found.")
    severity: Severity = "minor"
    options: list[QuestionOption] = Field(
        default_factory=list,
        description="Choices shown as buttons. Leave empty to ask for free text.",
    )
    default: str | None = Field(default=None, description="Value of the recommended option.")
    allow_custom: bool = Field(default=False, description="Also accept a free-text answer.")
    format_version: str = FORMAT_VERSION

    @model_validator(mode="after")
    def _check(self) -> Question:
        values = [o.value for o in self.options]
        if len(set(values)) != len(values):
            raise ValueError(f"option values must be unique, got {values}")
        if self.default is not None and self.options and self.default not in values:
            raise ValueError(f"default {self.default!r} is not one of the option values {values}")
        return self

    @property
    def free_text(self) -> bool:
        """Whether a typed answer is accepted (always when there are no options)."""
        return self.allow_custom or not self.options

    def resolve(self, answer: str) -> tuple[str, QuestionOption | None]:
        """Match an answer to an option by value or label; raise ValueError if not acceptable."""
        text = str(answer).strip()
        for option in self.options:
            if text in (option.value, option.label):
                return option.value, option
        if not text:
            raise ValueError("the answer is empty")
        if self.free_text:
            return text, None
        choices = ", ".join(repr(o.value) for o in self.options)
        raise ValueError(f"{text!r} is not one of the options ({choices}) and free text is off")
