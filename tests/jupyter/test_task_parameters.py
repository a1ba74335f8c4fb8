"""Parameters in a %agent line's task: papermill's `$region` and `{year}` reach the model as
their values; prose with dollars and braces, unknown names, objects that are not plain
values and expressions stay as written, and no user __str__ or __format__ runs."""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_agent.jupyter.task_parameters import MAX_VALUE, expand

NS: dict[str, Any] = {
    "region": "north",
    "year": 2024,
    "rate": 0.25,
    "dry_run": True,
    "months": ["Jan", "Feb"],
}


@pytest.mark.parametrize(
    ("task", "expected"),
    [
        ("Summarise $region for {year}", "Summarise north for 2024"),
        ("Use a rate of $rate; dry run: {dry_run}", "Use a rate of 0.25; dry run: True"),
        ("Compare $months", "Compare Jan, Feb"),
        ("It costs $5 or $$region", "It costs $5 or $region"),
        ("Keep {{year}} literal", "Keep {year} literal"),
        ("Make a dict {'a': 1} and {unknown}", "Make a dict {'a': 1} and {unknown}"),
        ("Not evaluated: {len(months)} {year + 1}", "Not evaluated: {len(months)} {year + 1}"),
        ("$regional stays", "$regional stays"),
    ],
)
def test_plain_parameters_are_put_in_and_prose_stays(task, expected):
    assert expand(task, NS) == expected


class Loud(str):
    """A str subclass whose every conversion has a side effect."""

    calls = 0

    def __str__(self) -> str:
        Loud.calls += 1
        return "side effect"

    __format__ = __repr__ = lambda self, *a: self.__str__()  # type: ignore[assignment]


def test_objects_that_are_not_plain_values_are_never_converted():
    class Frame:
        def __str__(self) -> str:
            raise AssertionError("a user __str__ ran")

    ns = {"df": Frame(), "loud": Loud("x"), "items": [Loud("y")], "big": "x" * (MAX_VALUE + 1)}
    task = "Look at $df, {loud}, $items and $big"
    assert expand(task, ns) == task
    assert Loud.calls == 0


def test_a_huge_task_is_expanded_in_one_linear_pass():
    task = "$" * 200_000 + "{" * 200_000 + " $region"
    assert expand(task, NS).endswith(" north")
