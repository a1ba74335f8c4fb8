"""Patterns from settings files match under a time bound, and a match that runs out of
time is *unsure*, never a quiet "no": a deny or ask rule then matches, an allow rule does
not (fail closed), and the reason says why."""

from __future__ import annotations

import time

from jupyter_agent.config.rules import McpServer, PathGlob, Regex, Rule, Rules
from jupyter_agent.permissions import Permission, ToolCall
from jupyter_agent.workspace.globs import glob_matches, glob_test
from jupyter_agent.workspace.patterns import Budget, compile_name, compile_regex

SLOW = r"(a|aa)+$"
"""Backtracks without end on a run of a's that does not end the line."""
SUBJECT = "a" * 40 + "!"


def read(path: str) -> ToolCall:
    return ToolCall(
        name="read_file",
        category="read",
        input={"path": path},
        summary=f"read {path}",
        role="planner",
        permissions=frozenset({Permission.READ_FILES}),
        paths=(path,),
    )


def test_a_match_that_runs_out_of_time_is_unsure():
    # A total far past one match's limit: on a loaded machine the slow match lasts longer
    # by the clock than the default total, and this is about the match's own limit.
    budget = Budget(total=600)
    assert budget.search(compile_regex(SLOW), SUBJECT) is None
    assert budget.unsure == [SLOW]
    assert budget.search(compile_regex("a+!"), SUBJECT) is True
    assert budget.unsure == [SLOW]


def test_a_budget_counts_computing_not_waiting():
    # A loaded machine keeps the deciding thread waiting for a core: that is not the
    # pattern's doing, and a plain pattern must still match.
    budget = Budget(total=0.05)
    time.sleep(0.2)
    assert budget.search(compile_regex(r"\.env\Z"), "folder/.env") is True
    assert budget.unsure == []


def test_a_spent_budget_tries_no_more_matches():
    spent = Budget(total=0)
    assert spent.search(compile_regex("a"), "a") is None
    assert spent.match(compile_name("read_*"), "read_file") is None
    assert glob_test("*.csv", ["data.csv"], budget=spent) is None


def test_an_unsure_match_counts_for_a_deny_rule_and_not_for_an_allow_rule():
    call = read(SUBJECT)
    allowed = Rules([Rule.allow(Regex(pattern=SLOW, field="path"))]).decide(call)
    assert allowed.decision == "ask" and allowed.reason == "no rule covers this call"
    denied = Rules([Rule.deny(Regex(pattern=SLOW, field="path"))]).decide(call)
    assert denied.decision == "deny"
    assert "took longer than 50 ms to match this call, so it counts as matching" in denied.reason


def test_globs_and_name_patterns_keep_their_meaning():
    assert glob_matches("*.CSV", ["data", "sales.csv"])  # names compare without case
    assert glob_matches("data/", ["data", "x.csv"])
    assert not glob_matches("build/", ["build"], is_dir=False)
    assert glob_matches("src/**/*.py", ["src", "a", "b", "m.py"])
    assert not glob_matches("src/*.py", ["src", "a", "m.py"])
    assert PathGlob(pattern="secrets/**").matches(read("secrets/x/y.txt"))
    mcp = McpServer(server="git*", tool="search_?ssues")
    call = ToolCall(
        name="mcp__github__search_issues",
        category="mcp",
        input={},
        summary="",
        role="actor",
        server="github",
        server_tool="search_issues",
    )
    assert mcp.matches(call)
    assert not McpServer(server="gitlab").matches(call)
